/// Minimal JSON text building for the NDJSON and HAR writers: keys in a fixed order, strings escaped per RFC 8259.
/// Bytes are appended to one buffer (one exchange's line is built with a handful of allocations).
struct JSONText {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(2048) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func raw(_ fragment: StaticString) {
        fragment.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ fragment: String) {
        var fragment = fragment
        fragment.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    mutating func string(_ value: String) {
        var value = value
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8 { utf8 in
            var plainStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index]))
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0a: bytes.append(UInt8(ascii: "n"))
                case 0x0d: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xf)]])
                }
                plainStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func number(_ value: Int) { raw(String(value)) }

    /// Seconds with microsecond precision, no exponent.
    mutating func seconds(_ value: Double) {
        let micros = Int64((value * 1_000_000).rounded())
        let fraction = String(micros % 1_000_000)
        raw(String(micros / 1_000_000))
        bytes.append(UInt8(ascii: "."))
        for _ in fraction.utf8.count..<6 { bytes.append(UInt8(ascii: "0")) }
        raw(fraction)
    }

    /// Milliseconds with three decimals (HAR timings).
    mutating func milliseconds(_ value: Double) {
        let thousandths = Int64((max(value, 0) * 1000).rounded())
        let fraction = String(thousandths % 1000)
        raw(String(thousandths / 1000))
        bytes.append(UInt8(ascii: "."))
        for _ in fraction.utf8.count..<3 { bytes.append(UInt8(ascii: "0")) }
        raw(fraction)
    }

    mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }
    mutating func null() { raw("null") }
}
