/// The options after an ICMPv6 neighbour discovery message (RFC 4861 section 4.6), walked as tcpdump's
/// icmp6_opt_print walks them: type, length in units of 8 bytes, and the bytes after the two-byte option header.
/// Stops at a zero length (malformed) or an option that runs past the captured bytes; `cut` then says so.
public struct NeighborDiscoveryOptions: Sequence, IteratorProtocol {
    public struct Option {
        public var type: UInt8
        /// In units of 8 bytes, as on the wire.
        public var units: UInt8
        /// The option's bytes after its type and length.
        public var data: UnsafeRawBufferPointer
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var remaining: Int
    /// Whether the walk stopped at a malformed or cut option (tcpdump then prints `[|icmp6]`).
    public private(set) var cut = false

    /// The options of a neighbour solicitation or advertisement (after its 24-byte fixed part) or a router
    /// solicitation (after 8 bytes).
    public init(of message: ICMPMessage) {
        let fixedLength = message.type == 133 ? 8 : 24
        bytes = message.body.slice(fixedLength - 8)
        remaining = message.length - fixedLength
    }

    public mutating func next() -> Option? {
        guard offset < bytes.count, remaining > 0, !cut else { return nil }
        guard offset + 2 <= bytes.count else { cut = true; return nil }
        let units = bytes[offset + 1]
        let size = Int(units) * 8
        guard units != 0, offset + size <= bytes.count else { cut = true; return nil }
        let option = Option(type: bytes[offset], units: units, data: bytes.slice(offset + 2, offset + size))
        offset += size
        remaining -= size
        return option
    }
}
