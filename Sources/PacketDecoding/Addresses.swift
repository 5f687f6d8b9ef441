/// Shared value types every layer above decoding speaks in. No Foundation, nothing allocated per packet.

/// A capture timestamp, nanoseconds resolution, since the Unix epoch.
public struct Timestamp: Sendable, Hashable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// A time from a capture header's seconds and sub-second count, carrying whole seconds out of a sub-second
    /// count of a billion or more (files can hold a `tv_usec` of up to 2^32 - 1, which libpcap scales to
    /// nanoseconds) and saturating at the ends of the `Int64` range instead of overflowing.
    public init(seconds: Int64, subsecondNanoseconds: Int64) {
        let carried = subsecondNanoseconds / 1_000_000_000
        var remainder = subsecondNanoseconds % 1_000_000_000
        var whole = seconds.addingReportingOverflow(carried)
        if remainder < 0 {
            remainder += 1_000_000_000
            if !whole.overflow { whole = whole.partialValue.subtractingReportingOverflow(1) }
        }
        if whole.overflow {
            self.seconds = carried >= 0 ? .max : .min
            self.nanoseconds = carried >= 0 ? 999_999_999 : 0
        } else {
            self.seconds = whole.partialValue
            self.nanoseconds = Int32(remainder)
        }
    }

    public var secondsSinceEpoch: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `self - earlier`, in seconds. Computed in floating point so two times at opposite ends of the range
    /// (a hostile file can hold both) give a huge difference rather than an integer overflow.
    public func seconds(since earlier: Timestamp) -> Double {
        let (whole, overflow) = seconds.subtractingReportingOverflow(earlier.seconds)
        let wholeSeconds = overflow ? Double(seconds) - Double(earlier.seconds) : Double(whole)
        return wholeSeconds + Double(Int64(nanoseconds) - Int64(earlier.nanoseconds)) / 1e9
    }

    /// `self + delta` seconds, saturating at the ends of the range; a NaN delta changes nothing.
    public func adding(seconds delta: Double) -> Timestamp {
        guard !delta.isNaN else { return self }
        // 9.2e18 is just inside Int64's range; anything beyond saturates.
        let limit = 9.2e18
        let clamped = min(max(delta, -limit), limit)
        let whole = clamped.rounded(.down)
        let nanos = Int64(nanoseconds) + Int64(((clamped - whole) * 1e9).rounded(.down))
        let (sum, overflow) = seconds.addingReportingOverflow(Int64(whole))
        if overflow { return whole > 0 ? Timestamp(seconds: .max, nanoseconds: 999_999_999) : Timestamp(seconds: .min, nanoseconds: 0) }
        return Timestamp(seconds: sum, subsecondNanoseconds: nanos)
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
    public var description: String { withText { String(decoding: $0, as: UTF8.self) } }

    /// The text `description` holds, written into a stack buffer and lent to `body`: the one formatter for
    /// addresses (packet lines and JSON append these bytes; nothing is allocated).
    public func withText<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            var count = 0
            func put(_ byte: UInt8) { buffer[count] = byte; count += 1 }
            func decimal(_ value: UInt32) {
                if value >= 100 { put(UInt8(ascii: "0") + UInt8(value / 100)) }
                if value >= 10 { put(UInt8(ascii: "0") + UInt8(value / 10 % 10)) }
                put(UInt8(ascii: "0") + UInt8(value % 10))
            }
            func dotted(_ a: UInt32) {
                decimal(a >> 24); put(UInt8(ascii: "."))
                decimal((a >> 16) & 0xff); put(UInt8(ascii: "."))
                decimal((a >> 8) & 0xff); put(UInt8(ascii: "."))
                decimal(a & 0xff)
            }
            switch self {
            case .v4(let a):
                dotted(a)
            case .v6(let high, let low):
                if high == 0 && (low >> 32) == 0xffff {
                    // IPv4-mapped addresses read better in their IPv4 form, as tcpdump prints them.
                    for byte in "::ffff:".utf8 { put(byte) }
                    dotted(UInt32(truncatingIfNeeded: low))
                    break
                }
                func group(_ i: Int) -> UInt16 {
                    i < 4 ? UInt16(truncatingIfNeeded: high >> UInt64(48 - 16 * i))
                        : UInt16(truncatingIfNeeded: low >> UInt64(48 - 16 * (i - 4)))
                }
                var bestStart = -1, bestLength = 0, runStart = -1
                for i in 0...8 {
                    if i < 8 && group(i) == 0 {
                        if runStart < 0 { runStart = i }
                    } else if runStart >= 0 {
                        if i - runStart > bestLength && i - runStart >= 2 { bestStart = runStart; bestLength = i - runStart }
                        runStart = -1
                    }
                }
                if bestStart == 0 && bestLength == 6 {
                    // IPv4-compatible (::a.b.c.d): the last 32 bits in dotted form, as tcpdump and inet_ntop print them.
                    put(UInt8(ascii: ":")); put(UInt8(ascii: ":"))
                    dotted(UInt32(truncatingIfNeeded: low))
                    break
                }
                let digits: StaticString = "0123456789abcdef"
                var i = 0
                var needColon = false
                while i < 8 {
                    if i == bestStart {
                        put(UInt8(ascii: ":")); put(UInt8(ascii: ":"))
                        i += bestLength
                        needColon = false
                        continue
                    }
                    if needColon { put(UInt8(ascii: ":")) }
                    let value = group(i)
                    var started = false
                    for shift in stride(from: 12, through: 0, by: -4) {
                        let nibble = Int((value >> UInt16(shift)) & 0xf)
                        if nibble != 0 || started || shift == 0 {
                            put(digits.utf8Start[nibble])
                            started = true
                        }
                    }
                    needColon = true
                    i += 1
                }
            }
            return body(UnsafeBufferPointer(rebasing: buffer[0..<count]))
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
