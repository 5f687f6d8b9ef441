internal import CCompression

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

/// A SHA-256 digest as a value: its 32 bytes inline, so a body's digest allocates nothing; renderers write its hex
/// digits straight into their output (`withHexDigits`).
public struct SHA256Digest: Sendable, Hashable, CustomStringConvertible {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words, body)
    }

    fileprivate mutating func withUnsafeMutableBytes(_ body: (UnsafeMutableRawBufferPointer) -> Void) {
        Swift.withUnsafeMutableBytes(of: &words, body)
    }

    /// 64 lower-case hex digits.
    public var hex: String { withUnsafeBytes { HTTPDecoding.hex($0) } }
    public var description: String { hex }

    /// Calls `body` with the 64 lower-case hex digits (ASCII), written on the stack.
    public func withHexDigits<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { text in
            withUnsafeBytes { writeHex($0, into: text) }
            return try body(UnsafeRawBufferPointer(text))
        }
    }

    public static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Lower-case hex, written straight into the String's storage.
func hex(_ bytes: UnsafeRawBufferPointer) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { out in
        writeHex(bytes, into: out)
        return bytes.count * 2
    }
}

/// Writes `bytes` as lower-case hex into the first `2 * bytes.count` bytes of `out`.
private func writeHex(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) {
    let digits: StaticString = "0123456789abcdef"
    let table = digits.utf8Start
    for (index, byte) in bytes.enumerated() {
        out[2 * index] = table[Int(byte >> 4)]
        out[2 * index + 1] = table[Int(byte & 0x0f)]
    }
}
