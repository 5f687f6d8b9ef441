import CCompression

// What the harnesses need to write protected records and packets as a peer does: AEAD sealing, AES-CBC encryption
// of whole blocks, one AES block (QUIC's header protection mask), HMAC. Each is one libcrypto EVP call sequence;
// nothing of the algorithms is written here. The decoder under test opens with the same library: the fuzzer hunts
// crashes and misreadings in the record layer around it, and TLSTests check libcrypto's answers against Python's
// `cryptography` and the RFCs' vectors.

enum Sealing {
    private static func cipher(_ name: String) -> OpaquePointer? { EVP_CIPHER_fetch(nil, name, nil) }

    /// Ciphertext followed by the 16-byte tag; nil when libcrypto refuses the key or nonce.
    static func seal(chaCha: Bool, key: [UInt8], nonce: [UInt8], plaintext: [UInt8], additionalData: [UInt8]) -> [UInt8]? {
        let name = chaCha ? "ChaCha20-Poly1305" : key.count == 32 ? "AES-256-GCM" : "AES-128-GCM"
        guard let cipher = cipher(name), let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context); EVP_CIPHER_free(cipher) }
        guard EVP_EncryptInit_ex(context, cipher, nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1,
              EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1 else { return nil }
        var length: Int32 = 0
        if !additionalData.isEmpty {
            guard EVP_EncryptUpdate(context, nil, &length, additionalData, Int32(additionalData.count)) == 1 else { return nil }
        }
        var output = [UInt8](repeating: 0, count: plaintext.count + 16 + 1)
        var written: Int32 = 0
        if !plaintext.isEmpty {
            guard EVP_EncryptUpdate(context, &output, &written, plaintext, Int32(plaintext.count)) == 1 else { return nil }
        }
        var final: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out in
            EVP_EncryptFinal_ex(context, out.baseAddress! + Int(written), &final) == 1
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, out.baseAddress! + Int(written + final)) == 1
        }
        return ok ? Array(output[0..<(Int(written + final) + 16)]) : nil
    }

    /// AES-CBC over whole blocks, no padding added (TLS pads itself); `ecb` for one block with no IV.
    static func encryptBlocks(key: [UInt8], iv: [UInt8]?, blocks: [UInt8]) -> [UInt8]? {
        let bits = key.count * 8
        guard let cipher = cipher(iv == nil ? "AES-\(bits)-ECB" : "AES-\(bits)-CBC"), let context = EVP_CIPHER_CTX_new() else {
            return nil
        }
        defer { EVP_CIPHER_CTX_free(context); EVP_CIPHER_free(cipher) }
        guard EVP_EncryptInit_ex(context, cipher, nil, key, iv) == 1 else { return nil }
        EVP_CIPHER_CTX_set_padding(context, 0)
        var output = [UInt8](repeating: 0, count: blocks.count + 16)
        var written: Int32 = 0, final: Int32 = 0
        guard EVP_EncryptUpdate(context, &output, &written, blocks, Int32(blocks.count)) == 1 else { return nil }
        let ok = output.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(written), &final) == 1 }
        return ok ? Array(output[0..<Int(written + final)]) : nil
    }

    /// HMAC with SHA-1, SHA-256 or SHA-384 (digest length 20, 32 or 48).
    static func hmac(digestLength: Int, key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        let digest = digestLength == 20 ? "SHA1" : digestLength == 32 ? "SHA256" : "SHA384"
        var output = [UInt8](repeating: 0, count: 64)
        var length = 0
        guard EVP_Q_mac(nil, "HMAC", nil, digest, nil, key, key.count, data, data.count, &output, output.count, &length) != nil
        else { return [] }
        return Array(output[0..<length])
    }
}
