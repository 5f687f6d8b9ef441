import CCompression

/// TLS key derivation by libcrypto's own KDFs (`TLS13-KDF`, `TLS1-PRF`); no primitive or construction is
/// implemented here. swift-crypto's generic HMAC and HKDF did the same at several times the cost per connection
/// (docs/tls.md, "Speed and memory"); RFC 8448's and RFC 9001's secrets and keys are the tests.
package enum KeyDerivation {
    /// libcrypto's KDF implementations, fetched once (a global is initialised once, thread-safely).
    private struct Fetched: @unchecked Sendable {
        let tls13 = EVP_KDF_fetch(nil, "TLS13-KDF", nil)
        let tls12 = EVP_KDF_fetch(nil, "TLS1-PRF", nil)
        let hkdf = EVP_KDF_fetch(nil, "HKDF", nil)
    }
    private static let kdfs = Fetched()

    /// TLS 1.2 PRF (RFC 5246 section 5): P_hash(secret, label + seed) truncated to `length`.
    static func prf12(secret: [UInt8], label: String, seed: [UInt8], length: Int, sha384: Bool) -> [UInt8] {
        let label = Array(label.utf8)
        var output = [UInt8](repeating: 0, count: length)
        let ok = tapkit_tls12_prf(kdfs.tls12, sha384 ? 1 : 0, secret, secret.count, label, label.count, seed, seed.count,
                                  &output, length)
        precondition(ok == 1, "libcrypto's TLS1-PRF is missing or refused its input")
        return output
    }

    /// HKDF-Extract(salt, input key material) (RFC 5869 section 2.2): a pseudorandom key of the hash's length.
    package static func extract(salt: [UInt8], inputKeyMaterial: UnsafeRawBufferPointer, sha384: Bool) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: sha384 ? 48 : 32)
        let ok = tapkit_hkdf_extract(kdfs.hkdf, sha384 ? 1 : 0, salt, salt.count,
                                     inputKeyMaterial.bindMemory(to: UInt8.self).baseAddress, inputKeyMaterial.count,
                                     &output, output.count)
        precondition(ok == 1, "libcrypto's HKDF is missing or refused its input")
        return output
    }

    /// TLS 1.3 HKDF-Expand-Label (RFC 8446 section 7.1) with an empty or given context.
    package static func expandLabel(secret: [UInt8], label: String, context: [UInt8] = [], length: Int, sha384: Bool) -> [UInt8] {
        var label = label
        var output = [UInt8](repeating: 0, count: length)
        // The label's bytes straight from the String (a small one is copied to the stack, not the heap).
        let ok = label.withUTF8 { label in
            tapkit_tls13_expand_label(kdfs.tls13, sha384 ? 1 : 0, secret, secret.count, label.baseAddress, label.count,
                                      context, context.count, &output, length)
        }
        precondition(ok == 1, "libcrypto's TLS13-KDF is missing or refused its input")
        return output
    }
}
