import Foundation
import PacketDecoding

/// The figures of the text views (sizes, durations, times of day) written straight into a `TextOutput`, with the
/// exact characters `String(format:)` gives for them, without building a String: the default `--http` line is made
/// of these, and formatting them through Foundation took most of its time. Where the integer arithmetic below could
/// round differently from printf (an exact tie, a number too large), the figure is formatted by printf itself.
extension TextOutput {
    /// `312 B`, `4.1 KB`, `12.0 MB` (powers of 1000, as browsers show transfer sizes): printf's `%.1f` of
    /// bytes / 1000 ... with the unit.
    public mutating func append(size bytes: Int) {
        if bytes < 1000 {
            append(decimal: bytes)
            append(" B")
            return
        }
        // Below 999,950 bytes the unit is KB. bytes / 1000 differs from a tie (x.x5) by at least 1/1000 unless it is
        // one, far more than the double's error, so rounding the integer rounds as printf rounds the double.
        let remainder = bytes % 100
        if bytes < 999_950 && remainder != 50 {
            let tenths = bytes / 100 + (remainder > 50 ? 1 : 0)
            append(decimal: tenths / 10)
            append(UInt8(ascii: "."))
            append(decimal: tenths % 10)
            append(" KB")
            return
        }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 { value /= 1000; unit += 1 }
        append(String(format: "%.1f %@", value, units[unit]))
    }

    /// `183 ms`, `3.4 ms`, `12.3 s`.
    public mutating func append(duration seconds: Double) {
        let ms = max(seconds, 0) * 1000
        if ms < 10 {
            append(tenths: ms)
            append(" ms")
        } else if ms < 10_000 {
            // printf's %.0f rounds the double's exact value half to even, as rounded(.toNearestOrEven) does.
            append(decimal: Int(ms.rounded(.toNearestOrEven)))
            append(" ms")
        } else {
            append(tenths: ms / 1000)
            append(" s")
        }
    }

    /// `value` as printf's `%.1f` writes it. Scaling by ten can move a value that is within a hair of a tie across
    /// it, so such values (and values too large for an Int) go through printf.
    private mutating func append(tenths value: Double) {
        let scaled = value * 10
        let fraction = scaled - scaled.rounded(.down)
        guard scaled.isFinite, scaled < 1e15, abs(fraction - 0.5) > 1e-6 else {
            append(String(format: "%.1f", value))
            return
        }
        let tenths = Int(scaled.rounded(.toNearestOrEven))
        append(decimal: tenths / 10)
        append(UInt8(ascii: "."))
        append(decimal: tenths % 10)
    }

    /// `14:02:03.123` in local time (or UTC), the broken-down time taken from `cache` when the second is the same.
    public mutating func append(timeOfDay time: Timestamp, utc: Bool, cache: inout TimeOfDayCache) {
        let milliseconds = Int(time.nanoseconds) / 1_000_000
        let clock = cache.clock(for: time.seconds, utc: utc)
        append(decimal: clock.hour, width: 2)
        append(UInt8(ascii: ":"))
        append(decimal: clock.minute, width: 2)
        append(UInt8(ascii: ":"))
        append(decimal: clock.second, width: 2)
        append(UInt8(ascii: "."))
        // printf's width counts a sign; a timestamp's nanoseconds are never negative, but the text stays printf's.
        if milliseconds < 0 { append(String(format: "%03d", milliseconds)) } else { append(decimal: milliseconds, width: 3) }
    }

    /// `ip:port`, IPv6 as `[ip]:port` (as `Endpoint.description`).
    public mutating func append(_ endpoint: Endpoint) {
        if endpoint.address.isIPv6 {
            append(UInt8(ascii: "["))
            append(endpoint.address)
            append(UInt8(ascii: "]"))
        } else {
            append(endpoint.address)
        }
        append(UInt8(ascii: ":"))
        append(decimal: endpoint.port)
    }
}

/// The last second turned into a time of day: exchanges come many to a second, and the conversion (time zone rules)
/// costs more than the rest of a line.
public struct TimeOfDayCache: Sendable {
    private var seconds: Int64?
    private var utc = false
    private var clock = (hour: Int32(0), minute: Int32(0), second: Int32(0))

    public init() {}

    mutating func clock(for seconds: Int64, utc: Bool) -> (hour: Int32, minute: Int32, second: Int32) {
        if self.seconds != seconds || self.utc != utc {
            var time = time_t(seconds)
            var parts = tm()
            if utc { gmtime_r(&time, &parts) } else { localtime_r(&time, &parts) }
            self.seconds = seconds
            self.utc = utc
            clock = (parts.tm_hour, parts.tm_min, parts.tm_sec)
        }
        return clock
    }
}
