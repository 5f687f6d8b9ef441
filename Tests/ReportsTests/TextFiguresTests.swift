import Foundation
import PacketDecoding
@testable import Reports
import Testing

/// The text views' figures are written without `String(format:)` for speed; they must be exactly what printf
/// writes, ties and edges included, since the output is compared byte for byte across versions.
@Suite struct TextFiguresTests {
    /// The figures as they were made before: printf's rounding is the reference.
    static func printfSize(_ bytes: Int) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 { value /= 1000; unit += 1 }
        return String(format: "%.1f %@", value, units[unit])
    }

    static func printfDuration(_ seconds: Double) -> String {
        let ms = max(seconds, 0) * 1000
        if ms < 10 { return String(format: "%.1f ms", ms) }
        if ms < 10_000 { return String(format: "%.0f ms", ms) }
        return String(format: "%.1f s", ms / 1000)
    }

    @Test func sizesAreWhatPrintfWrites() {
        var sizes = Array(0...3000) + Array(stride(from: 3000, through: 1_200_000, by: 7))
        sizes += [999_949, 999_950, 999_951, 1_050, 1_150, 1_250, 12_345_678, 999_950_000, Int(Int32.max), -1, -999]
        for bytes in sizes {
            #expect(ExchangeText.size(bytes) == Self.printfSize(bytes), "\(bytes) bytes")
        }
    }

    @Test func durationsAreWhatPrintfWrites() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, -1, 0.00005, 0.00015, 0.00025, 0.0095, 0.00999, 0.00995, 0.01, 0.0105, 0.0115, 9.9995,
                                9.99951, 10, 10.05, 10.15, 12.25, 1e9, 0.0034, 0.183, 12.34]
        for _ in 0..<20_000 { values.append(Double.random(in: 0..<30, using: &generator)) }
        for _ in 0..<20_000 { values.append(Double.random(in: 0..<0.02, using: &generator)) }
        // Durations as captures make them: whole seconds plus nanoseconds.
        for nanoseconds in stride(from: 0, to: 20_000_000, by: 997) {
            let end = Timestamp(seconds: 1_700_000_000, nanoseconds: Int32(nanoseconds))
            values.append(end.seconds(since: Timestamp(seconds: 1_700_000_000, nanoseconds: 0)))
        }
        for seconds in values {
            #expect(ExchangeText.duration(seconds) == Self.printfDuration(seconds), "\(seconds) s")
        }
    }

    @Test func timeOfDayIsWhatPrintfWrites() {
        var cache = TimeOfDayCache()
        for seconds in stride(from: Int64(-86_400), through: 2_000_000_000, by: 86_399 * 7 + 13) {
            for nanoseconds: Int32 in [0, 999_999, 1_000_000, 123_456_789, 999_999_999] {
                let time = Timestamp(seconds: seconds, nanoseconds: nanoseconds)
                var parts = tm()
                var clock = time_t(seconds)
                gmtime_r(&clock, &parts)
                let expected = String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec,
                                      Int(nanoseconds) / 1_000_000)
                var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
                out.append(timeOfDay: time, utc: true, cache: &cache)
                #expect(out.text == expected)
            }
        }
    }
}
