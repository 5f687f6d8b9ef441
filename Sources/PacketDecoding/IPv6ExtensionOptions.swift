/// The options inside an IPv6 hop-by-hop or destination-options header (RFC 8200 section 4.2), read from the
/// captured frame when a printer asks for them (tcpdump shows them with -v); the decoder itself only walks the
/// extension chain.
public struct IPv6ExtensionOptions: Sequence, IteratorProtocol {
    public enum Option: Equatable {
        case pad1
        case padN
        /// Router alert (RFC 2711) and its value.
        case routerAlert(UInt16)
        case other(type: UInt8, length: Int)
        /// The option runs past the header or the captured bytes.
        case cut(type: UInt8)
        /// A known option whose length is wrong for it.
        case invalidLength(type: UInt8, length: Int)
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var done = false

    /// The options of `packet`'s IPv6 extension header number `index` (0 is the first after the fixed header),
    /// or none when that header is not hop-by-hop or destination options, or was not captured whole.
    public init(frame: UnsafeRawBufferPointer, packet: DecodedPacket, extensionAt index: Int) {
        guard case .ipv6(let header) = packet.network, let ext = header.extension(at: index), ext.type == 0 || ext.type == 60 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let start = extensionStart(header, in: packet, at: index)
        bytes = start + ext.length <= frame.count ? frame.slice(start + 2, start + ext.length) : frame.slice(0, 0)
    }

    public mutating func next() -> Option? {
        guard !done, offset < bytes.count else { return nil }
        let type = bytes[offset]
        if type == 0 {
            offset += 1
            return .pad1
        }
        guard offset + 2 <= bytes.count, offset + 2 + Int(bytes[offset + 1]) <= bytes.count else {
            done = true
            return .cut(type: type)
        }
        let length = Int(bytes[offset + 1])
        defer { offset += 2 + length }
        switch type {
        case 1:
            return .padN
        case 5:
            guard length == 2 else { return .invalidLength(type: type, length: length) }
            return .routerAlert(bytes.u16(offset + 2))
        default:
            return .other(type: type, length: length)
        }
    }
}

/// The fields after the first four bytes of an IPv6 routing header of type 0 or 2 (RFC 5095, RFC 6275): a
/// reserved word and the addresses, read from the captured frame for printers.
public struct IPv6RoutingAddresses {
    private let bytes: UnsafeRawBufferPointer
    /// The reserved word, when captured.
    public let reserved: UInt32?
    /// Addresses the header declares (its length in 8-byte units, halved).
    public let declaredCount: Int

    public init(frame: UnsafeRawBufferPointer, packet: DecodedPacket, extensionAt index: Int) {
        guard case .ipv6(let header) = packet.network, let ext = header.extension(at: index), ext.type == 43 else {
            bytes = frame.slice(0, 0)
            reserved = nil
            declaredCount = 0
            return
        }
        let start = extensionStart(header, in: packet, at: index)
        reserved = start + 8 <= frame.count ? frame.u32(start + 4) : nil
        bytes = frame.slice(start + 8, start + ext.length)
        declaredCount = (ext.length / 8 - 1) / 2
    }

    /// Address `index`, or nil when it was not captured.
    public func address(at index: Int) -> IPAddress? {
        let at = index * 16
        guard at + 16 <= bytes.count else { return nil }
        return .v6(high: bytes.u64(at), low: bytes.u64(at + 8))
    }
}

/// Where extension header number `index` starts in the captured frame.
private func extensionStart(_ header: IPv6Header, in packet: DecodedPacket, at index: Int) -> Int {
    (0..<index).reduce(packet.networkOffset + 40) { $0 + (header.extension(at: $1)?.length ?? 0) }
}
