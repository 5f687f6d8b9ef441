/// A SHA-256 digest as a value: its 32 bytes inline, so a body's digest allocates nothing; renderers write its hex
/// digits straight into their output (`withHexDigits`).
public struct SHA256Digest: Sendable, Hashable, CustomStringConvertible {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// All zero bytes, for a hasher to write into.
    package init() {}

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words, body)
    }

    package mutating func withUnsafeMutableBytes(_ body: (UnsafeMutableRawBufferPointer) -> Void) {
        Swift.withUnsafeMutableBytes(of: &words, body)
    }

    /// 64 lower-case hex digits.
    public var hex: String { withUnsafeBytes { HTTPModel.hex($0) } }
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
package func hex(_ bytes: UnsafeRawBufferPointer) -> String {
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
