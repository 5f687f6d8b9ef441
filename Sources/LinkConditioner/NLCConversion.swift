import Foundation

/// Converts between NLC profiles and this tool's profiles and profile files.
///
/// Differences the conversion reports rather than hides: NLC has no jitter (export drops it, with a note).
/// `ExcludeLoopback` maps to the profile's `excludeLoopback` (traffic with 127.0.0.0/8 and ::1 left alone).
public enum NLCConversion {
    public static func profile(from nlc: NLCProfile, source: String? = nil) -> Profile {
        func settings(_ direction: NLCProfile.Direction) -> LinkSettings {
            LinkSettings(bitsPerSecond: UInt64(direction.bitsPerSecond.rounded()),
                         delayMicroseconds: UInt64((direction.delay * 1000).rounded()),
                         lossPercent: direction.packetLossRatio)
        }
        return Profile(name: nlc.name, summary: "Imported from Network Link Conditioner"
                       + (source.map { " (\(URL(fileURLWithPath: $0).lastPathComponent))" } ?? "") + ".",
                       downlink: settings(nlc.downlink), uplink: settings(nlc.uplink),
                       dnsDelayMicroseconds: UInt64((nlc.dnsDelay * 1000).rounded()),
                       excludeLoopback: nlc.excludeLoopback)
    }

    public static func nlcProfile(from profile: Profile) -> NLCProfile {
        func direction(_ settings: LinkSettings) -> NLCProfile.Direction {
            let (bandwidth, unit) = NLCProfile.Direction.bandwidth(bitsPerSecond: Double(settings.bitsPerSecond))
            return NLCProfile.Direction(bandwidth: bandwidth, bandwidthUnit: unit,
                                        packetLossRatio: settings.lossPercent,
                                        delay: Double(settings.delayMicroseconds) / 1000)
        }
        return NLCProfile(name: profile.name, downlink: direction(profile.downlink), uplink: direction(profile.uplink),
                          dnsDelay: Double(profile.dnsDelayMicroseconds) / 1000, excludeLoopback: profile.excludeLoopback)
    }

    /// What an import or export cannot carry over, one sentence each.
    public static func importNotes(_ nlc: NLCProfile) -> [String] {
        var notes: [String] = []
        for (label, direction) in [("downlink", nlc.downlink), ("uplink", nlc.uplink)]
            where direction.bitsPerSecond > 0 && direction.bitsPerSecond < 1000 {
            notes.append("profile '\(nlc.name)': \(label) bandwidth below 1 kbit/s cannot be applied")
        }
        return notes
    }

    public static func exportNotes(_ profile: Profile) -> [String] {
        var notes: [String] = []
        for (label, settings) in [("downlink", profile.downlink), ("uplink", profile.uplink)]
            where settings.jitterMicroseconds > 0 {
            notes.append("profile '\(profile.name)': \(label) jitter has no NLC key and is left out")
        }
        return notes
    }

    /// The profile file (the format `ProfileFile` reads), with only the fields that change something.
    public static func profileFileData(_ profile: Profile) throws -> Data {
        func number(_ value: Double) -> Any {
            value == value.rounded() && abs(value) < 1e15 ? Int64(value) as Any : value as Any
        }
        func direction(_ settings: LinkSettings) -> [String: Any]? {
            var object: [String: Any] = [:]
            if settings.bitsPerSecond > 0 { object["bandwidthKbit"] = number(Double(settings.bitsPerSecond) / 1000) }
            if settings.delayMicroseconds > 0 { object["delayMs"] = number(Double(settings.delayMicroseconds) / 1000) }
            if settings.jitterMicroseconds > 0 { object["jitterMs"] = number(Double(settings.jitterMicroseconds) / 1000) }
            if settings.lossPercent > 0 { object["lossPercent"] = number(settings.lossPercent) }
            if let distribution = settings.jitterDistribution { object["jitterDistribution"] = distribution.rawValue }
            if settings.correlationPercent > 0 { object["correlationPercent"] = number(settings.correlationPercent) }
            if settings.reorderPercent > 0 { object["reorderPercent"] = number(settings.reorderPercent) }
            if settings.duplicatePercent > 0 { object["duplicatePercent"] = number(settings.duplicatePercent) }
            if settings.corruptPercent > 0 { object["corruptPercent"] = number(settings.corruptPercent) }
            if settings.packetOverheadBytes != 0 { object["packetOverheadBytes"] = settings.packetOverheadBytes }
            return object.isEmpty ? nil : object
        }
        var object: [String: Any] = ["name": profile.name]
        if !profile.summary.isEmpty { object["description"] = profile.summary }
        if profile.isApproximate { object["approximate"] = true }
        if let downlink = direction(profile.downlink) { object["downlink"] = downlink }
        if let uplink = direction(profile.uplink) { object["uplink"] = uplink }
        if profile.dnsDelayMicroseconds > 0 { object["dnsDelayMs"] = number(Double(profile.dnsDelayMicroseconds) / 1000) }
        if profile.excludeLoopback { object["excludeLoopback"] = true }
        var data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        data.append(0x0a)
        return data
    }

    /// A file name for a profile: lower case letters and digits, other runs become one dash ("100% Loss" ->
    /// "100-loss.json").
    public static func fileName(for name: String) -> String {
        var result = ""
        for scalar in name.lowercased().unicodeScalars {
            if CharacterSetASCII.isAlnum(scalar) { result.unicodeScalars.append(scalar) }
            else if !result.isEmpty, !result.hasSuffix("-") { result.append("-") }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return (result.isEmpty ? "profile" : result) + ".json"
    }
}
