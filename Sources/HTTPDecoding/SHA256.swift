internal import CCompression

/// Streaming SHA-256 of decoded bodies through OpenSSL's libcrypto (EVP), which uses the CPU's SHA extensions:
/// hashing every body is the largest cost of `--http`, so this matters. Bodies are hashed as they arrive, so
/// memory stays constant however large the body. `PortableSHA256` is the pure-Swift reference it is tested against.
public final class SHA256 {
    private let context: OpaquePointer

    /// Fetched once: OpenSSL 3 would otherwise look the algorithm up again for every body.
    private nonisolated(unsafe) static let algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    public init() {
        guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto: out of memory creating a digest context") }
        self.context = context
        if let algorithm = Self.algorithm {
            EVP_DigestInit_ex2(context, algorithm, nil)
        } else {
            EVP_DigestInit_ex(context, EVP_sha256(), nil)
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The 32-byte digest. The hasher is not consumed.
    public func finalize() -> [UInt8] {
        guard let copy = EVP_MD_CTX_new() else { fatalError("libcrypto: out of memory creating a digest context") }
        defer { EVP_MD_CTX_free(copy) }
        EVP_MD_CTX_copy_ex(copy, context)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        digest.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(copy, $0.baseAddress, &length) }
        return digest
    }

    /// The digest as 64 lower-case hex digits.
    public func hexDigest() -> String { hex(finalize()) }

    /// The digest as hex, finishing this context in place (no copy of the context): the hasher must not be
    /// updated or asked again afterwards. For the one digest a body gets when it ends.
    func finishHexDigest() -> String {
        var digest: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var length: UInt32 = 0
        return withUnsafeMutableBytes(of: &digest) { digest in
            _ = EVP_DigestFinal_ex(context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
            return hex(UnsafeRawBufferPointer(digest))
        }
    }

    public static func hexDigest(of bytes: UnsafeRawBufferPointer) -> String {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.hexDigest()
    }

    public static func hexDigest(of bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hexDigest(of: $0) }
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.withUnsafeBytes { hex($0) }
}

/// Lower-case hex, written straight into the String's storage.
func hex(_ bytes: UnsafeRawBufferPointer) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { out in
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        for (index, byte) in bytes.enumerated() {
            out[2 * index] = table[Int(byte >> 4)]
            out[2 * index + 1] = table[Int(byte & 0x0f)]
        }
        return bytes.count * 2
    }
}
