/// How values are written for `tc`. Rates only ever in bit units: to tc `kbps` means kilobytes per second.
public enum TCUnits {
    /// `32kbit`, `2mbit`, `10gbit`, or `1500bit`.
    public static func rate(bitsPerSecond bits: UInt64) -> String {
        if bits >= 1_000_000_000 && bits % 1_000_000_000 == 0 { return "\(bits / 1_000_000_000)gbit" }
        if bits >= 1_000_000 && bits % 1_000_000 == 0 { return "\(bits / 1_000_000)mbit" }
        if bits >= 1_000 && bits % 1_000 == 0 { return "\(bits / 1_000)kbit" }
        return "\(bits)bit"
    }

    /// `100ms`, or `1500us` when not a whole number of milliseconds.
    public static func time(microseconds: UInt64) -> String {
        microseconds % 1_000 == 0 ? "\(microseconds / 1_000)ms" : "\(microseconds)us"
    }

    /// `10%`, `0.5%`.
    public static func percent(_ value: Double) -> String {
        if value == value.rounded() { return "\(Int(value))%" }
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text + "%"
    }

    /// A human rate: `32 kbit/s`, `2 Mbit/s`.
    public static func humanRate(bitsPerSecond bits: UInt64) -> String {
        if bits >= 1_000_000_000 && bits % 1_000_000 == 0 { return trim(Double(bits) / 1e9) + " Gbit/s" }
        if bits >= 1_000_000 && bits % 1_000 == 0 { return trim(Double(bits) / 1e6) + " Mbit/s" }
        if bits >= 1_000 { return trim(Double(bits) / 1e3) + " kbit/s" }
        return "\(bits) bit/s"
    }

    /// A human duration: `100 ms`, `1.5 ms`.
    public static func humanTime(microseconds: UInt64) -> String {
        trim(Double(microseconds) / 1000) + " ms"
    }

    public static func trim(_ value: Double) -> String {
        if value == value.rounded() { return String(Int64(value)) }
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
