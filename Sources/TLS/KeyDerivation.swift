import Crypto
import Foundation

/// Key derivation composed from swift-crypto's HMAC and HKDF; no primitive is implemented here.
enum KeyDerivation {
    /// TLS 1.2 PRF (RFC 5246 section 5): P_hash(secret, label + seed) truncated to `length`.
    static func prf12(secret: [UInt8], label: String, seed: [UInt8], length: Int, sha384: Bool) -> [UInt8] {
        sha384 ? pHash(SHA384.self, secret: secret, seed: Array(label.utf8) + seed, length: length)
            : pHash(SHA256.self, secret: secret, seed: Array(label.utf8) + seed, length: length)
    }

    private static func pHash<H: HashFunction>(_: H.Type, secret: [UInt8], seed: [UInt8], length: Int) -> [UInt8] {
        let key = SymmetricKey(data: secret)
        var output: [UInt8] = []
        var a = Array(HMAC<H>.authenticationCode(for: seed, using: key))  // A(1)
        while true {
            output += Array(HMAC<H>.authenticationCode(for: a + seed, using: key))
            guard output.count < length else { break }  // A(i + 1) only when another block is needed
            a = Array(HMAC<H>.authenticationCode(for: a, using: key))
        }
        return Array(output.prefix(length))
    }

    /// TLS 1.3 HKDF-Expand-Label (RFC 8446 section 7.1) with an empty or given context.
    static func expandLabel(secret: [UInt8], label: String, context: [UInt8] = [], length: Int, sha384: Bool) -> [UInt8] {
        let fullLabel = Array("tls13 \(label)".utf8)
        var info: [UInt8] = [UInt8(length >> 8), UInt8(length & 0xFF), UInt8(fullLabel.count)]
        info += fullLabel
        info.append(UInt8(context.count))
        info += context
        let prk = SymmetricKey(data: secret)
        let key = sha384
            ? HKDF<SHA384>.expand(pseudoRandomKey: prk, info: info, outputByteCount: length)
            : HKDF<SHA256>.expand(pseudoRandomKey: prk, info: info, outputByteCount: length)
        return key.withUnsafeBytes { Array($0) }
    }
}
