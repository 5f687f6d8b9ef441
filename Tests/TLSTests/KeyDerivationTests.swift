import Foundation
import Testing
@testable import TLS

/// libcrypto's TLS13-KDF, TLS1-PRF, HKDF (extract) and HMAC against the same constructions composed by CPython's own
/// HMAC over its built-in SHA modules (crypto-vectors.py), for secrets of any length a key log may hold (the key log
/// parser takes any non-empty TLS 1.3 secret). RFC 8448's and RFC 9001's vectors check the same functions with
/// published values (RFC8448Tests, QUICTests).
@Suite(.enabled(if: CryptoVectors.available, "needs python3 with the cryptography package (Scripts/setup --test)"))
struct KeyDerivationTests {
    @Test func expandLabelEqualsHKDF() throws {
        let vectors = try CryptoVectors.make().expandLabel
        #expect(vectors.count >= 80)
        for v in vectors {
            let ours = KeyDerivation.expandLabel(secret: v.secret, label: v.label, context: v.context, length: v.length,
                                                 sha384: v.sha384)
            #expect(ours == v.out, "\(v.label), \(v.secret.count)-byte secret, \(v.length) bytes, SHA-384: \(v.sha384)")
        }
    }

    @Test func prf12EqualsPHash() throws {
        let vectors = try CryptoVectors.make().prf12
        #expect(vectors.count >= 10)
        for v in vectors {
            let ours = KeyDerivation.prf12(secret: v.secret, label: v.label, seed: v.seed, length: v.length, sha384: v.sha384)
            #expect(ours == v.out, "\(v.length) bytes, SHA-384: \(v.sha384)")
        }
    }

    @Test func extractEqualsHMACOfTheSalt() throws {
        let vectors = try CryptoVectors.make().extract
        #expect(vectors.count >= 10)
        for v in vectors {
            let ours = v.key.withUnsafeBytes { KeyDerivation.extract(salt: v.salt, inputKeyMaterial: $0, sha384: v.sha384) }
            #expect(ours == v.out, "\(v.salt.count)-byte salt, \(v.key.count)-byte key, SHA-384: \(v.sha384)")
        }
    }

    @Test func recordMACEqualsHMAC() throws {
        let vectors = try CryptoVectors.make().hmac
        #expect(vectors.count >= 15)
        for v in vectors {
            let hash: CipherSuite.MACHash = v.hash == "sha1" ? .sha1 : v.hash == "sha256" ? .sha256 : .sha384
            let mac = try #require(RecordMAC(hash, key: v.key))
            // Twice on one keyed context: the second record's MAC must not depend on the first's.
            for _ in 0..<2 {
                let ours = v.first.withUnsafeBytes { first in v.second.withUnsafeBytes { mac.authenticate(first, $0) } }
                #expect(ours == v.out, "\(v.hash), \(v.key.count)-byte key, \(v.first.count) + \(v.second.count) bytes")
            }
        }
    }
}
