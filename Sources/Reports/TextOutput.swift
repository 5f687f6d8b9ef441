import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

/// The one byte sink for what capture prints or saves as text: packet lines and packet JSON, exchanges, TLS sessions,
/// statistics, follow-stream dumps and HAR files. Pieces of a few bytes each are copied through a pointer (a call to
/// Array.append(contentsOf:) costs more than such a copy), numbers and addresses are written without building a
/// String, and the bytes go to `fileDescriptor` in large writes. Once it has grown to its working size, appending
/// allocates nothing. JSON values are written by the extension in TextOutputJSON.swift.
///
/// A value type: a copy that is written to gets its own buffer (copy on write), as an Array would.
public struct TextOutput {
    /// Owns the buffer; the pointer, count and capacity live in the struct so that appending touches no class field.
    private final class Allocation {
        let base: UnsafeMutablePointer<UInt8>
        init(capacity: Int) { base = .allocate(capacity: capacity) }
        deinit { base.deallocate() }
    }

    private var allocation: Allocation
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes pending (appended and not yet flushed).
    public private(set) var count = 0
    public let fileDescriptor: Int32
    /// Flush once this many bytes are pending (0 flushes after every line, for interactive output).
    public var flushThreshold: Int
    /// Set when a write failed (a closed pipe, a full disk); later output is discarded.
    public private(set) var writeFailed = false
    /// The errno of the failed write.
    public private(set) var writeError: Int32 = 0
    /// Set by a packet printer that stopped where tcpdump's would long-jump out of its printer at the end of the
    /// captured bytes (a field read past them, ND_TRUNCATED) rather than end the line itself: tcpdump then dumps
    /// the whole frame for -x/-X/-A, link header included. PacketLineRenderer clears it before each packet.
    public var printerRanOutOfBytes = false

    /// `fileDescriptor` -1 keeps everything in memory (tests, and text built to be returned).
    public init(fileDescriptor: Int32 = 1, flushThreshold: Int = 1 << 16) {
        self.fileDescriptor = fileDescriptor
        self.flushThreshold = flushThreshold
        // The working size, not more: a threshold of Int.max (flush only when asked) must not overflow or reserve it.
        capacity = min(max(flushThreshold, 0), 1 << 20) + 4096
        allocation = Allocation(capacity: capacity)
        base = allocation.base
    }

    /// A copy of the pending bytes.
    public var bytes: [UInt8] { [UInt8](pending) }

    /// The pending bytes as text.
    public var text: String { String(decoding: pending, as: UTF8.self) }

    public var last: UInt8? { count > 0 ? base[count - 1] : nil }

    private var pending: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Makes room for `extra` more bytes in a buffer this value alone owns.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if _slowPath(count + extra > capacity || !isKnownUniquelyReferenced(&allocation)) { reallocate(count + extra) }
    }

    private mutating func reallocate(_ needed: Int) {
        var newCapacity = capacity
        while newCapacity < needed { newCapacity *= 2 }
        let fresh = Allocation(capacity: newCapacity)
        fresh.base.update(from: base, count: count)
        allocation = fresh
        base = fresh.base
        capacity = newCapacity
    }

    @inline(__always) public mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    public mutating func append(_ text: StaticString) {
        // Literals normally point at their bytes; a one-character literal may be stored as a scalar instead.
        if text.hasPointerRepresentation {
            append(raw: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        } else {
            text.withUTF8Buffer { append(raw: UnsafeRawBufferPointer($0)) }
        }
    }

    public mutating func append(_ text: String) {
        // Native strings lend their UTF-8 in place; only a bridged or foreign one is copied.
        if text.utf8.withContiguousStorageIfAvailable({ append(raw: UnsafeRawBufferPointer($0)) }) == nil {
            var text = text
            text.withUTF8 { append(raw: UnsafeRawBufferPointer($0)) }
        }
    }

    public mutating func append(raw source: UnsafeRawBufferPointer) {
        guard let start = source.baseAddress, source.count > 0 else { return }
        reserve(source.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: start, byteCount: source.count)
        count += source.count
    }

    public mutating func append(_ source: [UInt8]) {
        source.withUnsafeBytes { append(raw: $0) }
    }

    /// Takes back the last byte appended (and not yet flushed).
    public mutating func removeLast() {
        if count > 0 { count -= 1 }
    }

    public mutating func append<T: BinaryInteger>(decimal value: T) {
        if value < 0 {
            // The magnitude, not the negation: -Int64.min does not fit in an Int64.
            append(UInt8(ascii: "-"))
            append(digits: UInt64(truncatingIfNeeded: value.magnitude), width: 1)
        } else {
            append(digits: UInt64(value), width: 1)
        }
    }

    /// `value` in decimal, left-padded with zeros to `width` digits (after the sign).
    public mutating func append<T: BinaryInteger>(decimal value: T, width: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        append(digits: UInt64(truncatingIfNeeded: value.magnitude), width: width)
    }

    private mutating func append(digits value: UInt64, width: Int) {
        if value < 10 && width <= 1 { append(48 + UInt8(value)); return }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of UInt64.max
        withUnsafeMutableBytes(of: &scratch) { scratch in
            var number = value
            var index = scratch.count
            repeat {
                index -= 1
                scratch[index] = 48 + UInt8(number % 10)
                number /= 10
            } while number > 0
            while scratch.count - index < min(width, scratch.count) {
                index -= 1
                scratch[index] = 48
            }
            append(raw: UnsafeRawBufferPointer(rebasing: scratch[index...]))
        }
    }

    /// A capture time as seconds since 1970 with `fractionDigits` (at most 9) decimals, truncated as tcpdump's -tt
    /// does, and exact for every value a file can hold: `-0.250000000` for a quarter second before 1970.
    public mutating func append(seconds time: Timestamp, fractionDigits: Int = 9) {
        let digits = min(max(fractionDigits, 1), 9)
        var scale: Int64 = 1
        for _ in digits..<9 { scale *= 10 }
        let nanoseconds = Int64(min(max(time.nanoseconds, 0), 999_999_999))
        if time.seconds < 0 && nanoseconds > 0 {
            // seconds + nanoseconds/1e9 with seconds negative: print -(|seconds| - 1).(1e9 - nanoseconds).
            append(UInt8(ascii: "-"))
            append(decimal: time.seconds.magnitude - 1)
            append(UInt8(ascii: "."))
            append(decimal: (1_000_000_000 - nanoseconds) / scale, width: digits)
        } else {
            append(decimal: time.seconds)
            append(UInt8(ascii: "."))
            append(decimal: nanoseconds / scale, width: digits)
        }
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    public mutating func append(hexByte value: UInt8) {
        reserve(2)
        base[count] = Self.hexDigits.utf8Start[Int(value >> 4)]
        base[count + 1] = Self.hexDigits.utf8Start[Int(value & 0x0f)]
        count += 2
    }

    /// Lower-case hex without leading zeros.
    public mutating func append(hex value: UInt16) {
        var started = false
        for shift in stride(from: 12, through: 0, by: -4) {
            let nibble = Int((value >> UInt16(shift)) & 0xf)
            if nibble != 0 || started || shift == 0 {
                append(Self.hexDigits.utf8Start[nibble])
                started = true
            }
        }
    }

    /// Dotted quad, or RFC 5952 IPv6 text, as tcpdump prints them (`IPAddress.withText`, the one formatter).
    public mutating func append(_ address: IPAddress) {
        address.withText { append(raw: UnsafeRawBufferPointer($0)) }
    }

    public mutating func append(_ mac: MACAddress) {
        for shift in stride(from: 40, through: 0, by: -8) {
            if shift != 40 { append(UInt8(ascii: ":")) }
            append(hexByte: UInt8(truncatingIfNeeded: mac.rawValue >> UInt64(shift)))
        }
    }

    /// Ends a line and flushes if enough is pending.
    public mutating func endLine() {
        append(10)
        flushIfFull()
    }

    /// Flushes if at least `flushThreshold` bytes are pending.
    public mutating func flushIfFull() {
        if count >= flushThreshold { flush() }
    }

    /// Writes everything pending and empties the buffer. Returns false if the descriptor refused it (or has
    /// refused an earlier write); with descriptor -1 it only empties the buffer.
    @discardableResult
    public mutating func flush() -> Bool {
        defer { count = 0 }
        guard !writeFailed, count > 0, fileDescriptor >= 0 else { return !writeFailed }
        var offset = 0
        while offset < count {
            let written = write(fileDescriptor, base + offset, count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                writeError = errno
                writeFailed = true
                return false
            }
            offset += written
        }
        return true
    }
}
