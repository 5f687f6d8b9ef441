/// What a profile does to one direction of traffic. A zero field leaves that property unchanged,
/// as in Apple's Network Link Conditioner.
public struct LinkSettings: Sendable, Equatable, Hashable, Codable {
    /// Bandwidth in bits per second; 0 = unchanged.
    public var bitsPerSecond: UInt64
    /// One-way delay in microseconds; 0 = none added.
    public var delayMicroseconds: UInt64
    /// Random variation of the delay, in microseconds; 0 = none.
    public var jitterMicroseconds: UInt64
    /// Packet loss in percent (0...100); 0 = none.
    public var lossPercent: Double
    /// The shape of the jitter: netem's `distribution` table; nil = netem's default (uniform).
    public var jitterDistribution: JitterDistribution?
    /// How much each random value (delay, loss) depends on the one before, in percent; 0 = independent.
    public var correlationPercent: Double
    /// Share of packets sent at once, ahead of the delayed ones (netem `reorder`; needs a delay).
    public var reorderPercent: Double
    /// Share of packets sent twice.
    public var duplicatePercent: Double
    /// Share of packets with one bit flipped.
    public var corruptPercent: Double
    /// Bytes the rate counts on top of each packet (link-layer framing such as ATM/PPPoE); htb `overhead`.
    public var packetOverheadBytes: Int

    public enum JitterDistribution: String, Sendable, Codable, Hashable, CaseIterable {
        case normal, pareto, paretonormal
    }

    public init(bitsPerSecond: UInt64 = 0, delayMicroseconds: UInt64 = 0,
                jitterMicroseconds: UInt64 = 0, lossPercent: Double = 0,
                jitterDistribution: JitterDistribution? = nil, correlationPercent: Double = 0,
                reorderPercent: Double = 0, duplicatePercent: Double = 0, corruptPercent: Double = 0,
                packetOverheadBytes: Int = 0) {
        self.bitsPerSecond = bitsPerSecond
        self.delayMicroseconds = delayMicroseconds
        self.jitterMicroseconds = jitterMicroseconds
        self.lossPercent = lossPercent
        self.jitterDistribution = jitterDistribution
        self.correlationPercent = correlationPercent
        self.reorderPercent = reorderPercent
        self.duplicatePercent = duplicatePercent
        self.corruptPercent = corruptPercent
        self.packetOverheadBytes = packetOverheadBytes
    }

    private enum CodingKeys: String, CodingKey {
        case bitsPerSecond, delayMicroseconds, jitterMicroseconds, lossPercent, jitterDistribution, correlationPercent,
             reorderPercent, duplicatePercent, corruptPercent, packetOverheadBytes
    }

    /// Fields added later are optional, so records written by an earlier version still load.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(bitsPerSecond: try c.decodeIfPresent(UInt64.self, forKey: .bitsPerSecond) ?? 0,
                  delayMicroseconds: try c.decodeIfPresent(UInt64.self, forKey: .delayMicroseconds) ?? 0,
                  jitterMicroseconds: try c.decodeIfPresent(UInt64.self, forKey: .jitterMicroseconds) ?? 0,
                  lossPercent: try c.decodeIfPresent(Double.self, forKey: .lossPercent) ?? 0,
                  jitterDistribution: try c.decodeIfPresent(JitterDistribution.self, forKey: .jitterDistribution),
                  correlationPercent: try c.decodeIfPresent(Double.self, forKey: .correlationPercent) ?? 0,
                  reorderPercent: try c.decodeIfPresent(Double.self, forKey: .reorderPercent) ?? 0,
                  duplicatePercent: try c.decodeIfPresent(Double.self, forKey: .duplicatePercent) ?? 0,
                  corruptPercent: try c.decodeIfPresent(Double.self, forKey: .corruptPercent) ?? 0,
                  packetOverheadBytes: try c.decodeIfPresent(Int.self, forKey: .packetOverheadBytes) ?? 0)
    }

    public static let unchanged = LinkSettings()

    /// Whether this direction needs netem (delay, jitter, loss, reordering, duplication, corruption);
    /// bandwidth alone needs only htb.
    public var needsNetem: Bool {
        delayMicroseconds > 0 || jitterMicroseconds > 0 || lossPercent > 0 || reorderPercent > 0
            || duplicatePercent > 0 || corruptPercent > 0
    }

    public var isUnchanged: Bool { self == .unchanged }
}

/// A named set of link conditions for both directions, plus an extra delay on DNS queries.
public struct Profile: Sendable, Equatable, Codable {
    public var name: String
    /// One line in words: what the profile stands for.
    public var summary: String
    /// True for presets whose values are commonly quoted rather than published by Apple.
    public var isApproximate: Bool
    /// Traffic arriving at the interface (conditioned on an ifb device).
    public var downlink: LinkSettings
    /// Traffic leaving the interface (conditioned on its egress).
    public var uplink: LinkSettings
    /// Extra delay for DNS queries (UDP and TCP port 53), on top of the uplink delay; 0 = none.
    public var dnsDelayMicroseconds: UInt64
    /// NLC's ExcludeLoopback: traffic with 127.0.0.0/8 and ::1 is not conditioned (it only ever appears on `lo`).
    public var excludeLoopback: Bool
    /// The file the profile was read from, if any.
    public var source: String?
    /// Set for a profile that is a schedule: other profiles, by name, one after another (`apply` runs it
    /// step by step); such a profile has no settings of its own.
    public var schedule: Schedule?
    /// Connection faults (reset or stall after some bytes, refused connections); nil = none.
    public var faults: ConnectionFaults?

    public init(name: String, summary: String = "", isApproximate: Bool = false,
                downlink: LinkSettings = .unchanged, uplink: LinkSettings = .unchanged,
                dnsDelayMicroseconds: UInt64 = 0, excludeLoopback: Bool = false, source: String? = nil,
                schedule: Schedule? = nil, faults: ConnectionFaults? = nil) {
        self.name = name
        self.summary = summary
        self.isApproximate = isApproximate
        self.downlink = downlink
        self.uplink = uplink
        self.dnsDelayMicroseconds = dnsDelayMicroseconds
        self.excludeLoopback = excludeLoopback
        self.source = source
        self.schedule = schedule
        self.faults = faults
    }

    private enum CodingKeys: String, CodingKey {
        case name, summary, isApproximate, downlink, uplink, dnsDelayMicroseconds, excludeLoopback, source, schedule, faults
    }

    /// Fields added later are optional, so records written by an earlier version still load.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        summary = try container.decodeIfPresent(String.self, forKey: .summary) ?? ""
        isApproximate = try container.decodeIfPresent(Bool.self, forKey: .isApproximate) ?? false
        downlink = try container.decodeIfPresent(LinkSettings.self, forKey: .downlink) ?? .unchanged
        uplink = try container.decodeIfPresent(LinkSettings.self, forKey: .uplink) ?? .unchanged
        dnsDelayMicroseconds = try container.decodeIfPresent(UInt64.self, forKey: .dnsDelayMicroseconds) ?? 0
        excludeLoopback = try container.decodeIfPresent(Bool.self, forKey: .excludeLoopback) ?? false
        source = try container.decodeIfPresent(String.self, forKey: .source)
        schedule = try container.decodeIfPresent(Schedule.self, forKey: .schedule)
        faults = try container.decodeIfPresent(ConnectionFaults.self, forKey: .faults)
    }

    /// The traffic this profile conditions when applied with `selection`: with `excludeLoopback`, minus loopback.
    public func effectiveSelection(_ selection: TrafficSelection) -> TrafficSelection {
        excludeLoopback ? selection.excluding(TrafficSelection.loopbackExclusions) : selection
    }

    public var needsNetem: Bool { downlink.needsNetem || uplink.needsNetem || dnsDelayMicroseconds > 0 }

    /// What is out of range, for profiles built in code rather than read from a file (files are checked
    /// by `ProfileFile`); empty when the profile is fine.
    public var problems: [String] {
        var problems: [String] = []
        if schedule != nil {
            problems.append("it is a schedule of other profiles (steps), not one set of conditions: "
                            + "`condition apply \"\(name)\" -i IFACE` runs it step by step")
        }
        let maxMicroseconds = UInt64(ProfileFile.maximumMilliseconds * 1000)
        let maxBits = UInt64(ProfileFile.maximumKbit * 1000)
        for (label, settings) in [("downlink", downlink), ("uplink", uplink)] {
            if settings.bitsPerSecond != 0 && !(1000...maxBits).contains(settings.bitsPerSecond) {
                problems.append("\(label) bandwidth must be 1 kbit/s to 100 Gbit/s")
            }
            if settings.delayMicroseconds > maxMicroseconds { problems.append("\(label) delay must be at most 60 s") }
            if settings.jitterMicroseconds > maxMicroseconds { problems.append("\(label) jitter must be at most 60 s") }
            if !(0...100).contains(settings.lossPercent) { problems.append("\(label) loss must be 0 to 100%") }
            for (name, value) in [("correlation", settings.correlationPercent), ("reordering", settings.reorderPercent),
                                  ("duplication", settings.duplicatePercent), ("corruption", settings.corruptPercent)]
                where !(0...100).contains(value) {
                problems.append("\(label) \(name) must be 0 to 100%")
            }
            if settings.jitterDistribution != nil && settings.jitterMicroseconds == 0 {
                problems.append("\(label) jitter distribution needs a jitter")
            }
            if settings.reorderPercent > 0 && settings.delayMicroseconds == 0 {
                problems.append("\(label) reordering needs a delay (packets are reordered by sending some without it)")
            }
            if !(-1000...1000).contains(settings.packetOverheadBytes) { problems.append("\(label) packet overhead must be -1000 to 1000 bytes") }
        }
        if dnsDelayMicroseconds > maxMicroseconds { problems.append("DNS delay must be at most 60 s") }
        problems += faults?.problems ?? []
        if schedule == nil && downlink.isUnchanged && uplink.isUnchanged && dnsDelayMicroseconds == 0
            && (faults?.isEmpty ?? true) {
            problems.append("it changes nothing (every field is absent or zero); set at least one of bandwidthKbit, "
                            + "delayMs, lossPercent in downlink or uplink, dnsDelayMs, or a fault")
        }
        return problems
    }

    /// Loss high enough that a remote session over this interface would be cut.
    public var cutsRemoteSessions: Bool { downlink.lossPercent >= 90 || uplink.lossPercent >= 90 }

    /// The key names are matched by: lower case letters and digits only ("Slow Net" -> "slownet").
    public var lookupKey: String { Profile.lookupKey(name) }

    public static func lookupKey(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { ($0.value < 128) && (CharacterSetASCII.isAlnum($0)) }
            .map(Character.init))
    }
}

enum CharacterSetASCII {
    static func isAlnum(_ s: Unicode.Scalar) -> Bool {
        (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9")
    }
}
