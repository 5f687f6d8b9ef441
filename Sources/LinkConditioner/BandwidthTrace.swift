import Foundation

/// Trace-driven bandwidth: a Mahimahi-style trace (one line per delivery opportunity of a full 1500-byte packet,
/// the millisecond it happens, repeating after the last line) turned into per-interval rates, each interval one
/// step of a schedule. An interval without any opportunity delivers nothing (100% loss for that direction).
public enum BandwidthTrace {
    public static let packetBytes = 1500
    /// The most lines read from one trace (a few minutes of a fast cellular trace).
    public static let maximumLines = 2_000_000

    /// Bits per second in each `interval` of the trace.
    public static func rates(_ data: Data, file: String, interval: Double) throws -> [UInt64] {
        var stamps: [Int] = []
        for (number, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let ms = Int(text), ms >= 0, stamps.last.map({ ms >= $0 }) ?? true else {
                throw ProfileFileError(file: file, field: "line \(number + 1)",
                                       problem: "expected a millisecond timestamp not below the one before (Mahimahi trace format), got \"\(text.prefix(40))\"")
            }
            stamps.append(ms)
            if stamps.count > maximumLines {
                throw ProfileFileError(file: file, field: nil, problem: "has more than \(maximumLines) lines; cut it to the part you need")
            }
        }
        guard let last = stamps.last, last > 0 else {
            throw ProfileFileError(file: file, field: nil, problem: "expected at least one line with a millisecond timestamp above 0")
        }
        let intervalMs = interval * 1000
        let count = max(1, Int((Double(last) / intervalMs).rounded(.up)))
        var buckets = [Int](repeating: 0, count: count)
        for stamp in stamps { buckets[min(count - 1, Int(Double(max(0, stamp - 1)) / intervalMs))] += 1 }
        return buckets.map { UInt64((Double($0 * packetBytes * 8) / interval).rounded()) }
    }

    /// One profile per interval: `base` with each direction's bandwidth taken from its trace (a direction
    /// without a trace keeps `base`'s settings). The result repeats, as Mahimahi replays a trace.
    public static func steps(base: Profile, downlink: [UInt64]?, uplink: [UInt64]?, interval: Double) -> [(Profile, Double)] {
        let count = max(downlink?.count ?? 0, uplink?.count ?? 0)
        return (0..<count).map { index in
            var profile = base
            profile.name = "\(base.name) @\(TCUnits.trim(Double(index) * interval))s"
            func set(_ settings: inout LinkSettings, _ rates: [UInt64]?) {
                guard let rates else { return }
                let bits = rates[index % rates.count]
                if bits == 0 { settings.lossPercent = 100 } else { settings.bitsPerSecond = max(1000, bits) }
            }
            set(&profile.downlink, downlink)
            set(&profile.uplink, uplink)
            return (profile, interval)
        }
    }
}
