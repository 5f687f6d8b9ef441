/// The handshake facts TapKit uses, read from ClientHello, ServerHello (or HelloRetryRequest) and
/// EncryptedExtensions through one `ByteCursor`; everything else in a handshake is skipped. Parsing never traps:
/// a short or odd message gives what was read. Used by connection labels (HTTP/1's first bytes, CONNECT
/// tunnels), by decryption and by the QUIC Initial's CRYPTO stream.

/// Handshake message types (RFC 8446 section 4).
public enum HandshakeType {
    public static let clientHello: UInt8 = 1, serverHello: UInt8 = 2, encryptedExtensions: UInt8 = 8
    public static let finished: UInt8 = 20
    /// Bytes before a handshake message's body: its type and a 24-bit length.
    public static let headerSize = 4
}

/// Extension types (IANA TLS ExtensionType registry) read here.
enum ExtensionType {
    static let serverName: UInt16 = 0, alpn: UInt16 = 16, encryptThenMAC: UInt16 = 22, preSharedKey: UInt16 = 41
    static let earlyData: UInt16 = 42, supportedVersions: UInt16 = 43
    /// RFC 9001 section 8.2: QUIC's transport parameters ride in the TLS handshake.
    static let quicTransportParameters: UInt16 = 57
}

public struct ClientHelloFacts: Sendable, Hashable {
    /// The version field before the extensions (0x0303 for TLS 1.2 and 1.3 alike).
    public var legacyVersion: UInt16 = 0
    public var random: [UInt8] = []
    public var sessionID: [UInt8] = []
    public var cipherSuites: [UInt16] = []
    /// The first host name of server_name (RFC 6066).
    public var serverName: String?
    /// Protocols offered in application_layer_protocol_negotiation (RFC 7301), in the client's order.
    public var alpn: [String] = []
    /// supported_versions (RFC 8446 section 4.2.1), in the client's order; empty when not sent.
    public var supportedVersions: [UInt16] = []
    public var offersEarlyData = false
    public var offersPreSharedKey = false
    /// The quic_transport_parameters extension's value as sent (QUIC only; nil when absent).
    public var quicTransportParameters: [UInt8]?

    /// Nothing read: what a connection label shows for a ClientHello it could not read.
    public init() {}

    /// Reads a ClientHello's body (after the handshake header). nil when it ends before the extensions (the fixed
    /// fields are cut short). Extensions cut short (a ClientHello larger than the record it was read from) give
    /// the ones read whole.
    public init?(body cursor: inout ByteCursor) {
        guard let legacyVersion = cursor.u16(), let random = cursor.take(32), let sessionID = cursor.vector8(),
              let suites = cursor.vector16(), cursor.vector8() != nil else { return nil }
        self.legacyVersion = legacyVersion
        self.random = Array(random)
        self.sessionID = Array(sessionID)
        var suiteCursor = ByteCursor(suites)
        while let suite = suiteCursor.u16() { cipherSuites.append(suite) }
        guard let extensions = cursor.vector16OrRest() else { return }
        var fields = ByteCursor(extensions)
        while let type = fields.u16(), let data = fields.vector16() {
            var field = ByteCursor(data)
            switch type {
            case ExtensionType.serverName:  // a list of (type, name); type 0 is a host name
                guard let list = field.vector16OrRest() else { break }
                var names = ByteCursor(list)
                while let nameType = names.u8(), let name = names.vector16() {
                    if nameType == 0 { serverName = String(decoding: name, as: UTF8.self); break }
                }
            case ExtensionType.alpn: alpn = Self.protocolNames(&field)
            case ExtensionType.supportedVersions:
                guard let list = field.vector8() else { break }
                var versions = ByteCursor(list)
                while let version = versions.u16() { supportedVersions.append(version) }
            case ExtensionType.preSharedKey: offersPreSharedKey = true
            case ExtensionType.earlyData: offersEarlyData = true
            case ExtensionType.quicTransportParameters: quicTransportParameters = Array(data)
            default: break
            }
        }
    }

    /// A whole handshake message that should be a ClientHello (type, 24-bit length, body): nil when it is
    /// another message or its fixed fields are cut short. A length claiming more than is there reads what is
    /// there (a ClientHello spread over several QUIC packets or TLS records).
    public init?(message: UnsafeRawBufferPointer) {
        var cursor = ByteCursor(message)
        guard cursor.u8() == HandshakeType.clientHello, let length = cursor.u24() else { return nil }
        var body = ByteCursor(cursor.take(length) ?? cursor.rest())
        self.init(body: &body)
    }

    public init?(body: ArraySlice<UInt8>) {
        guard let facts = body.withUnsafeBytes({ bytes -> ClientHelloFacts? in
            var cursor = ByteCursor(bytes)
            return ClientHelloFacts(body: &cursor)
        }) else { return nil }
        self = facts
    }

    /// The ALPN extension's protocol names (RFC 7301: a two-byte list length, then one-byte-length names).
    static func protocolNames(_ field: inout ByteCursor) -> [String] {
        guard let listBytes = field.vector16OrRest() else { return [] }
        var list = ByteCursor(listBytes)
        var names: [String] = []
        while let name = list.vector8() { names.append(String(decoding: name, as: UTF8.self)) }
        return names
    }
}

public struct ServerHelloFacts: Sendable, Hashable {
    public var random: [UInt8] = []
    public var sessionID: [UInt8] = []
    public var cipherSuite: UInt16 = 0
    /// From supported_versions when present (TLS 1.3), else the legacy version field.
    public var version: UInt16 = 0
    public var isHelloRetryRequest = false
    public var alpn: String?
    public var encryptThenMAC = false
    public var acceptedPreSharedKey = false

    /// SHA-256 of "HelloRetryRequest" (RFC 8446 section 4.1.3): the random that marks an HRR.
    static let helloRetryRandom: [UInt8] = [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ]

    /// Reads a ServerHello's body; nil when it ends before the extensions.
    public init?(body cursor: inout ByteCursor) {
        guard let legacyVersion = cursor.u16(), let random = cursor.take(32), let sessionID = cursor.vector8(),
              let suite = cursor.u16(), cursor.u8() != nil else { return nil }
        self.random = Array(random)
        self.sessionID = Array(sessionID)
        cipherSuite = suite
        version = legacyVersion
        isHelloRetryRequest = self.random == Self.helloRetryRandom
        guard let extensions = cursor.vector16() else { return }
        var fields = ByteCursor(extensions)
        while let type = fields.u16(), let data = fields.vector16() {
            var field = ByteCursor(data)
            switch type {
            case ExtensionType.alpn: alpn = ClientHelloFacts.protocolNames(&field).first
            case ExtensionType.encryptThenMAC: encryptThenMAC = true
            case ExtensionType.preSharedKey: acceptedPreSharedKey = true
            case ExtensionType.supportedVersions: if let selected = field.u16() { version = selected }
            default: break
            }
        }
    }

    public init?(body: ArraySlice<UInt8>) {
        guard let facts = body.withUnsafeBytes({ bytes -> ServerHelloFacts? in
            var cursor = ByteCursor(bytes)
            return ServerHelloFacts(body: &cursor)
        }) else { return nil }
        self = facts
    }
}

public struct EncryptedExtensionsFacts: Sendable, Hashable {
    public var alpn: String?
    public var acceptedEarlyData = false
    /// The server's quic_transport_parameters extension value as sent (QUIC only; nil when absent).
    public var quicTransportParameters: [UInt8]?

    public init(body cursor: inout ByteCursor) {
        guard let extensions = cursor.vector16() else { return }
        var fields = ByteCursor(extensions)
        while let type = fields.u16(), let data = fields.vector16() {
            var field = ByteCursor(data)
            if type == ExtensionType.alpn { alpn = ClientHelloFacts.protocolNames(&field).first }
            if type == ExtensionType.earlyData { acceptedEarlyData = true }
            if type == ExtensionType.quicTransportParameters { quicTransportParameters = Array(data) }
        }
    }

    public init(body: ArraySlice<UInt8>) {
        self = body.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            return EncryptedExtensionsFacts(body: &cursor)
        }
    }
}

/// Collects handshake messages that span records (or several in one record) for one direction. Bounded: a message
/// longer than `maxMessageLength` is skipped whole (certificate chains are the usual big ones, and we need none).
public struct HandshakeAssembler {
    public let maxMessageLength: Int
    private var buffer: [UInt8] = []
    private var skipping = 0

    public init(maxMessageLength: Int) { self.maxMessageLength = maxMessageLength }

    /// Appends record bytes; calls `handle(type, body)` for each complete message.
    public mutating func append<Bytes: Collection>(_ bytes: Bytes, _ handle: (UInt8, ArraySlice<UInt8>) -> Void)
    where Bytes.Element == UInt8 {
        var input = bytes[...]
        if skipping > 0 {
            let dropped = min(skipping, input.count)
            skipping -= dropped
            input = input.dropFirst(dropped)
        }
        buffer += input
        var start = 0
        while let (type, length) = header(at: start) {
            let bodyStart = start + HandshakeType.headerSize
            if length > maxMessageLength {
                // Keep the type so the caller knows it happened, skip the body.
                handle(type, [])
                let available = buffer.count - bodyStart
                if available >= length {
                    start = bodyStart + length
                    continue
                }
                skipping = length - available
                start = buffer.count
                break
            }
            guard buffer.count - bodyStart >= length else { break }
            handle(type, buffer[bodyStart..<(bodyStart + length)])
            start = bodyStart + length
        }
        buffer.removeFirst(start)
    }

    /// The type and length of the message whose header starts at `start`, when the header is whole.
    private func header(at start: Int) -> (UInt8, Int)? {
        buffer.withUnsafeBytes { all in
            var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: all[start...]))
            guard let type = cursor.u8(), let length = cursor.u24() else { return nil }
            return (type, length)
        }
    }
}
