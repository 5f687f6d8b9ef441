import Crypto
import Foundation
import Testing
import _CryptoExtras
@testable import TLS

/// libcrypto's record ciphers against swift-crypto's sealing: whatever one seals, the other opens, record after
/// record on one keyed context, and a changed tag or header is refused without spoiling the next record.
@Suite struct RecordCipherTests {
    static let lengths = [0, 1, 15, 16, 17, 1_000, 16_384]

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    static func seal(_ algorithm: RecordCipher.Algorithm, key: [UInt8], nonce: [UInt8], plaintext: [UInt8],
                     additionalData: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        let symmetric = SymmetricKey(data: key)
        switch algorithm {
        case .aesGCM:
            let box = try AES.GCM.seal(plaintext, using: symmetric, nonce: AES.GCM.Nonce(data: nonce),
                                       authenticating: additionalData)
            return (Array(box.ciphertext), Array(box.tag))
        case .chaCha20Poly1305:
            let box = try ChaChaPoly.seal(plaintext, using: symmetric, nonce: ChaChaPoly.Nonce(data: nonce),
                                          authenticating: additionalData)
            return (Array(box.ciphertext), Array(box.tag))
        case .aesCBC:
            Issue.record("not an AEAD")
            return ([], [])
        }
    }

    @Test(arguments: [RecordCipher.Algorithm.aesGCM(keyLength: 16), .aesGCM(keyLength: 32), .chaCha20Poly1305])
    func aeadRecordsOpenInTurnAndForgeriesAreRefused(algorithm: RecordCipher.Algorithm) throws {
        let key = Self.random(algorithm == .aesGCM(keyLength: 16) ? 16 : 32)
        let cipher = try #require(RecordCipher(algorithm, key: key))
        var output: [UInt8] = []
        for length in Self.lengths {
            let nonce = Self.random(12), header = Self.random(13), plaintext = Self.random(length)
            let (ciphertext, tag) = try Self.seal(algorithm, key: key, nonce: nonce, plaintext: plaintext,
                                                  additionalData: header)
            // One output buffer for every open, as the record layer keeps one: a failed open leaves nothing
            // that a later one could be mistaken for.
            func open(_ tag: [UInt8], _ header: [UInt8]) -> [UInt8]? {
                let opened = ciphertext.withUnsafeBytes { body in
                    tag.withUnsafeBytes { tag in
                        nonce.withUnsafeBytes { nonce in
                            header.withUnsafeBytes {
                                cipher.open(nonce: nonce, additionalData: $0, ciphertext: body, tag: tag, into: &output)
                            }
                        }
                    }
                }
                return opened ? output : nil
            }
            var badTag = tag
            badTag[length % 16] ^= 0x01
            #expect(open(badTag, header) == nil, "\(length) bytes: a changed tag was accepted")
            var badHeader = header
            badHeader[0] ^= 0x80
            #expect(open(tag, badHeader) == nil, "\(length) bytes: a changed header was accepted")
            #expect(open(tag, header) == plaintext, "\(length) bytes")
        }
    }

    @Test(arguments: [16, 32])
    func cbcBlocksDecryptInTurn(keyLength: Int) throws {
        let key = Self.random(keyLength)
        let cipher = try #require(RecordCipher(.aesCBC(keyLength: keyLength), key: key))
        var output: [UInt8] = []
        for blocks in [1, 2, 64, 1_025] {
            let iv = Self.random(16), plaintext = Self.random(16 * blocks)
            let ciphertext = try AES._CBC.encrypt(plaintext, using: SymmetricKey(data: key), iv: AES._CBC.IV(ivBytes: iv),
                                                  noPadding: true)
            let decrypted = iv.withUnsafeBytes { iv in
                Array(ciphertext).withUnsafeBytes { cipher.decryptBlocks(iv: iv, blocks: $0, into: &output) }
            }
            #expect(decrypted && output == plaintext, "\(blocks) blocks")
        }
        let partial = [UInt8](repeating: 0, count: 17)
        #expect(!partial.withUnsafeBytes { body in
            Self.random(16).withUnsafeBytes { cipher.decryptBlocks(iv: $0, blocks: body, into: &output) }
        }, "a partial block was decrypted")
    }

    @Test func keysOfTheWrongLengthAreRefused() {
        #expect(RecordCipher(.aesGCM(keyLength: 16), key: Self.random(32)) == nil)
        #expect(RecordCipher(.aesGCM(keyLength: 24), key: Self.random(24)) == nil)
        #expect(RecordCipher(.chaCha20Poly1305, key: Self.random(16)) == nil)
        #expect(RecordCipher(.aesCBC(keyLength: 32), key: Self.random(16)) == nil)
    }
}
