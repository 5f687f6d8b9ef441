import TLS

/// The Retry integrity tag (RFC 9001 section 5.8, RFC 9369 section 3.3.3): a Retry ends with an AES-128-GCM tag,
/// under a key and nonce fixed per version, over nothing, with the Retry pseudo-packet as associated data: the
/// client's original Destination Connection ID (one length byte, then the ID) followed by the Retry without its
/// tag. Only a server that saw the client's first Initial can make it; a client discards a Retry whose tag does
/// not verify, so the decoder does too. libcrypto's AEAD (TLS's `RecordCipher`) checks it.
enum RetryIntegrity {
    static let tagLength = 16

    /// Whether `retry` (the whole Retry packet, tag last) carries the tag its version's key gives for a client
    /// whose first Initial went to `originalDCID`.
    static func verifies(_ retry: UnsafeRawBufferPointer, originalDCID: [UInt8], version: QUICVersion) -> Bool {
        guard retry.count > tagLength, originalDCID.count <= 255,
              let aead = RecordCipher(.aesGCM(keyLength: 16), key: version.retryKey) else { return false }
        let split = retry.count - tagLength
        let pseudoPacket = [UInt8(originalDCID.count)] + originalDCID + retry[..<split]
        var plaintext: [UInt8] = []
        return pseudoPacket.withUnsafeBytes { additionalData in
            version.retryNonce.withUnsafeBytes { nonce in
                aead.open(nonce: nonce, additionalData: additionalData, ciphertext: UnsafeRawBufferPointer(start: nil, count: 0),
                          tag: UnsafeRawBufferPointer(rebasing: retry[split...]), into: &plaintext)
            }
        }
    }
}
