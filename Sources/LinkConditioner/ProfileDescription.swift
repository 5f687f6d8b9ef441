import Sandbox

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
        parts += extras(settings)
        return parts.isEmpty ? "unchanged" : parts.joined(separator: ", ")
    }

    /// "bandwidth 32 kbit/s, delay 100 ms, no jitter, no loss".
    public static func long(_ settings: LinkSettings) -> String {
        [
            settings.bitsPerSecond > 0 ? "bandwidth \(TCUnits.humanRate(bitsPerSecond: settings.bitsPerSecond))" : "bandwidth unchanged",
            settings.delayMicroseconds > 0 ? "delay \(TCUnits.humanTime(microseconds: settings.delayMicroseconds))" : "no added delay",
            settings.jitterMicroseconds > 0 ? "jitter ±\(TCUnits.humanTime(microseconds: settings.jitterMicroseconds))" : "no jitter",
            settings.lossPercent > 0 ? "\(TCUnits.percent(settings.lossPercent)) packet loss" : "no loss",
        ].joined(separator: ", ") + extras(settings).map { ", " + $0 }.joined()
    }

    /// The impairments beyond NLC's four, only when set: "normal jitter", "25% correlation", "5% reordered"...
    static func extras(_ settings: LinkSettings) -> [String] {
        var parts: [String] = []
        if let distribution = settings.jitterDistribution { parts.append("\(distribution.rawValue) jitter") }
        if settings.correlationPercent > 0 { parts.append("\(TCUnits.percent(settings.correlationPercent)) correlation") }
        if settings.reorderPercent > 0 { parts.append("\(TCUnits.percent(settings.reorderPercent)) reordered") }
        if settings.duplicatePercent > 0 { parts.append("\(TCUnits.percent(settings.duplicatePercent)) duplicated") }
        if settings.corruptPercent > 0 { parts.append("\(TCUnits.percent(settings.corruptPercent)) corrupted") }
        if settings.packetOverheadBytes != 0 { parts.append("\(settings.packetOverheadBytes) bytes overhead per packet") }
        return parts
    }

    public static func dns(_ profile: Profile) -> String {
        profile.dnsDelayMicroseconds > 0
            ? "queries (UDP and TCP port 53, IPv4 and IPv6) delayed \(TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds)) more than other traffic"
            : "no extra delay"
    }

    /// "reset after 300000 bytes or 10 s (30% of connections), refuse new connections (TCP reset)"; nil without faults.
    public static func faults(_ faults: ConnectionFaults?) -> String? {
        guard let faults, !faults.isEmpty else { return nil }
        var parts: [String] = []
        var after: [String] = []
        if let bytes = faults.resetAfterBytes { after.append("\(bytes) bytes") }
        if let milliseconds = faults.resetAfterMilliseconds { after.append(TCUnits.humanTime(microseconds: milliseconds * 1000)) }
        if faults.resets {
            let share = faults.resetPercent.map { " (\(TCUnits.percent($0)) of connections)" } ?? ""
            parts.append((after.isEmpty ? "reset connections at once" : "reset connections after " + after.joined(separator: " or ")) + share)
        }
        if let bytes = faults.stallAfterBytes { parts.append("stall connections after \(bytes) bytes") }
        switch faults.refuse {
        case .reset?: parts.append("refuse new connections (TCP reset)")
        case .unreachable?: parts.append("refuse new connections (ICMP host unreachable)")
        case .timeout?: parts.append("let new connections time out")
        case nil: break
        }
        var text = parts.isEmpty ? "" : parts.joined(separator: ", ") + " (TCP)"
        if let dns = faults.dns {
            text += (text.isEmpty ? "" : "; ") + "DNS " + dns.map(dnsFault).joined(separator: ", ")
        }
        return text
    }

    /// "NXDOMAIN for ads.example and names under it", "no answer for every name", "300 ms delay for api.example".
    static func dnsFault(_ fault: DNSFault) -> String {
        let action = switch fault.action {
        case .nxdomain: "NXDOMAIN"
        case .servfail: "SERVFAIL"
        case .refused: "REFUSED"
        case .timeout: "no answer"
        case .delay(let milliseconds): TCUnits.humanTime(microseconds: milliseconds * 1000) + " delay"
        }
        return action + " for " + (fault.names.isEmpty ? "every name" : fault.names.joined(separator: ", ") + " and names under "
                                   + (fault.names.count == 1 ? "it" : "them"))
    }

    /// A schedule in one line: "Slow Net 15s -> Black Hole 5s, repeating" ("until stopped" for an open last step).
    public static func steps(_ schedule: Schedule) -> String {
        schedule.steps.map { step in
            step.profile + " " + (step.seconds.map(duration) ?? "until stopped")
        }.joined(separator: " -> ") + (schedule.repeats ? ", repeating" : "")
    }

    /// "15s", "500ms", "1.5s".
    static func duration(_ seconds: Double) -> String {
        seconds < 1 ? TCUnits.trim((seconds * 1000 * 1000).rounded() / 1000) + "ms" : TCUnits.trim((seconds * 1000).rounded() / 1000) + "s"
    }

    /// `here`: what `condition list` says in its HERE column for this kernel (`KernelFit`), printed as `Here:`.
    public static func show(_ profile: Profile, here: KernelFit.Verdict? = nil) -> String {
        var lines = [profile.name + (profile.isApproximate ? " (approximate values)" : "")]
        if !profile.summary.isEmpty { lines.append(profile.summary) }
        if let schedule = profile.schedule {
            lines.append("  Schedule: " + (schedule.repeats ? "repeats these steps" : "these steps, once")
                         + "; each switches in place (`condition apply \"\(profile.name)\" -i IFACE` runs it)")
            for (index, step) in schedule.steps.enumerated() {
                lines.append("  \(index + 1). \(step.profile) " + (step.seconds.map { "for " + duration($0) } ?? "until stopped"))
            }
            if let source = profile.source { lines.append("  File:     " + source) }
            return lines.joined(separator: "\n")
        }
        lines.append("  Downlink: " + long(profile.downlink))
        lines.append("  Uplink:   " + long(profile.uplink))
        lines.append("  DNS:      " + dns(profile))
        if let faults = faults(profile.faults) { lines.append("  Faults:   " + faults) }
        if profile.needsNetem {
            let engine = UserspaceEngine.unsupported(profile).isEmpty ? ", or without netem the user-space engine (nftables and iptables-nft's NFQUEUE)" : ""
            lines.append("  Needs:    htb, ifb, mirred, u32 and netem (for \(Conditioner.netemNeeds(profile)))" + engine)
        } else {
            lines.append("  Needs:    htb, ifb, mirred, u32 (no netem)")
        }
        if let here { lines.append("  Here:     " + here.text) }
        if let source = profile.source { lines.append("  File:     " + source) }
        return lines.joined(separator: "\n")
    }
}
