import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

/// The broken-down clock of the last second printed: converting a time is the slow part, and consecutive packets
/// almost always share a second.
struct ClockCache {
    var second: Int64 = .min
    var parts = tm()
}

extension PacketLineRenderer {
    /// The timestamp as tcpdump's `-t` family prints it (print.c's ts_print).
    mutating func appendTime(_ exactTime: Timestamp, to output: inout TextOutput) {
        var time = exactTime
        // At microsecond precision tcpdump reads times already cut to microseconds, deltas included.
        if !options.nanosecondTimestamps { time.nanoseconds = time.nanoseconds / 1000 * 1000 }
        switch options.timestamps {
        case .none:
            return
        case .clock, .dateAndClock:
            if time.seconds != clock.second {
                clock.second = time.seconds
                var seconds = time_t(time.seconds)
                if options.utc { gmtime_r(&seconds, &clock.parts) } else { localtime_r(&seconds, &clock.parts) }
            }
            if options.timestamps == .dateAndClock {
                output.append(decimal: Int(clock.parts.tm_year) + 1900, width: 4)
                output.append(UInt8(ascii: "-"))
                output.append(decimal: clock.parts.tm_mon + 1, width: 2)
                output.append(UInt8(ascii: "-"))
                output.append(decimal: clock.parts.tm_mday, width: 2)
                output.append(UInt8(ascii: " "))
            }
            appendClock(hour: Int(clock.parts.tm_hour), minute: Int(clock.parts.tm_min),
                        second: Int(clock.parts.tm_sec), to: &output)
            appendFraction(time.nanoseconds, to: &output)
        case .epoch:
            output.append(decimal: time.seconds)
            appendFraction(time.nanoseconds, to: &output)
        case .sincePrevious, .sinceFirst:
            if firstTimestamp == nil { firstTimestamp = time }
            let reference = (options.timestamps == .sinceFirst ? firstTimestamp : previousTimestamp) ?? time
            previousTimestamp = time
            // tcpdump prints the sign, then the magnitude as a UTC clock (days wrap away).
            let negative = time < reference
            let (later, earlier) = negative ? (reference, time) : (time, reference)
            var seconds = later.seconds - earlier.seconds
            var nanoseconds = Int64(later.nanoseconds) - Int64(earlier.nanoseconds)
            if nanoseconds < 0 { nanoseconds += 1_000_000_000; seconds -= 1 }
            output.append(negative ? UInt8(ascii: "-") : UInt8(ascii: " "))
            let inDay = Int(seconds % 86_400)
            appendClock(hour: inDay / 3600, minute: inDay / 60 % 60, second: inDay % 60, to: &output)
            appendFraction(Int32(nanoseconds), to: &output)
        }
    }

    private func appendClock(hour: Int, minute: Int, second: Int, to output: inout TextOutput) {
        output.append(decimal: hour, width: 2)
        output.append(UInt8(ascii: ":"))
        output.append(decimal: minute, width: 2)
        output.append(UInt8(ascii: ":"))
        output.append(decimal: second, width: 2)
    }

    private func appendFraction(_ nanoseconds: Int32, to output: inout TextOutput) {
        output.append(UInt8(ascii: "."))
        if options.nanosecondTimestamps {
            output.append(decimal: max(nanoseconds, 0), width: 9)
        } else {
            output.append(decimal: max(nanoseconds, 0) / 1000, width: 6)
        }
    }
}
