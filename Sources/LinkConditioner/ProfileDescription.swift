/// Profiles in words and numbers, for `list` and `show`.
public enum ProfileDescription {
    /// "32 kbit/s, 100 ms, 10% loss" or "unchanged".
    public static func short(_ settings: LinkSettings) -> String {
        var parts: [String] = []
        if settings.bitsPerSecond > 0 { parts.append(TCUnits.humanRate(bitsPerSecond: settings.bitsPerSecond)) }
        if settings.delayMicroseconds > 0 || settings.jitterMicroseconds > 0 {
            var delay = TCUnits.humanTime(microseconds: settings.delayMicroseconds)
            if settings.jitterMicroseconds > 0 { delay += " ±" + TCUnits.humanTime(microseconds: settings.jitterMicroseconds) }
            parts.append(delay)
        }
        if settings.lossPercent > 0 { parts.append(TCUnits.percent(settings.lossPercent) + " loss") }
        return parts.isEmpty ? "unchanged" : parts.joined(separator: ", ")
    }

    /// "bandwidth 32 kbit/s, delay 100 ms, no jitter, no loss".
    public static func long(_ settings: LinkSettings) -> String {
        [
            settings.bitsPerSecond > 0 ? "bandwidth \(TCUnits.humanRate(bitsPerSecond: settings.bitsPerSecond))" : "bandwidth unchanged",
            settings.delayMicroseconds > 0 ? "delay \(TCUnits.humanTime(microseconds: settings.delayMicroseconds))" : "no added delay",
            settings.jitterMicroseconds > 0 ? "jitter ±\(TCUnits.humanTime(microseconds: settings.jitterMicroseconds))" : "no jitter",
            settings.lossPercent > 0 ? "\(TCUnits.percent(settings.lossPercent)) packet loss" : "no loss",
        ].joined(separator: ", ")
    }

    public static func dns(_ profile: Profile) -> String {
        profile.dnsDelayMicroseconds > 0
            ? "queries (UDP and TCP port 53, IPv4 and IPv6) delayed \(TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds)) more than other traffic"
            : "no extra delay"
    }

    public static func show(_ profile: Profile) -> String {
        var lines = [profile.name + (profile.isApproximate ? " (approximate values)" : "")]
        if !profile.summary.isEmpty { lines.append(profile.summary) }
        lines.append("  Downlink: " + long(profile.downlink))
        lines.append("  Uplink:   " + long(profile.uplink))
        lines.append("  DNS:      " + dns(profile))
        if profile.needsNetem {
            lines.append("  Needs:    htb, ifb, mirred, u32 and netem (for \(Conditioner.netemNeeds(profile)))")
        } else {
            lines.append("  Needs:    htb, ifb, mirred, u32 (no netem)")
        }
        if let source = profile.source { lines.append("  File:     " + source) }
        return lines.joined(separator: "\n")
    }
}
