/// A QUIC connection ID (0 to 20 bytes) as a fixed-size value, so looking one up hashes words, not an array.
struct ConnectionIDKey: Hashable {
    private var words: (UInt64, UInt64, UInt32) = (0, 0, 0)
    let count: UInt8

    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= 20 else { return nil }
        count = UInt8(bytes.count)
        withUnsafeMutableBytes(of: &words) { words in
            for index in 0..<bytes.count { words[index] = bytes[index] }
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count); hasher.combine(words.0); hasher.combine(words.1); hasher.combine(words.2)
    }
}
