/// QUIC transport parameters (RFC 9000 section 18) as each side sent them in its TLS handshake, in the order sent:
/// the client's in its ClientHello (readable by anyone), the server's in its EncryptedExtensions (readable with
/// the Handshake keys). What Wireshark shows under "TLS Extension: quic_transport_parameters".
public struct QUICTransportParameters: Sendable, Hashable {
    public var client: [QUICTransportParameter]
    /// nil when the server's EncryptedExtensions was not read (its Handshake packets had no keys).
    public var server: [QUICTransportParameter]?

    public init(client: [QUICTransportParameter], server: [QUICTransportParameter]?) {
        self.client = client
        self.server = server
    }
}

/// One transport parameter: its id and its value read by the encoding its id gives.
public struct QUICTransportParameter: Sendable, Hashable, CustomStringConvertible {
    public enum Value: Sendable, Hashable {
        /// A variable-length integer (limits, timeouts).
        case integer(UInt64)
        /// Present without a value: the flag is set (disable_active_migration, grease_quic_bit).
        case flag
        /// Connection IDs, the stateless reset token, and parameters TapKit does not know (as sent).
        case bytes([UInt8])
        /// preferred_address (RFC 9000 section 18.2).
        case preferredAddress(ipv4: [UInt8], ipv4Port: UInt16, ipv6: [UInt8], ipv6Port: UInt16, connectionID: [UInt8],
                              resetToken: [UInt8])
        /// version_information (RFC 9368 section 3).
        case versionInformation(chosen: UInt32, available: [UInt32])
    }

    public var id: UInt64
    public var value: Value

    public init(id: UInt64, value: Value) {
        self.id = id
        self.value = value
    }

    /// How a known parameter's value is encoded; nil for one TapKit does not know (its bytes are shown as sent).
    public enum Encoding: Sendable { case integer, flag, bytes, preferredAddress, versionInformation }

    /// RFC 9000 section 18.2, RFC 9221 (max_datagram_frame_size), RFC 9287 (grease_quic_bit), RFC 9368
    /// (version_information): the names Wireshark and the RFCs use, with the unit of the two that are times.
    public static let known: [UInt64: (name: String, encoding: Encoding, unit: String)] = [
        0x00: ("original_destination_connection_id", .bytes, ""), 0x01: ("max_idle_timeout", .integer, " ms"),
        0x02: ("stateless_reset_token", .bytes, ""), 0x03: ("max_udp_payload_size", .integer, ""),
        0x04: ("initial_max_data", .integer, ""), 0x05: ("initial_max_stream_data_bidi_local", .integer, ""),
        0x06: ("initial_max_stream_data_bidi_remote", .integer, ""), 0x07: ("initial_max_stream_data_uni", .integer, ""),
        0x08: ("initial_max_streams_bidi", .integer, ""), 0x09: ("initial_max_streams_uni", .integer, ""),
        0x0a: ("ack_delay_exponent", .integer, ""), 0x0b: ("max_ack_delay", .integer, " ms"),
        0x0c: ("disable_active_migration", .flag, ""), 0x0d: ("preferred_address", .preferredAddress, ""),
        0x0e: ("active_connection_id_limit", .integer, ""), 0x0f: ("initial_source_connection_id", .bytes, ""),
        0x10: ("retry_source_connection_id", .bytes, ""), 0x11: ("version_information", .versionInformation, ""),
        0x20: ("max_datagram_frame_size", .integer, ""), 0x2ab2: ("grease_quic_bit", .flag, ""),
    ]

    /// The parameter's name; reserved ids (31 × N + 27, RFC 9000 section 18.1) are GREASE, others their id in hex.
    public var name: String {
        if let known = Self.known[id] { return known.name }
        return id % 31 == 27 ? "GREASE 0x" + String(id, radix: 16) : "0x" + String(id, radix: 16)
    }

    /// `max_idle_timeout 30000 ms`, `initial_source_connection_id 79bb40167b1fe9e0`, `disable_active_migration`.
    public var description: String {
        switch value {
        case .integer(let number): return "\(name) \(number)\(Self.known[id]?.unit ?? "")"
        case .flag: return name
        case .bytes(let bytes): return bytes.isEmpty ? "\(name) (empty)" : "\(name) \(Self.hex(bytes))"
        case .preferredAddress(let ipv4, let ipv4Port, let ipv6, let ipv6Port, let connectionID, let resetToken):
            let v4 = ipv4.map(String.init).joined(separator: ".")
            let v6 = stride(from: 0, to: ipv6.count, by: 2).map { Self.hex(Array(ipv6[$0..<min($0 + 2, ipv6.count)])) }
                .joined(separator: ":")
            return "\(name) \(v4):\(ipv4Port) [\(v6)]:\(ipv6Port) cid \(Self.hex(connectionID)) token \(Self.hex(resetToken))"
        case .versionInformation(let chosen, let available):
            let list = available.map { "0x" + String($0, radix: 16) }.joined(separator: ", ")
            return "\(name) chosen 0x\(String(chosen, radix: 16)) available \(list)"
        }
    }

    /// Lower-case hex, two digits a byte, as Wireshark shows connection IDs.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
