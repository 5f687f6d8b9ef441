internal import CCompression
import HTTPModel

/// Streaming SHA-256 of decoded bodies through OpenSSL's libcrypto, which uses the CPU's SHA extensions: hashing
/// every body is one of the largest costs of `--http`, so this matters. Bodies are hashed as they arrive, so memory
/// stays constant however large the body. The context is libcrypto's plain `SHA256_CTX`, held inside this object:
/// the EVP interface ran the same code but allocated a context and a provider context for every body (about 19
/// allocations per exchange). `PortableSHA256` is the pure-Swift reference it is tested against.
public final class SHA256 {
    private var context = SHA256Context()

    public init() {}

    public func update(_ bytes: UnsafeRawBufferPointer) {
        context.update(bytes)
    }

    /// The digest of what was hashed so far. The hasher is not consumed.
    public func digest() -> SHA256Digest {
        var copy = context
        return copy.finishDigest()
    }

    /// The 32-byte digest. The hasher is not consumed.
    public func finalize() -> [UInt8] { digest().withUnsafeBytes { Array($0) } }

    /// The digest as 64 lower-case hex digits.
    public func hexDigest() -> String { digest().hex }

    public static func digest(of bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        var context = SHA256Context()
        context.update(bytes)
        return context.finishDigest()
    }

    public static func digest(of bytes: [UInt8]) -> SHA256Digest { bytes.withUnsafeBytes { digest(of: $0) } }

    public static func hexDigest(of bytes: UnsafeRawBufferPointer) -> String { digest(of: bytes).hex }

    public static func hexDigest(of bytes: [UInt8]) -> String { digest(of: bytes).hex }
}

/// The same hash as a value, kept inline by its owner (a body's accumulator), so hashing a body allocates nothing.
struct SHA256Context {
    private var context = SHA256_CTX()

    init() {
        tapkit_sha256_init(&context)
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        tapkit_sha256_update(&context, base, bytes.count)
    }

    /// The digest, finishing this context: it must not be updated or finished again afterwards.
    mutating func finishDigest() -> SHA256Digest {
        var digest = SHA256Digest()
        digest.withUnsafeMutableBytes { tapkit_sha256_final(&context, $0.baseAddress?.assumingMemoryBound(to: UInt8.self)) }
        return digest
    }
}
