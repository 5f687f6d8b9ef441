import Crypto
import Foundation
import Testing
@testable import TLS

/// libcrypto's TLS13-KDF and TLS1-PRF against the same derivations composed from swift-crypto's HKDF and HMAC, for
/// secrets of any length a key log may hold (the key log parser takes any non-empty TLS 1.3 secret).
@Suite struct KeyDerivationTests {
    static let secretLengths = [1, 2, 31, 32, 48, 64, 200]

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    static func expandLabelBySwiftCrypto(secret: [UInt8], label: String, context: [UInt8], length: Int,
                                         sha384: Bool) -> [UInt8] {
        let full = Array("tls13 \(label)".utf8)
        let info = [UInt8(length >> 8), UInt8(length & 0xFF), UInt8(full.count)] + full + [UInt8(context.count)] + context
        let key = sha384
            ? HKDF<SHA384>.expand(pseudoRandomKey: SymmetricKey(data: secret), info: info, outputByteCount: length)
            : HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: secret), info: info, outputByteCount: length)
        return key.withUnsafeBytes { Array($0) }
    }

    static func pHash<H: HashFunction>(_: H.Type, secret: [UInt8], seed: [UInt8], length: Int) -> [UInt8] {
        let key = SymmetricKey(data: secret)
        var output: [UInt8] = []
        var a = Array(HMAC<H>.authenticationCode(for: seed, using: key))
        while output.count < length {
            output += Array(HMAC<H>.authenticationCode(for: a + seed, using: key))
            a = Array(HMAC<H>.authenticationCode(for: a, using: key))
        }
        return Array(output.prefix(length))
    }

    @Test(arguments: [false, true])
    func expandLabelEqualsHKDF(sha384: Bool) {
        for secretLength in Self.secretLengths {
            for (label, context, length) in [("key", [UInt8](), 16), ("iv", [], 12), ("traffic upd", [], sha384 ? 48 : 32),
                                              ("finished", Self.random(32), 32), ("key", [], 32)] {
                let secret = Self.random(secretLength)
                let ours = KeyDerivation.expandLabel(secret: secret, label: label, context: context, length: length,
                                                     sha384: sha384)
                let theirs = Self.expandLabelBySwiftCrypto(secret: secret, label: label, context: context,
                                                           length: length, sha384: sha384)
                #expect(ours == theirs, "\(label), \(secretLength)-byte secret, \(length) bytes")
            }
        }
    }

    @Test(arguments: [false, true])
    func prf12EqualsPHash(sha384: Bool) {
        for length in [1, 40, 72, 104, 136] {
            let secret = Self.random(48), seed = Self.random(64)
            let ours = KeyDerivation.prf12(secret: secret, label: "key expansion", seed: seed, length: length, sha384: sha384)
            let labelled = Array("key expansion".utf8) + seed
            let theirs = sha384 ? Self.pHash(SHA384.self, secret: secret, seed: labelled, length: length)
                : Self.pHash(SHA256.self, secret: secret, seed: labelled, length: length)
            #expect(ours == theirs, "\(length) bytes")
        }
    }
}
