/// Minimal JSON text building for the NDJSON and HAR writers: keys in a fixed order, strings escaped per RFC 8259.
struct JSONText {
    private(set) var text = ""

    init() { text.reserveCapacity(1024) }

    mutating func raw(_ fragment: String) { text += fragment }

    mutating func string(_ value: String) {
        text += "\""
        var plainStart = value.utf8.startIndex
        var index = plainStart
        let utf8 = value.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                text += String(value[plainStart..<index])
                switch byte {
                case UInt8(ascii: "\""): text += "\\\""
                case UInt8(ascii: "\\"): text += "\\\\"
                case 0x0a: text += "\\n"
                case 0x0d: text += "\\r"
                case 0x09: text += "\\t"
                default:
                    let hex = String(byte, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
                plainStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        text += String(value[plainStart..<utf8.endIndex])
        text += "\""
    }

    mutating func key(_ name: String) {
        string(name)
        text += ":"
    }

    mutating func number(_ value: Int) { text += String(value) }

    /// Seconds with microsecond precision, no exponent.
    mutating func seconds(_ value: Double) {
        let micros = (value * 1_000_000).rounded()
        let whole = Int64(micros) / 1_000_000
        let fraction = Int64(micros) % 1_000_000
        let digits = String(fraction)
        text += "\(whole)." + String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Milliseconds with three decimals (HAR timings).
    mutating func milliseconds(_ value: Double) {
        let thousandths = Int64((max(value, 0) * 1000).rounded())
        let digits = String(thousandths % 1000)
        text += "\(thousandths / 1000)." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    mutating func bool(_ value: Bool) { text += value ? "true" : "false" }
    mutating func null() { text += "null" }
}
