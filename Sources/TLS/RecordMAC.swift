import CCompression

/// One direction's record MAC for TLS 1.2 CBC suites: libcrypto's HMAC (EVP_MAC), keyed once and started again for
/// every record with the same key. No part of HMAC is written here.
///
/// Not for concurrent use: a direction's records are checked one after another on one thread.
final class RecordMAC: @unchecked Sendable {
    private let context: OpaquePointer
    let length: Int

    /// libcrypto's HMAC implementation, fetched once (a global is initialised once, thread-safely).
    private struct Fetched: @unchecked Sendable {
        let hmac = EVP_MAC_fetch(nil, "HMAC", nil)
    }
    private static let fetched = Fetched()

    /// Nil when libcrypto has no HMAC or refuses the key.
    init?(_ hash: CipherSuite.MACHash, key: [UInt8]) {
        guard let mac = Self.fetched.hmac, let context = EVP_MAC_CTX_new(mac) else { return nil }
        self.context = context
        length = hash.length
        let digest = hash == .sha1 ? "SHA1" : hash == .sha256 ? "SHA256" : "SHA384"
        guard tapkit_hmac_init(context, digest, key, key.count) == 1 else { return nil }
    }

    deinit { EVP_MAC_CTX_free(context) }

    /// HMAC(key, first + second): a record's header and its content need not be copied together.
    func authenticate(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        var written = 0
        let ok = output.withUnsafeMutableBufferPointer { out in
            // A NULL key starts the context again with the key it was given (EVP_MAC_init(3)).
            EVP_MAC_init(context, nil, 0, nil) == 1
                && EVP_MAC_update(context, first.bindMemory(to: UInt8.self).baseAddress, first.count) == 1
                && EVP_MAC_update(context, second.bindMemory(to: UInt8.self).baseAddress, second.count) == 1
                && EVP_MAC_final(context, out.baseAddress, &written, out.count) == 1
        }
        // A MAC that cannot be computed matches no record: the record is refused, never accepted.
        return ok && written == length ? output : []
    }
}
