/// What recomputing an Internet checksum (RFC 1071) over the captured bytes found.
public enum ChecksumVerdict: Sendable, Equatable {
    case correct(stored: UInt16)
    /// `expected` is the value the field should hold (tcpdump's `in_cksum_shouldbe`).
    case incorrect(stored: UInt16, expected: UInt16)
}

/// The checksums tcpdump verifies with `-v`, recomputed from a decoded packet's captured bytes: the IPv4 header's,
/// and the TCP, UDP, ICMP or ICMPv6 one over the whole upper-layer message with its pseudo-header.
///
/// A verdict is nil where tcpdump prints none: the layer is absent, a fragment, or not captured whole (snap
/// length, or a TSO frame shorter than its IP length). A plain value: nothing here borrows the packet.
public struct PacketChecksums: Sendable {
    public var ipv4Header: ChecksumVerdict?
    public var transport: ChecksumVerdict?
    /// UDP over IPv4 with a zero checksum field: the sender computed none.
    public var udpChecksumAbsent = false

    public init() {}

    /// `frame` is the captured frame `packet` was decoded from.
    public init(frame: UnsafeRawBufferPointer, packet: DecodedPacket) {
        let start = packet.networkOffset
        var pseudoHeader: UInt32 = 0
        var usesPseudoHeader = true
        var upperStart = 0
        var upperLength = 0
        switch packet.network {
        case .ipv4(let header):
            guard start + header.headerLength <= frame.count else { return }
            let sum = Self.sum(frame.slice(start, start + header.headerLength))
            ipv4Header = Self.verdict(sum: sum, stored: frame.u16(start + 10))
            if header.isFragment { return }
            upperStart = start + header.headerLength
            upperLength = header.totalLength - header.headerLength
            pseudoHeader = Self.sum(header.source) + Self.sum(header.destination) + UInt32(header.protocolNumber)
        case .ipv6(let header):
            if header.fragment != nil { return }
            upperStart = start + 40 + header.extensionsLength
            upperLength = header.payloadLength - header.extensionsLength
            pseudoHeader = Self.sum(header.source) + Self.sum(header.destination) + UInt32(header.protocolNumber)
        default:
            return
        }
        guard upperLength > 0 else { return }
        let checkedField: Int
        switch packet.transport {
        case .tcp:
            checkedField = 16
        case .udp(let datagram):
            upperLength = min(upperLength, max(datagram.length, 8))
            checkedField = 6
            if case .ipv4 = packet.network, upperStart + 8 <= frame.count, frame.u16(upperStart + 6) == 0 {
                udpChecksumAbsent = true
                return
            }
        case .icmp:
            checkedField = 2
            usesPseudoHeader = false  // ICMP over IPv4 sums the message alone
        case .icmpv6:
            checkedField = 2
        default:
            return
        }
        guard upperStart + upperLength <= frame.count else { return }
        pseudoHeader += UInt32(upperLength >> 16) + UInt32(upperLength & 0xffff)
        let sum = (usesPseudoHeader ? pseudoHeader : 0) + Self.sum(frame.slice(upperStart, upperStart + upperLength))
        transport = Self.verdict(sum: sum, stored: frame.u16(upperStart + checkedField))
    }

    /// A folded sum that includes the stored checksum is 0xffff exactly when the checksum is right.
    static func verdict(sum: UInt32, stored: UInt16) -> ChecksumVerdict {
        let folded = fold(sum)
        if folded == 0xffff { return .correct(stored: stored) }
        let computed = ~folded
        return .incorrect(stored: stored, expected: fold(UInt32(stored) + UInt32(computed)))
    }

    static func fold(_ sum: UInt32) -> UInt16 {
        var sum = sum
        while sum > 0xffff { sum = (sum & 0xffff) + (sum >> 16) }
        return UInt16(sum)
    }

    /// The one's-complement sum of big-endian 16-bit words (a last odd byte is padded with zero), not yet folded.
    static func sum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var total: UInt64 = 0
        var index = 0
        while index + 4 <= bytes.count {
            total += UInt64(bytes.u32(index))
            index += 4
        }
        if index + 2 <= bytes.count {
            total += UInt64(bytes.u16(index))
            index += 2
        }
        if index < bytes.count { total += UInt64(bytes[index]) << 8 }
        while total > 0xffff_ffff { total = (total & 0xffff_ffff) + (total >> 32) }
        // 32-bit words sum to the same folded value as their 16-bit halves.
        return UInt32(fold(UInt32(total & 0xffff) + UInt32(total >> 16)))
    }

    static func sum(_ address: IPAddress) -> UInt32 {
        switch address {
        case .v4(let value):
            return (value >> 16) + (value & 0xffff)
        case .v6(let high, let low):
            var total: UInt32 = 0
            for shift: UInt64 in [48, 32, 16, 0] {
                total += UInt32(truncatingIfNeeded: high >> shift) & 0xffff
                total += UInt32(truncatingIfNeeded: low >> shift) & 0xffff
            }
            return total
        }
    }
}
