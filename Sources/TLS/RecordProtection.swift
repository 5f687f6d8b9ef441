import Crypto
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
        case plaintext(contentType: UInt8, bytes: Data)
        /// The tag or MAC did not verify (wrong key, or corrupted bytes).
        case authenticationFailed
        /// The record is too short or misshapen for this cipher.
        case malformed(String)
    }

    let suite: CipherSuite
    let scheme: Scheme
    /// The key's bytes (the fuzz harness seals records with them); `cipher` opens records, keyed once for all.
    let key: [UInt8]
    let cipher: RecordCipher
    /// 12 bytes for TLS 1.3 and ChaCha20; the 4-byte salt for TLS 1.2 GCM; unused for CBC.
    let iv: [UInt8]
    let macKey: SymmetricKey?
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
        return RecordProtection(suite: suite, scheme: .tls13, key: key, cipher: cipher, iv: iv, macKey: nil)
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
        return RecordProtection(suite: suite, scheme: scheme, key: key, cipher: cipher, iv: iv,
                                macKey: macLength > 0 ? SymmetricKey(data: macKey) : nil)
    }

    /// Opens one record with the current sequence number (the caller advances it).
    func open(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer) -> Outcome {
        switch scheme {
        case .tls13: return open13(type: type, version: version, fragment: fragment)
        case .tls12AEAD: return open12AEAD(type: type, version: version, fragment: fragment)
        case .tls12CBC(let encryptThenMAC):
            return openCBC(type: type, version: version, fragment: fragment, encryptThenMAC: encryptThenMAC)
        }
    }

    private func sequenceNonce() -> [UInt8] {
        var nonce = iv
        for index in 0..<8 { nonce[4 + index] ^= UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * index)) }
        return nonce
    }

    private func aeadOpen(nonce: [UInt8], ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                          additionalData: [UInt8]) -> Data? {
        cipher.open(nonce: nonce, additionalData: additionalData, ciphertext: ciphertext, tag: tag)
    }

    private func open13(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer) -> Outcome {
        guard fragment.count >= Self.tagLength + 1 else {
            return .malformed("\(fragment.count) bytes is too short for a TLS 1.3 record (needs at least 17)")
        }
        let header: [UInt8] = [type, UInt8(version >> 8), UInt8(version & 0xFF),
                               UInt8(fragment.count >> 8), UInt8(fragment.count & 0xFF)]
        let split = fragment.count - Self.tagLength
        guard let inner = aeadOpen(nonce: sequenceNonce(), ciphertext: UnsafeRawBufferPointer(rebasing: fragment[..<split]),
                                   tag: UnsafeRawBufferPointer(rebasing: fragment[split...]), additionalData: header) else {
            return .authenticationFailed
        }
        // TLSInnerPlaintext: content, the real type, then zero padding.
        guard let typeIndex = inner.lastIndex(where: { $0 != 0 }) else {
            return .malformed("decrypted TLS 1.3 record has no content type (all padding)")
        }
        return .plaintext(contentType: inner[typeIndex], bytes: inner[inner.startIndex..<typeIndex])
    }

    private func additionalData12(type: UInt8, version: UInt16, length: Int) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(13)
        for shift in stride(from: 56, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: sequence >> UInt64(shift))) }
        data += [type, UInt8(version >> 8), UInt8(version & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF)]
        return data
    }

    private func open12AEAD(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer) -> Outcome {
        let explicitNonce = iv.count == 4 ? 8 : 0
        guard fragment.count >= explicitNonce + Self.tagLength else {
            return .malformed("\(fragment.count) bytes is too short for a TLS 1.2 AEAD record (needs \(explicitNonce + Self.tagLength))")
        }
        let nonce = explicitNonce > 0 ? iv + Array(fragment[0..<8]) : sequenceNonce()
        let split = fragment.count - Self.tagLength
        let plaintextLength = split - explicitNonce
        guard let plaintext = aeadOpen(nonce: nonce,
                                       ciphertext: UnsafeRawBufferPointer(rebasing: fragment[explicitNonce..<split]),
                                       tag: UnsafeRawBufferPointer(rebasing: fragment[split...]),
                                       additionalData: additionalData12(type: type, version: version, length: plaintextLength)) else {
            return .authenticationFailed
        }
        return .plaintext(contentType: type, bytes: plaintext)
    }

    private func mac(_ parts: [UInt8], _ body: UnsafeRawBufferPointer) -> [UInt8] {
        guard let macKey, case .aesCBC(_, let hash) = suite.protection else { return [] }
        switch hash {
        case .sha1:
            var hmac = HMAC<Insecure.SHA1>(key: macKey); hmac.update(data: parts); hmac.update(data: body)
            return Array(hmac.finalize())
        case .sha256:
            var hmac = HMAC<SHA256>(key: macKey); hmac.update(data: parts); hmac.update(data: body)
            return Array(hmac.finalize())
        case .sha384:
            var hmac = HMAC<SHA384>(key: macKey); hmac.update(data: parts); hmac.update(data: body)
            return Array(hmac.finalize())
        }
    }

    private func openCBC(type: UInt8, version: UInt16, fragment: UnsafeRawBufferPointer, encryptThenMAC: Bool) -> Outcome {
        guard case .aesCBC(_, let hash) = suite.protection else { return .malformed("not a CBC suite") }
        let macLength = hash.length
        let blocksEnd = encryptThenMAC ? fragment.count - macLength : fragment.count
        guard blocksEnd >= 32, (blocksEnd - 16) % 16 == 0 else {
            return .malformed("\(fragment.count) bytes is not an IV plus whole AES blocks\(encryptThenMAC ? " plus a MAC" : "")")
        }
        if encryptThenMAC {
            let expected = mac(additionalData12(type: type, version: version, length: blocksEnd),
                               UnsafeRawBufferPointer(rebasing: fragment[..<blocksEnd]))
            guard expected.elementsEqual(fragment[blocksEnd...]) else { return .authenticationFailed }
        }
        guard let decrypted = cipher.decryptBlocks(iv: UnsafeRawBufferPointer(rebasing: fragment[0..<16]),
                                                   blocks: UnsafeRawBufferPointer(rebasing: fragment[16..<blocksEnd])),
              let padding = decrypted.last else {
            return .authenticationFailed
        }
        let paddingLength = Int(padding) + 1
        let contentEnd = decrypted.count - paddingLength - (encryptThenMAC ? 0 : macLength)
        guard contentEnd >= 0,
              decrypted.suffix(paddingLength).allSatisfy({ $0 == padding }) else { return .authenticationFailed }
        let content = decrypted.prefix(contentEnd)
        if !encryptThenMAC {
            let received = decrypted[(decrypted.startIndex + contentEnd)..<(decrypted.endIndex - paddingLength)]
            let expected = Array(content).withUnsafeBytes {
                mac(additionalData12(type: type, version: version, length: contentEnd), $0)
            }
            guard expected.elementsEqual(received) else { return .authenticationFailed }
        }
        return .plaintext(contentType: type, bytes: Data(content))
    }
}
