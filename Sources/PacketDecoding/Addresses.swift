/// Shared value types every layer above decoding speaks in. No Foundation, nothing allocated per packet.

/// A capture timestamp, nanoseconds resolution, since the Unix epoch.
public struct Timestamp: Sendable, Hashable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public var secondsSinceEpoch: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `self - earlier`, in seconds.
    public func seconds(since earlier: Timestamp) -> Double {
        Double(seconds - earlier.seconds) + Double(nanoseconds - earlier.nanoseconds) / 1e9
    }
}

/// An IPv4 or IPv6 address held by value (network byte order read into host integers).
public enum IPAddress: Sendable, Hashable {
    case v4(UInt32)
    case v6(high: UInt64, low: UInt64)

    public var isIPv6: Bool {
        if case .v6 = self { return true }
        return false
    }
}

extension IPAddress: CustomStringConvertible {
    /// Dotted quad for IPv4; RFC 5952 text (longest zero run compressed, lower case) for IPv6.
    public var description: String {
        switch self {
        case .v4(let a):
            return "\(a >> 24).\((a >> 16) & 0xff).\((a >> 8) & 0xff).\(a & 0xff)"
        case .v6(let high, let low):
            var groups = [UInt16](repeating: 0, count: 8)
            for i in 0..<4 {
                groups[i] = UInt16(truncatingIfNeeded: high >> (48 - 16 * UInt64(i)))
                groups[4 + i] = UInt16(truncatingIfNeeded: low >> (48 - 16 * UInt64(i)))
            }
            // IPv4-mapped addresses read better in their IPv4 form, as tcpdump prints them.
            if high == 0 && (low >> 32) == 0xffff {
                return "::ffff:" + IPAddress.v4(UInt32(truncatingIfNeeded: low)).description
            }
            var bestStart = -1, bestLength = 0, runStart = -1
            for i in 0...8 {
                if i < 8 && groups[i] == 0 {
                    if runStart < 0 { runStart = i }
                } else if runStart >= 0 {
                    if i - runStart > bestLength && i - runStart >= 2 { bestStart = runStart; bestLength = i - runStart }
                    runStart = -1
                }
            }
            func hex(_ range: Range<Int>) -> String {
                groups[range].map { String($0, radix: 16) }.joined(separator: ":")
            }
            if bestStart < 0 { return hex(0..<8) }
            return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
        }
    }
}

/// An address and a port: one end of a TCP or UDP conversation.
public struct Endpoint: Sendable, Hashable {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }
}

extension Endpoint: CustomStringConvertible {
    /// `ip:port`, IPv6 as `[ip]:port`.
    public var description: String {
        address.isIPv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
    }
}

/// TCP header flags, bit positions as on the wire.
public struct TCPFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let fin = TCPFlags(rawValue: 0x01)
    public static let syn = TCPFlags(rawValue: 0x02)
    public static let rst = TCPFlags(rawValue: 0x04)
    public static let psh = TCPFlags(rawValue: 0x08)
    public static let ack = TCPFlags(rawValue: 0x10)
    public static let urg = TCPFlags(rawValue: 0x20)
    public static let ece = TCPFlags(rawValue: 0x40)
    public static let cwr = TCPFlags(rawValue: 0x80)
}
