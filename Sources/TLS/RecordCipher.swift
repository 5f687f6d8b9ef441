import CCompression

/// One direction's cipher from libcrypto's EVP interface, keyed once and reused for every record of that key.
///
/// swift-crypto's `AES.GCM.open` and `ChaChaPoly.open` set up the key and copy the ciphertext into a sealed box for
/// every record, and its `AES._CBC` runs AES block by block in Swift; here the key schedule is made once and each
/// record is decrypted straight into a buffer reused from record to record (docs/tls.md, "Speed and memory"). The
/// algorithms are libcrypto's (OpenSSL 3, already linked for SHA-256), none written here.
///
/// Not for concurrent use: a direction's records are opened one after another on one thread.
package final class RecordCipher: @unchecked Sendable {
    package enum Algorithm: Equatable {
        case aesGCM(keyLength: Int)
        case chaCha20Poly1305
        case aesCBC(keyLength: Int)
    }

    static let tagLength = 16

    private let context: OpaquePointer
    let algorithm: Algorithm

    /// libcrypto's cipher implementations, fetched once (a global is initialised once, thread-safely). The legacy
    /// `EVP_aes_128_gcm()` objects make OpenSSL 3 look the implementation up by name at every key set-up.
    private struct Fetched: @unchecked Sendable {
        let aes128GCM = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil)
        let aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
        let chaCha20Poly1305 = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil)
        let aes128CBC = EVP_CIPHER_fetch(nil, "AES-128-CBC", nil)
        let aes256CBC = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil)
    }
    private static let ciphers = Fetched()

    /// Nil when libcrypto refuses the key (a wrong length) or cannot make a context.
    package init?(_ algorithm: Algorithm, key: [UInt8]) {
        let cipher: OpaquePointer?
        switch algorithm {
        case .aesGCM(let length):
            cipher = length == 16 ? Self.ciphers.aes128GCM : length == 32 ? Self.ciphers.aes256GCM : nil
        case .chaCha20Poly1305:
            cipher = Self.ciphers.chaCha20Poly1305
        case .aesCBC(let length):
            cipher = length == 16 ? Self.ciphers.aes128CBC : length == 32 ? Self.ciphers.aes256CBC : nil
        }
        guard let cipher, key.count == Int(EVP_CIPHER_get_key_length(cipher)),
              let context = EVP_CIPHER_CTX_new() else { return nil }
        self.context = context
        self.algorithm = algorithm
        guard EVP_DecryptInit_ex(context, cipher, nil, key, nil) == 1 else { return nil }
        if case .aesCBC = algorithm { EVP_CIPHER_CTX_set_padding(context, 0) }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Authenticated decryption (12-byte nonce, 16-byte tag) into `plaintext`, whose storage is reused from record
    /// to record. False when the tag does not verify.
    package func open(nonce: UnsafeRawBufferPointer, additionalData: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
              tag: UnsafeRawBufferPointer, into plaintext: inout [UInt8]) -> Bool {
        guard nonce.count == 12, tag.count == Self.tagLength, ciphertext.count <= Int(Int32.max) else { return false }
        guard EVP_DecryptInit_ex(context, nil, nil, nil, nonce.bindMemory(to: UInt8.self).baseAddress) == 1 else {
            return false
        }
        var length: Int32 = 0
        guard EVP_DecryptUpdate(context, nil, &length, additionalData.bindMemory(to: UInt8.self).baseAddress,
                                Int32(additionalData.count)) == 1 else { return false }
        // One byte more than the plaintext, so the output pointer is valid even for an empty record.
        Self.resize(&plaintext, to: ciphertext.count + 1)
        let opened = plaintext.withUnsafeMutableBufferPointer { output -> Bool in
            let out = output.baseAddress!
            var written: Int32 = 0
            if ciphertext.count > 0 {
                guard EVP_DecryptUpdate(context, out, &written, ciphertext.bindMemory(to: UInt8.self).baseAddress,
                                        Int32(ciphertext.count)) == 1 else { return false }
            }
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagLength),
                                      UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1 else { return false }
            var final: Int32 = 0
            return EVP_DecryptFinal_ex(context, out + Int(written), &final) == 1
        }
        plaintext.removeLast()
        return opened
    }

    /// `array` with `count` elements, keeping its storage when it is large enough.
    private static func resize(_ array: inout [UInt8], to count: Int) {
        array.removeAll(keepingCapacity: true)
        array.append(contentsOf: repeatElement(0, count: count))
    }

    /// CBC decryption of whole blocks into `plaintext` (its storage reused), without removing padding (the record
    /// layer checks it with the MAC). False when libcrypto refuses.
    func decryptBlocks(iv: UnsafeRawBufferPointer, blocks: UnsafeRawBufferPointer, into plaintext: inout [UInt8]) -> Bool {
        guard iv.count == 16, blocks.count % 16 == 0, blocks.count > 0, blocks.count <= Int(Int32.max) else { return false }
        guard EVP_DecryptInit_ex(context, nil, nil, nil, iv.bindMemory(to: UInt8.self).baseAddress) == 1 else { return false }
        Self.resize(&plaintext, to: blocks.count)
        return plaintext.withUnsafeMutableBufferPointer { output -> Bool in
            var written: Int32 = 0
            guard EVP_DecryptUpdate(context, output.baseAddress, &written, blocks.bindMemory(to: UInt8.self).baseAddress,
                                    Int32(blocks.count)) == 1, written == Int32(blocks.count) else { return false }
            var final: Int32 = 0
            return EVP_DecryptFinal_ex(context, output.baseAddress! + Int(written), &final) == 1
        }
    }
}
