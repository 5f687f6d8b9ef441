import Foundation

/// The keys and sequence number that protect one direction's records, and the one operation on them: open a
/// record. Sealing is never needed (we only read).
struct RecordProtection {
    enum Scheme {
        /// TLS 1.3 (RFC 8446 section 5.2): nonce = iv XOR sequence, additional data = the record header.
        case tls13
        /// TLS 1.2 AEAD: GCM with an 8-byte explicit nonce (RFC 5288), ChaCha20-Poly1305 like TLS 1.3 (RFC 7905).
        case tls12AEAD
        /// TLS 1.2 CBC with HMAC, MAC-then-encrypt (RFC 5246 6.2.3.2) or encrypt-then-MAC (RFC 7366).
        case tls12CBC(encryptThenMAC: Bool)
    }

    enum Outcome {
        /// `bytes` is a part of the buffer given to `open`: use it before the next record is opened into it.
        case plaintext(contentType: UInt8, bytes: ArraySlice<UInt8>)
        /// The tag or MAC did not verify (wrong key, or corrupted bytes).
        case authenticationFailed
        /// The record is too short or misshapen for this cipher.
        case malformed(MalformedRecord)
    }

    let suite: CipherSuite
    let scheme: Scheme
    /// The key's bytes (the fuzz harness seals records with them); `cipher` opens records, keyed once for all.
    let key: [UInt8]
    let cipher: RecordCipher
    /// 12 bytes for TLS 1.3 and ChaCha20; the 4-byte salt for TLS 1.2 GCM; unused for CBC.
    let iv: [UInt8]
    /// The record MAC of TLS 1.2 CBC suites, keyed once, and its key (the fuzz harness seals records with it).
    let mac: RecordMAC?
    let macKey: [UInt8]
    var sequence: UInt64 = 0

    static let tagLength = 16

    /// TLS 1.3 keys from a traffic secret (RFC 8446 section 7.3).
    static func tls13(secret: [UInt8], suite: CipherSuite) -> RecordProtection? {
        let algorithm: RecordCipher.Algorithm, keyLength: Int
        switch suite.protection {
        case .aesGCM(let length): (algorithm, keyLength) = (.aesGCM(keyLength: length), length)
        case .chaCha20Poly1305: (algorithm, keyLength) = (.chaCha20Poly1305, 32)
        case .aesCBC: return nil
        }
        let key = KeyDerivation.expandLabel(secret: secret, label: "key", length: keyLength, sha384: suite.usesSHA384)
        let iv = KeyDerivation.expandLabel(secret: secret, label: "iv", length: 12, sha384: suite.usesSHA384)
        guard let cipher = RecordCipher(algorithm, key: key) else { return nil }
        return RecordProtection(suite: suite, scheme: .tls13, key: key, cipher: cipher, iv: iv, mac: nil, macKey: [])
    }

    /// The next TLS 1.3 application traffic secret after a KeyUpdate (RFC 8446 section 7.2).
    static func nextTrafficSecret(_ secret: [UInt8], suite: CipherSuite) -> [UInt8] {
        KeyDerivation.expandLabel(secret: secret, label: "traffic upd", length: suite.usesSHA384 ? 48 : 32,
                                  sha384: suite.usesSHA384)
    }

    /// TLS 1.2 keys for one side from the master secret (RFC 5246 section 6.3).
    static func tls12(masterSecret: [UInt8], clientRandom: [UInt8], serverRandom: [UInt8], suite: CipherSuite,
                      forClient: Bool, encryptThenMAC: Bool) -> RecordProtection? {
        let macLength: Int, keyLength: Int, ivLength: Int
        let scheme: Scheme, algorithm: RecordCipher.Algorithm
        switch suite.protection {
        case .aesGCM(let length):
            (macLength, keyLength, ivLength, scheme, algorithm) = (0, length, 4, .tls12AEAD, .aesGCM(keyLength: length))
        case .chaCha20Poly1305:
            (macLength, keyLength, ivLength, scheme, algorithm) = (0, 32, 12, .tls12AEAD, .chaCha20Poly1305)
        case .aesCBC(let length, let mac):
            (macLength, keyLength, ivLength, scheme, algorithm) =
                (mac.length, length, 16, .tls12CBC(encryptThenMAC: encryptThenMAC), .aesCBC(keyLength: length))
        }
        let block = KeyDerivation.prf12(secret: masterSecret, label: "key expansion", seed: serverRandom + clientRandom,
                                        length: 2 * (macLength + keyLength + ivLength), sha384: suite.usesSHA384)
        func part(_ index: Int, _ base: Int, _ length: Int) -> [UInt8] {
            Array(block[(base + index * length)..<(base + (index + 1) * length)])
        }
        let side = forClient ? 0 : 1
        let macKey = part(side, 0, macLength)
        let key = part(side, 2 * macLength, keyLength)
        let iv = part(side, 2 * macLength + 2 * keyLength, ivLength)
        guard let cipher = RecordCipher(algorithm, key: key) else { return nil }
        var mac: RecordMAC?
        if case .aesCBC(_, let hash) = suite.protection {
            guard let keyed = RecordMAC(hash, key: macKey) else { return nil }
            mac = keyed
        }
        return RecordProtection(suite: suite, scheme: scheme, key: key, cipher: cipher, iv: iv, mac: mac, macKey: macKey)
    }

    /// Opens one record with the current sequence number (the caller advances it), decrypting into `plaintext`,
    /// a buffer the caller keeps from record to record.
    func open(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer, into plaintext: inout [UInt8]) -> Outcome {
        switch scheme {
        case .tls13: return open13(type: type, version: version, fragment: fragment, into: &plaintext)
        case .tls12AEAD: return open12AEAD(type: type, version: version, fragment: fragment, into: &plaintext)
        case .tls12CBC(let encryptThenMAC):
            return openCBC(type: type, version: version, fragment: fragment, encryptThenMAC: encryptThenMAC,
                           into: &plaintext)
        }
    }

    /// The nonce of the record with the current sequence number: the IV with the sequence XORed into its end.
    private func sequenceNonce() -> ShortBytes {
        var nonce = ShortBytes(iv)
        nonce.xorBigEndian(sequence, endingAt: iv.count)
        return nonce
    }

    private func aeadOpen(nonce: ShortBytes, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                          additionalData: ShortBytes, into plaintext: inout [UInt8]) -> Bool {
        nonce.withBytes { nonce in
            additionalData.withBytes { additionalData in
                cipher.open(nonce: nonce, additionalData: additionalData, ciphertext: ciphertext, tag: tag,
                            into: &plaintext)
            }
        }
    }

    private func open13(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer,
                        into plaintext: inout [UInt8]) -> Outcome {
        guard fragment.count >= Self.tagLength + 1 else {
            return .malformed(.tooShort(length: fragment.count, needs: Self.tagLength + 1, scheme: "TLS 1.3"))
        }
        var header = ShortBytes()
        header.appendHeader(type: type, version: version, length: fragment.count)
        let split = fragment.count - Self.tagLength
        guard aeadOpen(nonce: sequenceNonce(), ciphertext: UnsafeRawBufferPointer(rebasing: fragment[..<split]),
                       tag: UnsafeRawBufferPointer(rebasing: fragment[split...]), additionalData: header,
                       into: &plaintext) else {
            return .authenticationFailed
        }
        // TLSInnerPlaintext: content, the real type, then zero padding.
        guard let typeIndex = plaintext.lastIndex(where: { $0 != 0 }) else {
            return .malformed(.allPadding)
        }
        return .plaintext(contentType: plaintext[typeIndex], bytes: plaintext[..<typeIndex])
    }

    private func additionalData12(type: UInt8, version: UInt16, length: Int) -> ShortBytes {
        var data = ShortBytes(repeating: 0, count: 8)
        data.xorBigEndian(sequence, endingAt: 8)
        data.appendHeader(type: type, version: version, length: length)
        return data
    }

    private func open12AEAD(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer,
                            into plaintext: inout [UInt8]) -> Outcome {
        let explicitNonce = iv.count == 4 ? 8 : 0
        guard fragment.count >= explicitNonce + Self.tagLength else {
            return .malformed(.tooShort(length: fragment.count, needs: explicitNonce + Self.tagLength,
                                        scheme: "TLS 1.2 AEAD"))
        }
        var nonce: ShortBytes
        if explicitNonce > 0 {
            nonce = ShortBytes(iv)
            for byte in fragment[0..<8] { nonce.append(byte) }
        } else {
            nonce = sequenceNonce()
        }
        let split = fragment.count - Self.tagLength
        let plaintextLength = split - explicitNonce
        guard aeadOpen(nonce: nonce, ciphertext: UnsafeRawBufferPointer(rebasing: fragment[explicitNonce..<split]),
                       tag: UnsafeRawBufferPointer(rebasing: fragment[split...]),
                       additionalData: additionalData12(type: type, version: version, length: plaintextLength),
                       into: &plaintext) else {
            return .authenticationFailed
        }
        return .plaintext(contentType: type, bytes: plaintext[...])
    }

    private func authenticationCode(_ header: ShortBytes, _ body: UnsafeRawBufferPointer) -> [UInt8] {
        guard let mac else { return [] }
        return header.withBytes { mac.authenticate($0, body) }
    }

    private func openCBC(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer, encryptThenMAC: Bool,
                         into decrypted: inout [UInt8]) -> Outcome {
        guard case .aesCBC(_, let hash) = suite.protection else { return .malformed(.notCBCSuite) }
        let macLength = hash.length
        let blocksEnd = encryptThenMAC ? fragment.count - macLength : fragment.count
        guard blocksEnd >= 32, (blocksEnd - 16) % 16 == 0 else {
            return .malformed(.notWholeBlocks(length: fragment.count, withMAC: encryptThenMAC))
        }
        if encryptThenMAC {
            let expected = authenticationCode(additionalData12(type: type, version: version, length: blocksEnd),
                               UnsafeRawBufferPointer(rebasing: fragment[..<blocksEnd]))
            guard expected.elementsEqual(fragment[blocksEnd...]) else { return .authenticationFailed }
        }
        guard cipher.decryptBlocks(iv: UnsafeRawBufferPointer(rebasing: fragment[0..<16]),
                                   blocks: UnsafeRawBufferPointer(rebasing: fragment[16..<blocksEnd]), into: &decrypted),
              let padding = decrypted.last else {
            return .authenticationFailed
        }
        let paddingLength = Int(padding) + 1
        let contentEnd = decrypted.count - paddingLength - (encryptThenMAC ? 0 : macLength)
        guard contentEnd >= 0,
              decrypted.suffix(paddingLength).allSatisfy({ $0 == padding }) else { return .authenticationFailed }
        if !encryptThenMAC {
            let received = decrypted[contentEnd..<(decrypted.count - paddingLength)]
            let expected = decrypted.withUnsafeBytes {
                authenticationCode(additionalData12(type: type, version: version, length: contentEnd),
                    UnsafeRawBufferPointer(rebasing: $0[..<contentEnd]))
            }
            guard expected.elementsEqual(received) else { return .authenticationFailed }
        }
        return .plaintext(contentType: type, bytes: decrypted[..<contentEnd])
    }
}

/// A nonce or a record's additional data: at most 16 bytes, kept inline so a record's nonce and header cost no
/// allocation.
struct ShortBytes {
    private var storage: (UInt64, UInt64) = (0, 0)
    private(set) var count = 0

    init() {}

    init(_ bytes: [UInt8]) {
        for byte in bytes { append(byte) }
    }

    init(repeating byte: UInt8, count: Int) {
        for _ in 0..<count { append(byte) }
    }

    mutating func append(_ byte: UInt8) {
        precondition(count < 16, "ShortBytes holds at most 16 bytes")
        withUnsafeMutableBytes(of: &storage) { $0[count] = byte }
        count += 1
    }

    /// A record header: type, version, length (RFC 8446 section 5.1).
    mutating func appendHeader(type: UInt8, version: UInt16, length: Int) {
        append(type)
        append(UInt8(version >> 8))
        append(UInt8(version & 0xFF))
        append(UInt8(truncatingIfNeeded: length >> 8))
        append(UInt8(truncatingIfNeeded: length))
    }

    /// XORs `value`, big-endian, into the 8 bytes that end at `end`.
    mutating func xorBigEndian(_ value: UInt64, endingAt end: Int) {
        withUnsafeMutableBytes(of: &storage) { bytes in
            for index in 0..<8 { bytes[end - 8 + index] ^= UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * index)) }
        }
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}
