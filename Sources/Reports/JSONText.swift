import PacketDecoding

/// A growable byte buffer written through a pointer: JSON is built from many pieces of a few bytes each, and
/// Array.append(contentsOf:) costs more per call than the copy itself.
final class JSONBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 2048) {
        self.capacity = capacity
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// `"name":` with one capacity check.
    func appendKey(_ name: UnsafeBufferPointer<UInt8>) {
        reserve(name.count + 3)
        base[count] = UInt8(ascii: "\"")
        if let source = name.baseAddress { (base + count + 1).update(from: source, count: name.count) }
        base[count + 1 + name.count] = UInt8(ascii: "\"")
        base[count + 2 + name.count] = UInt8(ascii: ":")
        count += name.count + 3
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ source: UnsafeRawPointer?, count length: Int) {
        guard length > 0, let source else { return }
        reserve(length)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: length)
        count += length
    }
}

/// Minimal JSON text building for the NDJSON and HAR writers: keys in a fixed order, strings escaped per RFC 8259.
/// Bytes are written into one pointer-backed buffer (one exchange's line costs two allocations).
struct JSONText {
    let out = JSONBuffer()

    init() {}

    /// A copy of the bytes written.
    var bytes: [UInt8] { [UInt8](out.bytes) }

    var text: String { String(decoding: out.bytes, as: UTF8.self) }

    mutating func raw(_ fragment: StaticString) {
        // Literals normally point at their bytes (no closure, so no retain of the buffer); a one-character
        // literal may be stored as a scalar instead.
        if fragment.hasPointerRepresentation {
            out.append(fragment.utf8Start, count: fragment.utf8CodeUnitCount)
        } else {
            fragment.withUTF8Buffer { out.append($0.baseAddress, count: $0.count) }
        }
    }

    /// Text already valid as JSON. Named apart from `raw(_: StaticString)` so that literals, which would pick the
    /// String overload, take the StaticString one (no String, no copy).
    mutating func rawText(_ fragment: String) {
        var fragment = fragment
        fragment.withUTF8 { out.append($0.baseAddress, count: $0.count) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    mutating func string(_ value: String) {
        out.append(UInt8(ascii: "\""))
        // Native strings lend their UTF-8 in place; only a bridged or foreign one is copied.
        if value.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
            var value = value
            value.withUTF8 { escaped($0) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any of the 8 bytes in `word` is a control character, `"` or `\\` (SWAR: a byte below 0x20, or
    /// one equal to 0x22 or 0x5c, sets its high bit in the result; the tests are exact for the word as a whole).
    @inline(__always)
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let below20 = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5c)
        let isQuote = (quote &- ones) & ~quote & highs
        let isBackslash = (backslash &- ones) & ~backslash & highs
        return below20 | isQuote | isBackslash != 0
    }

    private mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        let count = utf8.count
        var plainStart = 0
        var index = 0
        while index < count {
            // Most text needs no escaping: skip it 8 bytes at a time, then look at single bytes only where a
            // word holds something to escape.
            while index + 8 <= count && !Self.needsEscape(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
            }
            guard index < count else { break }
            let byte = base[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { index += 1; continue }
            out.append(base + plainStart, count: index - plainStart)
            out.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
            case 0x0a: out.append(UInt8(ascii: "n"))
            case 0x0d: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                out.append(UInt8(ascii: "u")); out.append(0x30); out.append(0x30)
                out.append(Self.hexDigits[Int(byte >> 4)]); out.append(Self.hexDigits[Int(byte & 0xf)])
            }
            index += 1
            plainStart = index
        }
        out.append(base + plainStart, count: count - plainStart)
    }

    /// `endpoint.description` as a JSON string; IPv4 is written digit by digit without building the String.
    mutating func endpoint(_ endpoint: Endpoint) {
        guard case .v4(let a) = endpoint.address else { string(endpoint.description); return }
        out.append(UInt8(ascii: "\""))
        digits(UInt64(a >> 24), width: 1); out.append(UInt8(ascii: "."))
        digits(UInt64((a >> 16) & 0xff), width: 1); out.append(UInt8(ascii: "."))
        digits(UInt64((a >> 8) & 0xff), width: 1); out.append(UInt8(ascii: "."))
        digits(UInt64(a & 0xff), width: 1); out.append(UInt8(ascii: ":"))
        digits(UInt64(endpoint.port), width: 1)
        out.append(UInt8(ascii: "\""))
    }

    mutating func key(_ name: StaticString) {
        if name.hasPointerRepresentation {
            out.appendKey(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        } else {
            name.withUTF8Buffer { name in out.appendKey(name) }
        }
    }

    mutating func number(_ value: Int) { decimal(Int64(value)) }

    /// `value` in decimal, as `String(value)` spells it, without building a String.
    private mutating func decimal(_ value: Int64) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        digits(value.magnitude, width: 1)
    }

    /// `value` in decimal, left-padded with zeros to at least `width` digits.
    private mutating func digits(_ value: UInt64, width: Int) {
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for the 20 digits of UInt64.max
        withUnsafeMutableBytes(of: &scratch) { scratch in
            var number = value
            var index = scratch.count
            repeat {
                index -= 1
                scratch[index] = 48 + UInt8(number % 10)
                number /= 10
            } while number > 0
            while scratch.count - index < width {
                index -= 1
                scratch[index] = 48
            }
            out.append(scratch.baseAddress.map { $0 + index }, count: scratch.count - index)
        }
    }

    /// Seconds with microsecond precision, no exponent.
    mutating func seconds(_ value: Double) {
        // Beyond about 292,000 years the microseconds do not fit an Int64 (a hostile file's times can): print
        // whole seconds, which is all a Double holds at that size. NaN or infinity cannot be JSON: null.
        guard value.isFinite else { null(); return }
        guard abs(value) < 9e12 else { largeNumber(value, decimals: 6); return }
        let micros = Int64((value * 1_000_000).rounded())
        guard micros >= 0 else {
            // Before 1970: the sign, then the magnitude (the String-based spelling printed "0.-250000").
            out.append(UInt8(ascii: "-"))
            digits(micros.magnitude / 1_000_000, width: 1)
            out.append(UInt8(ascii: "."))
            digits(micros.magnitude % 1_000_000, width: 6)
            return
        }
        digits(UInt64(micros / 1_000_000), width: 1)
        out.append(UInt8(ascii: "."))
        digits(UInt64(micros % 1_000_000), width: 6)
    }

    /// Milliseconds with three decimals (HAR timings).
    mutating func milliseconds(_ value: Double) {
        guard value.isFinite else { null(); return }
        guard value < 9e15 else { largeNumber(value, decimals: 3); return }
        let thousandths = Int64((max(value, 0) * 1000).rounded())
        let fraction = String(thousandths % 1000)
        rawText(String(thousandths / 1000))
        out.append(UInt8(ascii: "."))
        for _ in fraction.utf8.count..<3 { out.append(UInt8(ascii: "0")) }
        rawText(fraction)
    }

    /// A finite value too large for the exact paths, as whole units (saturating at Int64's range) and zeros.
    private mutating func largeNumber(_ value: Double, decimals: Int) {
        let whole = min(max(value.rounded(.towardZero), -9.2e18), 9.2e18)
        rawText(String(Int64(whole)))
        out.append(UInt8(ascii: "."))
        for _ in 0..<decimals { out.append(UInt8(ascii: "0")) }
    }

    mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }
    mutating func null() { raw("null") }
}
