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
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}
