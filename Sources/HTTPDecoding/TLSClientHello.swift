/// Reads the server name (SNI, RFC 6066) and offered application protocols (ALPN, RFC 7301) from the first TLS
/// record of a connection. Nothing else of TLS is decoded.
package struct TLSClientHello: Sendable, Hashable {
    package var serverName: String?
    package var alpn: [String]

    package enum Outcome {
        /// More bytes are needed: the record is not complete yet.
        case needMore
        /// Not a TLS handshake record.
        case notTLS
        case clientHello(TLSClientHello)
    }

    /// Whether the first bytes of a stream look like a TLS handshake record (type 22, version 3.x).
    static func looksLikeTLS(_ bytes: ArraySlice<UInt8>) -> Bool? {
        guard let first = bytes.first else { return nil }
        if first != 0x16 { return false }
        guard bytes.count >= 2 else { return nil }
        return bytes[bytes.startIndex + 1] == 0x03
    }

    package static func parse(_ bytes: [UInt8]) -> Outcome {
        guard bytes.count >= 5 else { return .needMore }
        guard bytes[0] == 0x16, bytes[1] == 0x03 else { return .notTLS }
        let recordLength = Int(bytes[3]) << 8 | Int(bytes[4])
        guard bytes.count >= 5 + recordLength else { return .needMore }
        var reader = Reader(bytes: bytes[5..<(5 + recordLength)])
        // A ClientHello larger than one record is cut here; the fields read below come early in it anyway.
        guard reader.u8() == 1, reader.skip(3), reader.skip(2 + 32),  // type, length, version, random
              let sessionLength = reader.u8(), reader.skip(Int(sessionLength)),
              let suitesLength = reader.u16(), reader.skip(Int(suitesLength)),
              let compressionLength = reader.u8(), reader.skip(Int(compressionLength)) else {
            return .clientHello(TLSClientHello(serverName: nil, alpn: []))
        }
        var hello = TLSClientHello(serverName: nil, alpn: [])
        guard let extensionsLength = reader.u16() else { return .clientHello(hello) }
        var extensions = Reader(bytes: reader.take(Int(extensionsLength)) ?? reader.rest())
        while let type = extensions.u16(), let length = extensions.u16(), let body = extensions.take(Int(length)) {
            var field = Reader(bytes: body)
            switch type {
            case 0:  // server_name: list of (type, name); type 0 is a host name
                _ = field.u16()
                while let nameType = field.u8(), let nameLength = field.u16(), let name = field.take(Int(nameLength)) {
                    if nameType == 0 { hello.serverName = String(decoding: name, as: UTF8.self); break }
                }
            case 16:  // application_layer_protocol_negotiation
                _ = field.u16()
                while let protocolLength = field.u8(), let name = field.take(Int(protocolLength)) {
                    hello.alpn.append(String(decoding: name, as: UTF8.self))
                }
            default:
                break
            }
        }
        return .clientHello(hello)
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>
        mutating func u8() -> UInt8? { bytes.popFirst() }
        mutating func u16() -> UInt16? {
            guard bytes.count >= 2 else { return nil }
            let value = UInt16(bytes[bytes.startIndex]) << 8 | UInt16(bytes[bytes.startIndex + 1])
            bytes = bytes.dropFirst(2)
            return value
        }
        mutating func skip(_ count: Int) -> Bool { take(count) != nil }
        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard bytes.count >= count else { return nil }
            let part = bytes.prefix(count)
            bytes = bytes.dropFirst(count)
            return part
        }
        mutating func rest() -> ArraySlice<UInt8> {
            let all = bytes
            bytes = bytes.suffix(0)
            return all
        }
    }
}
