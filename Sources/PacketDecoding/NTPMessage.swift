/// An NTP message (RFC 5905; control messages RFC 1305 appendix B) as captured. Reads are bounds-checked and
/// return nil where the captured bytes end. Borrows the packet's memory (not `Sendable`).
public struct NTPMessage {
    public let bytes: UnsafeRawBufferPointer

    public static let port: UInt16 = 123
    /// A time message's fixed part: 48 bytes (RFC 5905 figure 8).
    public static let timeMessageLength = 48

    public init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private var first: UInt8? { bytes.isEmpty ? nil : bytes.u8(0) }
    /// Leap indicator (0-3), version (0-7) and mode (0-7) from the first byte.
    public var leapIndicator: UInt8? { first.map { $0 >> 6 } }
    public var version: UInt8? { first.map { ($0 >> 3) & 7 } }
    public var mode: UInt8? { first.map { $0 & 7 } }
    public var stratum: UInt8? { bytes.count >= 2 ? bytes.u8(1) : nil }
    public var poll: Int8? { bytes.count >= 3 ? Int8(bitPattern: bytes.u8(2)) : nil }
    public var precision: Int8? { bytes.count >= 4 ? Int8(bitPattern: bytes.u8(3)) : nil }

    public func u8(at offset: Int) -> UInt8? { offset + 1 <= bytes.count ? bytes.u8(offset) : nil }
    public func u16(at offset: Int) -> UInt16? { offset + 2 <= bytes.count ? bytes.u16(offset) : nil }
    /// A 32-bit word (root delay at 4, root dispersion at 8, reference id at 12).
    public func word(at offset: Int) -> UInt32? { offset + 4 <= bytes.count ? bytes.u32(offset) : nil }
    /// A 64-bit timestamp, seconds since 1900 in the high 32 bits (reference at 16, origin at 24, receive at 32,
    /// transmit at 40).
    public func timestamp(at offset: Int) -> UInt64? { offset + 8 <= bytes.count ? bytes.u64(offset) : nil }

    /// tcpdump's names of the eight modes (print-ntp.c's table), index = mode.
    public static let modeNames: [String] = [
        "unspecified", "symmetric active", "symmetric passive", "Client", "Server", "Broadcast",
        "Control Message", "Reserved",
    ]
}
