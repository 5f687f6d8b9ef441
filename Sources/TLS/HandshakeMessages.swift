/// The handshake facts we need, read from ClientHello, ServerHello (or HelloRetryRequest) and EncryptedExtensions.
/// Everything else in a handshake is skipped. Parsing never traps: a short or odd message gives what was read.
struct ClientHelloFacts: Sendable, Hashable {
    var random: [UInt8] = []
    var sessionID: [UInt8] = []
    var serverName: String?
    var alpn: [String] = []
    var offersEarlyData = false
    var offersPreSharedKey = false

    init?(body: ArraySlice<UInt8>) {
        var reader = ByteReader(body)
        guard reader.u16() != nil, let random = reader.take(32), let sessionID = reader.vector8(),
              reader.vector16() != nil, reader.vector8() != nil else { return nil }
        self.random = Array(random)
        self.sessionID = Array(sessionID)
        guard let extensions = reader.vector16() else { return }
        var fields = ByteReader(extensions)
        while let type = fields.u16(), let data = fields.vector16() {
            var field = ByteReader(data)
            switch type {
            case 0:  // server_name (RFC 6066): a list of (type, name); type 0 is a host name
                if var names = field.vector16().map(ByteReader.init) {
                    while let nameType = names.u8(), let name = names.vector16() {
                        if nameType == 0 { serverName = String(decoding: name, as: UTF8.self); break }
                    }
                }
            case 16:  // application_layer_protocol_negotiation (RFC 7301)
                alpn = Self.protocolNames(&field)
            case 41: offersPreSharedKey = true
            case 42: offersEarlyData = true
            default: break
            }
        }
    }

    static func protocolNames(_ field: inout ByteReader) -> [String] {
        guard var list = field.vector16().map(ByteReader.init) else { return [] }
        var names: [String] = []
        while let name = list.vector8() { names.append(String(decoding: name, as: UTF8.self)) }
        return names
    }
}

struct ServerHelloFacts: Sendable, Hashable {
    var random: [UInt8] = []
    var sessionID: [UInt8] = []
    var cipherSuite: UInt16 = 0
    /// From supported_versions when present (TLS 1.3), else the legacy version field.
    var version: UInt16 = 0
    var isHelloRetryRequest = false
    var alpn: String?
    var encryptThenMAC = false
    var acceptedPreSharedKey = false

    /// SHA-256 of "HelloRetryRequest" (RFC 8446 section 4.1.3): the random that marks an HRR.
    static let helloRetryRandom: [UInt8] = [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ]

    init?(body: ArraySlice<UInt8>) {
        var reader = ByteReader(body)
        guard let legacyVersion = reader.u16(), let random = reader.take(32), let sessionID = reader.vector8(),
              let suite = reader.u16(), reader.u8() != nil else { return nil }
        self.random = Array(random)
        self.sessionID = Array(sessionID)
        cipherSuite = suite
        version = legacyVersion
        isHelloRetryRequest = self.random == Self.helloRetryRandom
        guard let extensions = reader.vector16() else { return }
        var fields = ByteReader(extensions)
        while let type = fields.u16(), let data = fields.vector16() {
            var field = ByteReader(data)
            switch type {
            case 16: alpn = ClientHelloFacts.protocolNames(&field).first
            case 22: encryptThenMAC = true
            case 41: acceptedPreSharedKey = true
            case 43: if let selected = field.u16() { version = selected }
            default: break
            }
        }
    }
}

struct EncryptedExtensionsFacts: Sendable, Hashable {
    var alpn: String?
    var acceptedEarlyData = false

    init(body: ArraySlice<UInt8>) {
        var reader = ByteReader(body)
        guard let extensions = reader.vector16() else { return }
        var fields = ByteReader(extensions)
        while let type = fields.u16(), let data = fields.vector16() {
            var field = ByteReader(data)
            if type == 16 { alpn = ClientHelloFacts.protocolNames(&field).first }
            if type == 42 { acceptedEarlyData = true }
        }
    }
}

/// Collects handshake messages that span records (or several in one record) for one direction. Bounded: a message
/// longer than `maxMessageLength` is skipped whole (certificate chains are the usual big ones, and we need none).
struct HandshakeAssembler {
    let maxMessageLength: Int
    private var buffer: [UInt8] = []
    private var skipping = 0

    init(maxMessageLength: Int) { self.maxMessageLength = maxMessageLength }

    /// Appends record bytes; calls `handle(type, body)` for each complete message.
    mutating func append<Bytes: Collection>(_ bytes: Bytes, _ handle: (UInt8, ArraySlice<UInt8>) -> Void)
    where Bytes.Element == UInt8 {
        var input = bytes[...]
        if skipping > 0 {
            let dropped = min(skipping, input.count)
            skipping -= dropped
            input = input.dropFirst(dropped)
        }
        buffer += input
        var start = 0
        while buffer.count - start >= 4 {
            let type = buffer[start]
            let length = Int(buffer[start + 1]) << 16 | Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
            if length > maxMessageLength {
                // Keep the type so the caller knows it happened, skip the body.
                handle(type, [])
                let available = buffer.count - start - 4
                if available >= length {
                    start += 4 + length
                    continue
                }
                skipping = length - available
                start = buffer.count
                break
            }
            guard buffer.count - start >= 4 + length else { break }
            handle(type, buffer[(start + 4)..<(start + 4 + length)])
            start += 4 + length
        }
        buffer.removeFirst(start)
    }
}
