/// The cipher suites we can decrypt, and how each protects records.
public struct CipherSuite: Sendable, Hashable {
    public enum Protection: Sendable, Hashable {
        case aesGCM(keyLength: Int)
        case chaCha20Poly1305
        /// AES in CBC mode with an HMAC (TLS 1.2 only); `macLength` is the hash's output length.
        case aesCBC(keyLength: Int, mac: MACHash)
    }

    public enum MACHash: Sendable, Hashable {
        case sha1, sha256, sha384
        var length: Int { self == .sha1 ? 20 : self == .sha256 ? 32 : 48 }
    }

    public var id: UInt16
    public var name: String
    public var protection: Protection
    /// The hash of the TLS 1.2 PRF or the TLS 1.3 HKDF: SHA-384 for suites named ..._SHA384, else SHA-256.
    public var usesSHA384: Bool

    /// The IANA name, or the number in hex for suites we do not know.
    public static func name(of id: UInt16) -> String {
        known[id]?.name ?? "0x" + String(id, radix: 16, uppercase: true).leftPadded(to: 4)
    }

    public static func suite(_ id: UInt16) -> CipherSuite? { known[id] }

    static let known: [UInt16: CipherSuite] = {
        var table: [UInt16: CipherSuite] = [:]
        func add(_ id: UInt16, _ name: String, _ protection: Protection) {
            table[id] = CipherSuite(id: id, name: name, protection: protection, usesSHA384: name.hasSuffix("SHA384"))
        }
        add(0x1301, "TLS_AES_128_GCM_SHA256", .aesGCM(keyLength: 16))
        add(0x1302, "TLS_AES_256_GCM_SHA384", .aesGCM(keyLength: 32))
        add(0x1303, "TLS_CHACHA20_POLY1305_SHA256", .chaCha20Poly1305)
        for (prefix, base) in [("ECDHE_ECDSA", 0xC02B), ("ECDHE_RSA", 0xC02F)] {
            add(UInt16(base), "TLS_\(prefix)_WITH_AES_128_GCM_SHA256", .aesGCM(keyLength: 16))
            add(UInt16(base + 1), "TLS_\(prefix)_WITH_AES_256_GCM_SHA384", .aesGCM(keyLength: 32))
        }
        add(0x009C, "TLS_RSA_WITH_AES_128_GCM_SHA256", .aesGCM(keyLength: 16))
        add(0x009D, "TLS_RSA_WITH_AES_256_GCM_SHA384", .aesGCM(keyLength: 32))
        add(0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", .aesGCM(keyLength: 16))
        add(0x009F, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", .aesGCM(keyLength: 32))
        add(0xCCA8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", .chaCha20Poly1305)
        add(0xCCA9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", .chaCha20Poly1305)
        add(0xCCAA, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", .chaCha20Poly1305)
        let cbc: [(UInt16, String, Int, MACHash)] = [
            (0xC009, "ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 16, .sha1), (0xC00A, "ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            (0xC013, "ECDHE_RSA_WITH_AES_128_CBC_SHA", 16, .sha1), (0xC014, "ECDHE_RSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            (0xC023, "ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            (0xC024, "ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", 32, .sha384),
            (0xC027, "ECDHE_RSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            (0xC028, "ECDHE_RSA_WITH_AES_256_CBC_SHA384", 32, .sha384),
            (0x002F, "RSA_WITH_AES_128_CBC_SHA", 16, .sha1), (0x0035, "RSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            (0x003C, "RSA_WITH_AES_128_CBC_SHA256", 16, .sha256), (0x003D, "RSA_WITH_AES_256_CBC_SHA256", 32, .sha256),
            (0x0033, "DHE_RSA_WITH_AES_128_CBC_SHA", 16, .sha1), (0x0039, "DHE_RSA_WITH_AES_256_CBC_SHA", 32, .sha1),
            (0x0067, "DHE_RSA_WITH_AES_128_CBC_SHA256", 16, .sha256),
            (0x006B, "DHE_RSA_WITH_AES_256_CBC_SHA256", 32, .sha256),
        ]
        for (id, name, keyLength, mac) in cbc { add(id, "TLS_" + name, .aesCBC(keyLength: keyLength, mac: mac)) }
        return table
    }()
}

/// Protocol versions as the TLS line shows them.
public enum TLSVersionName {
    public static func name(_ version: UInt16) -> String {
        switch version {
        case 0x0300: return "SSL 3.0"
        case 0x0301: return "TLS 1.0"
        case 0x0302: return "TLS 1.1"
        case 0x0303: return "TLS 1.2"
        case 0x0304: return "TLS 1.3"
        default: return "0x" + String(version, radix: 16).leftPadded(to: 4)
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
