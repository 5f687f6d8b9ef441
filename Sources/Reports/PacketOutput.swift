import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

/// A reusable byte buffer for per-packet text, written to a file descriptor in large chunks.
/// Appending numbers and addresses allocates nothing once the buffer has grown to its working size.
public struct PacketOutput {
    public private(set) var bytes: [UInt8] = []
    public let fileDescriptor: Int32
    /// Flush once this many bytes are pending (0 flushes after every line, for interactive output).
    public var flushThreshold: Int
    /// Set when a write failed (a closed pipe, say); later output is discarded.
    public private(set) var writeFailed = false

    public init(fileDescriptor: Int32 = 1, flushThreshold: Int = 1 << 16) {
        self.fileDescriptor = fileDescriptor
        self.flushThreshold = flushThreshold
        bytes.reserveCapacity(flushThreshold + 4096)
    }

    @inline(__always) public mutating func append(_ byte: UInt8) { bytes.append(byte) }

    public mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    public mutating func append(raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    public mutating func append<T: BinaryInteger>(decimal value: T) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            append(decimal: UInt64(-Int64(value)))
            return
        }
        var number = UInt64(value)
        if number < 10 { bytes.append(48 + UInt8(number)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch for up to 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var index = scratch.count
            while number > 0 {
                index -= 1
                scratch[index] = 48 + UInt8(number % 10)
                number /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[index...]))
        }
    }

    /// `value` in decimal, left-padded with zeros to `width` digits.
    public mutating func append<T: BinaryInteger>(decimal value: T, width: Int) {
        var magnitude = UInt64(value)
        var digits = 1
        while magnitude >= 10 { magnitude /= 10; digits += 1 }
        if digits < width { for _ in digits..<width { bytes.append(48) } }
        append(decimal: value)
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    public mutating func append(hexByte value: UInt8) {
        Self.hexDigits.withUTF8Buffer { digits in
            bytes.append(digits[Int(value >> 4)])
            bytes.append(digits[Int(value & 0x0f)])
        }
    }

    /// Lower-case hex without leading zeros.
    public mutating func append(hex value: UInt16) {
        Self.hexDigits.withUTF8Buffer { digits in
            var started = false
            for shift in stride(from: 12, through: 0, by: -4) {
                let nibble = Int((value >> UInt16(shift)) & 0xf)
                if nibble != 0 || started || shift == 0 {
                    bytes.append(digits[nibble])
                    started = true
                }
            }
        }
    }

    /// Dotted quad, or RFC 5952 IPv6 text (as tcpdump and `IPAddress.description` print them).
    public mutating func append(_ address: IPAddress) {
        switch address {
        case .v4(let a):
            append(decimal: a >> 24); append(UInt8(ascii: "."))
            append(decimal: (a >> 16) & 0xff); append(UInt8(ascii: "."))
            append(decimal: (a >> 8) & 0xff); append(UInt8(ascii: "."))
            append(decimal: a & 0xff)
        case .v6(let high, let low):
            if high == 0 && (low >> 32) == 0xffff {
                append("::ffff:")
                append(IPAddress.v4(UInt32(truncatingIfNeeded: low)))
                return
            }
            @inline(__always) func group(_ i: Int) -> UInt16 {
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
            var i = 0
            var needColon = false
            while i < 8 {
                if i == bestStart {
                    append("::")
                    i += bestLength
                    needColon = false
                    continue
                }
                if needColon { append(UInt8(ascii: ":")) }
                append(hex: group(i))
                needColon = true
                i += 1
            }
        }
    }

    public mutating func append(_ mac: MACAddress) {
        for shift in stride(from: 40, through: 0, by: -8) {
            if shift != 40 { append(UInt8(ascii: ":")) }
            append(hexByte: UInt8(truncatingIfNeeded: mac.rawValue >> UInt64(shift)))
        }
    }

    /// Ends a line and flushes if enough is pending.
    public mutating func endLine() {
        bytes.append(10)
        if bytes.count >= flushThreshold { flush() }
    }

    /// Writes everything pending. Returns false if the descriptor refused it.
    @discardableResult
    public mutating func flush() -> Bool {
        defer { bytes.removeAll(keepingCapacity: true) }
        guard !writeFailed, !bytes.isEmpty else { return !writeFailed }
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let written = write(fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
        if !ok { writeFailed = true }
        return ok
    }
}
