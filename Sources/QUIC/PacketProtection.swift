import TLS

/// One direction's packet protection at one encryption level (RFC 9001 section 5): the AEAD keyed once, the IV
/// the packet number is mixed into, and the header protection key. Keys come from a secret by HKDF-Expand-Label
/// with "quic key", "quic iv" and "quic hp" ("quicv2 ..." for v2), by libcrypto's TLS 1.3 KDF.
final class PacketProtection: @unchecked Sendable {
    /// What a TLS 1.3 cipher suite means to QUIC: the AEAD, its key length and the HKDF hash.
    struct Suite: Sendable, Hashable {
        var id: UInt16
        var chaCha: Bool
        var keyLength: Int
        var sha384: Bool
        var secretLength: Int { sha384 ? 48 : 32 }

        /// Initial packets always use TLS_AES_128_GCM_SHA256 (RFC 9001 section 5.2).
        static let initial = Suite(id: 0x1301, chaCha: false, keyLength: 16, sha384: false)

        /// The three AEAD suites QUIC uses with TLS 1.3; nil for others (CCM is not supported).
        init?(id: UInt16) {
            guard let suite = CipherSuite.suite(id) else { return nil }
            switch suite.protection {
            case .aesGCM(let keyLength) where id >> 8 == 0x13:
                self.init(id: id, chaCha: false, keyLength: keyLength, sha384: suite.usesSHA384)
            case .chaCha20Poly1305 where id == 0x1303:
                self.init(id: id, chaCha: true, keyLength: 32, sha384: false)
            default:
                return nil
            }
        }

        private init(id: UInt16, chaCha: Bool, keyLength: Int, sha384: Bool) {
            self.id = id
            self.chaCha = chaCha
            self.keyLength = keyLength
            self.sha384 = sha384
        }
    }

    static let tagLength = 16
    let secret: [UInt8]
    let suite: Suite
    let version: QUICVersion
    let key: [UInt8]
    let iv: [UInt8]
    let headerKey: [UInt8]
    private let aead: RecordCipher
    let header: HeaderProtection

    /// nil when libcrypto refuses the derived keys (a secret of the wrong length for the suite).
    init?(secret: [UInt8], suite: Suite, version: QUICVersion, headerProtection: HeaderProtection? = nil,
          headerKey: [UInt8]? = nil) {
        guard secret.count == suite.secretLength else { return nil }
        func expand(_ label: String, _ length: Int) -> [UInt8] {
            KeyDerivation.expandLabel(secret: secret, label: version.labelPrefix + label, length: length, sha384: suite.sha384)
        }
        let key = expand("key", suite.keyLength), iv = expand("iv", 12)
        let headerKey = headerKey ?? expand("hp", suite.keyLength)
        guard let aead = RecordCipher(suite.chaCha ? .chaCha20Poly1305 : .aesGCM(keyLength: suite.keyLength), key: key),
              let header = headerProtection ?? HeaderProtection(key: headerKey, chaCha: suite.chaCha) else { return nil }
        self.secret = secret
        self.suite = suite
        self.version = version
        self.key = key
        self.iv = iv
        self.headerKey = headerKey
        self.aead = aead
        self.header = header
    }

    /// The Initial keys of one side (RFC 9001 section 5.2): from the client's first Destination Connection ID.
    static func initial(dcid: UnsafeRawBufferPointer, version: QUICVersion, client: Bool) -> PacketProtection? {
        let initialSecret = KeyDerivation.extract(salt: version.initialSalt, inputKeyMaterial: dcid, sha384: false)
        let secret = KeyDerivation.expandLabel(secret: initialSecret, label: client ? "client in" : "server in", length: 32,
                                               sha384: false)
        return PacketProtection(secret: secret, suite: .initial, version: version)
    }

    /// The keys after a key update (RFC 9001 section 6.1): the next secret by "quic ku"; header protection stays.
    func next() -> PacketProtection? {
        let nextSecret = KeyDerivation.expandLabel(secret: secret, label: version.labelPrefix + "ku",
                                                   length: suite.secretLength, sha384: suite.sha384)
        return PacketProtection(secret: nextSecret, suite: suite, version: version, headerProtection: header,
                                headerKey: headerKey)
    }

    /// Opens a packet's payload (ciphertext and tag) with the unprotected header as associated data, into
    /// `plaintext` (its storage reused). False when the tag does not verify: the wrong keys, or a damaged packet.
    func open(header: UnsafeRawBufferPointer, packetNumber: UInt64, payload: UnsafeRawBufferPointer,
              into plaintext: inout [UInt8]) -> Bool {
        guard payload.count >= Self.tagLength else { return false }
        // The nonce: the IV with the packet number XORed into its last eight bytes (RFC 9001 section 5.3).
        var nonce: (UInt64, UInt32) = (0, 0)
        return withUnsafeMutableBytes(of: &nonce) { nonceBytes in
            for index in 0..<12 { nonceBytes[index] = iv[index] }
            for index in 0..<8 { nonceBytes[11 - index] ^= UInt8(truncatingIfNeeded: packetNumber >> (8 * UInt64(index))) }
            let split = payload.count - Self.tagLength
            return aead.open(nonce: UnsafeRawBufferPointer(rebasing: nonceBytes[0..<12]), additionalData: header,
                             ciphertext: UnsafeRawBufferPointer(rebasing: payload[..<split]),
                             tag: UnsafeRawBufferPointer(rebasing: payload[split...]), into: &plaintext)
        }
    }
}
