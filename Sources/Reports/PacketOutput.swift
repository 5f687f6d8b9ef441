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
    /// Set by a packet printer that stopped where tcpdump's would long-jump out of its printer at the end of the
    /// captured bytes (a field read past them, ND_TRUNCATED) rather than end the line itself: tcpdump then dumps
    /// the whole frame for -x/-X/-A, link header included. PacketLineRenderer clears it before each packet.
    public var printerRanOutOfBytes = false

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

    /// JSON string content (RFC 8259), with the same escapes as JSONText: `\"`, `\\`, `\n`, `\r`, `\t`, other
    /// control bytes as `\u00XX`. `bytesAboveASCII` escapes bytes above 0x7e as `\u00XX` too, for bytes that are
    /// not known to be UTF-8 (DNS names and TXT strings).
    public mutating func appendJSONEscaped<Bytes: Sequence<UInt8>>(_ source: Bytes, bytesAboveASCII: Bool = false) {
        for byte in source {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0a: append("\\n")
            case 0x0d: append("\\r")
            case 0x09: append("\\t")
            default:
                if byte < 0x20 || (bytesAboveASCII && byte > 0x7e) {
                    append("\\u00")
                    append(hexByte: byte)
                } else {
                    append(byte)
                }
            }
        }
    }

    /// `"a","b",...` for names that need no escaping (the brackets are the caller's).
    public mutating func appendJSONStrings<Names: Sequence<StaticString>>(_ names: Names) {
        var first = true
        for name in names {
            if !first { append(",") }
            first = false
            append("\"")
            append(name)
            append("\"")
        }
    }

    /// Takes back the last byte appended (and not yet flushed).
    public mutating func removeLast() { if !bytes.isEmpty { bytes.removeLast() } }

    public mutating func append<T: BinaryInteger>(decimal value: T) {
        if value < 0 {
            // The magnitude, not the negation: -Int64.min does not fit in an Int64.
            bytes.append(UInt8(ascii: "-"))
            append(decimal: UInt64(truncatingIfNeeded: value.magnitude))
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
        var magnitude = UInt64(truncatingIfNeeded: value.magnitude)
        var digits = 1
        while magnitude >= 10 { magnitude /= 10; digits += 1 }
        if digits < width { for _ in digits..<width { bytes.append(48) } }
        append(decimal: value)
    }

    /// A capture time as seconds since 1970 with `fractionDigits` (at most 9) decimals, exact for every value
    /// a file can hold: `-0.250000000` for a quarter second before 1970, not `-1.750000000`.
    public mutating func append(seconds time: Timestamp, fractionDigits: Int = 9) {
        let digits = min(max(fractionDigits, 1), 9)
        var scale: Int64 = 1
        for _ in digits..<9 { scale *= 10 }
        let nanoseconds = Int64(min(max(time.nanoseconds, 0), 999_999_999))
        if time.seconds < 0 && nanoseconds > 0 {
            // seconds + nanoseconds/1e9 with seconds negative: print -(|seconds| - 1).(1e9 - nanoseconds).
            bytes.append(UInt8(ascii: "-"))
            append(decimal: time.seconds.magnitude - 1)
            bytes.append(UInt8(ascii: "."))
            append(decimal: (1_000_000_000 - nanoseconds) / scale, width: digits)
        } else {
            append(decimal: time.seconds)
            bytes.append(UInt8(ascii: "."))
            append(decimal: nanoseconds / scale, width: digits)
        }
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

    /// Dotted quad, or RFC 5952 IPv6 text, as tcpdump prints them (`IPAddress.withText`, the one formatter).
    public mutating func append(_ address: IPAddress) {
        address.withText { bytes.append(contentsOf: $0) }
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
