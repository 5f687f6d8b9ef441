/// TCP options, walked the way tcpdump walks them: over the length the header declares, stopping where the
/// captured bytes run out (snap length) or where a length field cannot be right.

/// One option as found in the header. Borrows the packet's memory (not `Sendable`).
public struct TCPOption {
    public enum Value {
        case endOfList
        case noOperation
        /// nil when the option is too short to hold the value (tcpdump then prints the name and `[len N]`).
        case maximumSegmentSize(UInt16?)
        case windowScale(UInt8?)
        case sackPermitted
        /// SACK edges: `count` (left, right) pairs, at most four (a 40-byte option space holds no more).
        case sack(SACKBlocks)
        /// A SACK option whose data is not a whole number of 8-byte blocks.
        case invalidSACK
        case timestamp(value: UInt32, echoReply: UInt32)
        /// A timestamp option too short for its two values.
        case shortTimestamp
        /// TCP Fast Open: kind 34, or kind 254 with the 0xf989 magic (`experimental`). The cookie may be empty.
        case fastOpen(cookie: UnsafeRawBufferPointer, experimental: Bool)
        /// Kind 254 (RFC 6994) with another magic.
        case experimental(magic: UInt16)
        /// Kind 254 without room for its magic: tcpdump stops the option list there.
        case experimentalWithoutMagic
        /// Any other option, with its data bytes.
        case other(data: UnsafeRawBufferPointer)
        /// The length byte is below 2 or runs past the declared header: the list ends here.
        case badLength
        /// The captured bytes end inside this option (its length byte was read, `length` holds it).
        case cut
        /// The captured bytes end before this option's length byte, though the header declares more.
        case cutBeforeLength
        /// The captured bytes end before this option's kind byte.
        case cutBeforeKind
    }

    public var kind: UInt8
    /// The option's length byte (1 for EOL and NOP; 0 when it was not read).
    public var length: Int
    /// Offset of the option from the start of the option bytes.
    public var offset: Int
    public var value: Value

    /// Whether the walk ends after this option (the list is cut or malformed there).
    public var endsList: Bool {
        switch value {
        case .badLength, .cut, .cutBeforeLength, .cutBeforeKind, .experimentalWithoutMagic: true
        case .endOfList: true
        default: false
        }
    }
}

/// Up to four SACK blocks held by value.
public struct SACKBlocks: Sendable, Hashable {
    public var count: Int
    private var edges: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)

    public init(count: Int = 0) { self.count = count }

    public static func == (lhs: SACKBlocks, rhs: SACKBlocks) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return (0..<lhs.count).allSatisfy { lhs[$0] == rhs[$0] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for i in 0..<count { hasher.combine(self[i].left); hasher.combine(self[i].right) }
    }

    public subscript(index: Int) -> (left: UInt32, right: UInt32) {
        get {
            withUnsafeBytes(of: edges) { raw in
                let words = raw.bindMemory(to: UInt32.self)
                return (words[2 * index], words[2 * index + 1])
            }
        }
        set {
            withUnsafeMutableBytes(of: &edges) { raw in
                let words = raw.bindMemory(to: UInt32.self)
                words[2 * index] = newValue.left
                words[2 * index + 1] = newValue.right
            }
        }
    }
}

/// Walks TCP options without allocating. `declaredLength` is what the data offset says (header minus 20);
/// the bytes may be fewer when the snap length cut the header.
public struct TCPOptionIterator: IteratorProtocol, Sequence {
    private let bytes: UnsafeRawBufferPointer
    private let declaredLength: Int
    private var offset = 0
    private var done = false

    public init(_ options: UnsafeRawBufferPointer, declaredLength: Int? = nil) {
        self.bytes = options
        self.declaredLength = declaredLength ?? options.count
    }

    public mutating func next() -> TCPOption? {
        guard !done, offset < declaredLength else { return nil }
        let option = read()
        if option.endsList { done = true }
        return option
    }

    private mutating func read() -> TCPOption {
        let start = offset
        guard start < bytes.count else { return TCPOption(kind: 0, length: 0, offset: start, value: .cutBeforeKind) }
        let kind = bytes[start]
        if kind == 0 { return TCPOption(kind: 0, length: 1, offset: start, value: .endOfList) }
        if kind == 1 {
            offset += 1
            return TCPOption(kind: 1, length: 1, offset: start, value: .noOperation)
        }
        guard start + 1 < bytes.count else {
            let value: TCPOption.Value = start + 1 < declaredLength ? .cutBeforeLength : .badLength
            return TCPOption(kind: kind, length: 0, offset: start, value: value)
        }
        let length = Int(bytes[start + 1])
        guard length >= 2, start + length <= declaredLength else {
            return TCPOption(kind: kind, length: length, offset: start, value: .badLength)
        }
        guard start + length <= bytes.count else { return TCPOption(kind: kind, length: length, offset: start, value: .cut) }
        offset += length
        let data = bytes.slice(start + 2, start + length)
        return TCPOption(kind: kind, length: length, offset: start, value: Self.value(kind: kind, data: data))
    }

    private static func value(kind: UInt8, data: UnsafeRawBufferPointer) -> TCPOption.Value {
        switch kind {
        case 2: return .maximumSegmentSize(data.count >= 2 ? data.u16(0) : nil)
        case 3: return .windowScale(data.count >= 1 ? data[0] : nil)
        case 4: return .sackPermitted
        case 5:
            guard data.count % 8 == 0 else { return .invalidSACK }
            var blocks = SACKBlocks(count: Swift.min(data.count / 8, 4))
            for i in 0..<blocks.count { blocks[i] = (data.u32(8 * i), data.u32(8 * i + 4)) }
            return .sack(blocks)
        case 8:
            guard data.count >= 8 else { return .shortTimestamp }
            return .timestamp(value: data.u32(0), echoReply: data.u32(4))
        case 34: return .fastOpen(cookie: data, experimental: false)
        case 254:
            guard data.count >= 2 else { return .experimentalWithoutMagic }
            let magic = data.u16(0)
            return magic == 0xf989 ? .fastOpen(cookie: data.slice(2), experimental: true) : .experimental(magic: magic)
        default: return .other(data: data)
        }
    }
}
