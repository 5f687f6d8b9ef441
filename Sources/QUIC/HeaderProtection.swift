import CCompression

/// QUIC header protection (RFC 9001 section 5.4): a 5-byte mask from a 16-byte sample of the ciphertext, by
/// AES-ECB of the sample (AES suites) or ChaCha20 keyed by the sample (its first 4 bytes the block counter, the rest
/// the nonce: the 16-byte IV libcrypto's ChaCha20 takes, in that order). libcrypto's ciphers, keyed once per key.
///
/// Not for concurrent use: one connection's packets are read one after another on one thread.
final class HeaderProtection: @unchecked Sendable {
    static let sampleLength = 16
    private let context: OpaquePointer
    private let chaCha: Bool

    private struct Fetched: @unchecked Sendable {
        let aes128ECB = EVP_CIPHER_fetch(nil, "AES-128-ECB", nil)
        let aes256ECB = EVP_CIPHER_fetch(nil, "AES-256-ECB", nil)
        let chaCha20 = EVP_CIPHER_fetch(nil, "ChaCha20", nil)
    }
    private static let ciphers = Fetched()

    /// nil when the key has a length its cipher does not take or libcrypto cannot make a context.
    init?(key: [UInt8], chaCha: Bool) {
        let cipher = chaCha ? Self.ciphers.chaCha20 : key.count == 16 ? Self.ciphers.aes128ECB
            : key.count == 32 ? Self.ciphers.aes256ECB : nil
        guard let cipher, key.count == Int(EVP_CIPHER_get_key_length(cipher)),
              let context = EVP_CIPHER_CTX_new() else { return nil }
        self.context = context
        self.chaCha = chaCha
        guard EVP_EncryptInit_ex(context, cipher, nil, key, nil) == 1 else { return nil }
        if !chaCha { EVP_CIPHER_CTX_set_padding(context, 0) }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// The mask for `sample` (16 bytes) in `mask`'s first five bytes; false when libcrypto refuses.
    func mask(sample: UnsafeRawBufferPointer, into mask: inout (UInt64, UInt64)) -> Bool {
        guard sample.count == Self.sampleLength else { return false }
        let input = sample.bindMemory(to: UInt8.self).baseAddress
        return withUnsafeMutableBytes(of: &mask) { output -> Bool in
            let out = output.bindMemory(to: UInt8.self).baseAddress
            var written: Int32 = 0
            if chaCha {
                // The sample is the IV; the mask is the key stream over five zero bytes.
                let zeros: (UInt64, UInt64) = (0, 0)
                guard EVP_EncryptInit_ex(context, nil, nil, nil, input) == 1 else { return false }
                return withUnsafeBytes(of: zeros) { zeros in
                    EVP_EncryptUpdate(context, out, &written, zeros.bindMemory(to: UInt8.self).baseAddress, 5) == 1
                }
            }
            return EVP_EncryptUpdate(context, out, &written, input, 16) == 1 && written == 16
        }
    }
}
