import PacketDecoding

/// JSON values (RFC 8259) for every JSON capture writes: packets, exchanges, TLS sessions, statistics, HAR. Keys come
/// in a fixed order and are the caller's literals; punctuation is appended as literals (`append("{")`).
extension TextOutput {
    /// `"name":`
    public mutating func key(_ name: StaticString) {
        append(UInt8(ascii: "\""))
        append(name)
        append(UInt8(ascii: "\""))
        append(UInt8(ascii: ":"))
    }

    /// `value` as a JSON string.
    public mutating func string(_ value: String) {
        if value.utf8.withContiguousStorageIfAvailable({ string(utf8: UnsafeRawBufferPointer($0)) }) == nil {
            var value = value
            value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
        }
    }

    /// A JSON string of UTF-8 bytes.
    public mutating func string(utf8 value: UnsafeRawBufferPointer) {
        append(UInt8(ascii: "\""))
        appendJSONEscaped(value)
        append(UInt8(ascii: "\""))
    }

    /// `"a","b",...` for names that need no escaping (the brackets are the caller's).
    public mutating func strings<Names: Sequence<StaticString>>(_ names: Names) {
        var first = true
        for name in names {
            if !first { append(UInt8(ascii: ",")) }
            first = false
            append(UInt8(ascii: "\""))
            append(name)
            append(UInt8(ascii: "\""))
        }
    }

    public mutating func number(_ value: Int) { append(decimal: value) }
    public mutating func bool(_ value: Bool) { value ? append("true") : append("false") }
    public mutating func null() { append("null") }

    /// A point in capture time: seconds since 1970 with six decimals, as the packet JSON and `-tt` print it.
    public mutating func time(_ value: Timestamp) {
        append(seconds: value, fractionDigits: 6)
    }

    /// `endpoint.description` as a JSON string (`1.2.3.4:80`, `[::1]:443`).
    public mutating func endpoint(_ endpoint: Endpoint) {
        append(UInt8(ascii: "\""))
        if endpoint.address.isIPv6 { append(UInt8(ascii: "[")) }
        append(endpoint.address)
        if endpoint.address.isIPv6 { append(UInt8(ascii: "]")) }
        append(UInt8(ascii: ":"))
        append(decimal: endpoint.port)
        append(UInt8(ascii: "\""))
    }

    /// A duration in seconds with microsecond precision, no exponent. NaN or infinity cannot be JSON: null.
    public mutating func seconds(_ value: Double) { fixedPoint(value, decimals: 6) }

    /// Milliseconds with three decimals (HAR timings); negative values are clamped to 0.
    public mutating func milliseconds(_ value: Double) { fixedPoint(max(value, 0), decimals: 3) }

    private mutating func fixedPoint(_ value: Double, decimals: Int) {
        guard value.isFinite else { null(); return }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let units = (value.magnitude * scale).rounded()
        if value < 0 && units > 0 { append(UInt8(ascii: "-")) }
        guard units < 9e18 else {
            // Beyond Int64 (a hostile file's times can be): whole units, which is all a Double holds at that size,
            // saturating at Int64's range.
            append(decimal: Int64(min(value.magnitude.rounded(.towardZero), 9.2e18)))
            append(UInt8(ascii: "."))
            append(decimal: 0, width: decimals)
            return
        }
        let whole = UInt64(units), divisor = UInt64(scale)
        append(decimal: whole / divisor)
        append(UInt8(ascii: "."))
        append(decimal: whole % divisor, width: decimals)
    }

    /// JSON string content: `\"`, `\\`, `\n`, `\r`, `\t`, other control bytes as `\u00XX`. `bytesAboveASCII`
    /// escapes bytes above 0x7e as `\u00XX` too, for bytes not known to be UTF-8 (DNS names and TXT strings).
    public mutating func appendJSONEscaped(_ source: UnsafeRawBufferPointer, bytesAboveASCII: Bool = false) {
        guard let raw = source.baseAddress else { return }
        let count = source.count
        var plainStart = 0
        var index = 0
        while index < count {
            // Most text needs no escaping: skip it 8 bytes at a time, then look at single bytes only where a word
            // holds something to escape.
            while index + 8 <= count
                && !Self.needsEscape(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self), bytesAboveASCII) {
                index += 8
            }
            guard index < count else { break }
            let byte = source[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (bytesAboveASCII && byte > 0x7e)
            else { index += 1; continue }
            append(raw: UnsafeRawBufferPointer(rebasing: source[plainStart..<index]))
            append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte)
            case 0x0a: append(UInt8(ascii: "n"))
            case 0x0d: append(UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "t"))
            default: append("u00"); append(hexByte: byte)
            }
            index += 1
            plainStart = index
        }
        append(raw: UnsafeRawBufferPointer(rebasing: source[plainStart..<count]))
    }

    /// Whether any of the 8 bytes in `word` needs escaping: a control character, `"` or `\\`, and with
    /// `aboveASCII` any byte above 0x7e. (SWAR: a matching byte sets its high bit in the result.)
    @inline(__always)
    private static func needsEscape(_ word: UInt64, _ aboveASCII: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let below20 = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5c)
        let isQuote = (quote &- ones) & ~quote & highs
        let isBackslash = (backslash &- ones) & ~backslash & highs
        // 0x7f and above: 0x7f + 1 carries into the high bit, as does any byte that already has it.
        let above = aboveASCII ? ((word & ~highs) &+ (ones &* 0x01)) | word : 0
        return (below20 | isQuote | isBackslash | above) & highs != 0
    }
}
