import Foundation
import Testing
@testable import TLS

/// libcrypto's record ciphers against the `cryptography` package's sealing (crypto-vectors.py, fresh random inputs
/// each run): whatever it seals, RecordCipher opens, record after record on one keyed context, and a changed tag or
/// header is refused without spoiling the next record.
@Suite struct RecordCipherTests {
    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    @Test(.enabled(if: CryptoVectors.available, "needs python3 with the cryptography package (Scripts/setup --test)"),
          arguments: ["aes128gcm", "aes256gcm", "chacha20poly1305"])
    func aeadRecordsOpenInTurnAndForgeriesAreRefused(algorithm name: String) throws {
        let vectors = try CryptoVectors.make().aead.filter { $0.algorithm == name }
        #expect(vectors.count == 7)
        var output: [UInt8] = []
        for v in vectors {
            let algorithm: RecordCipher.Algorithm = name == "chacha20poly1305" ? .chaCha20Poly1305 : .aesGCM(keyLength: v.key.count)
            let cipher = try #require(RecordCipher(algorithm, key: v.key))
            let length = v.plaintext.count
            // One output buffer for every open, as the record layer keeps one: a failed open leaves nothing
            // that a later one could be mistaken for.
            func open(_ tag: [UInt8], _ header: [UInt8]) -> [UInt8]? {
                let opened = v.ciphertext.withUnsafeBytes { body in
                    tag.withUnsafeBytes { tag in
                        v.nonce.withUnsafeBytes { nonce in
                            header.withUnsafeBytes {
                                cipher.open(nonce: nonce, additionalData: $0, ciphertext: body, tag: tag, into: &output)
                            }
                        }
                    }
                }
                return opened ? output : nil
            }
            var badTag = v.tag
            badTag[length % 16] ^= 0x01
            #expect(open(badTag, v.aad) == nil, "\(length) bytes: a changed tag was accepted")
            var badHeader = v.aad
            badHeader[0] ^= 0x80
            #expect(open(v.tag, badHeader) == nil, "\(length) bytes: a changed header was accepted")
            #expect(open(v.tag, v.aad) == v.plaintext, "\(length) bytes")
        }
    }

    @Test(.enabled(if: CryptoVectors.available, "needs python3 with the cryptography package (Scripts/setup --test)"))
    func cbcBlocksDecryptInTurn() throws {
        let vectors = try CryptoVectors.make().cbc
        #expect(vectors.count == 8)
        var output: [UInt8] = []
        for v in vectors {
            let cipher = try #require(RecordCipher(.aesCBC(keyLength: v.key.count), key: v.key))
            let decrypted = v.iv.withUnsafeBytes { iv in
                v.ciphertext.withUnsafeBytes { cipher.decryptBlocks(iv: iv, blocks: $0, into: &output) }
            }
            #expect(decrypted && output == v.plaintext, "\(v.plaintext.count / 16) blocks, \(v.key.count)-byte key")
            let partial = [UInt8](repeating: 0, count: 17)
            #expect(!partial.withUnsafeBytes { body in
                Self.random(16).withUnsafeBytes { cipher.decryptBlocks(iv: $0, blocks: body, into: &output) }
            }, "a partial block was decrypted")
        }
    }

    @Test func keysOfTheWrongLengthAreRefused() {
        #expect(RecordCipher(.aesGCM(keyLength: 16), key: Self.random(32)) == nil)
        #expect(RecordCipher(.aesGCM(keyLength: 24), key: Self.random(24)) == nil)
        #expect(RecordCipher(.chaCha20Poly1305, key: Self.random(16)) == nil)
        #expect(RecordCipher(.aesCBC(keyLength: 32), key: Self.random(16)) == nil)
    }
}
