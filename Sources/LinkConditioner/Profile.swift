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

    public init(bitsPerSecond: UInt64 = 0, delayMicroseconds: UInt64 = 0,
                jitterMicroseconds: UInt64 = 0, lossPercent: Double = 0) {
        self.bitsPerSecond = bitsPerSecond
        self.delayMicroseconds = delayMicroseconds
        self.jitterMicroseconds = jitterMicroseconds
        self.lossPercent = lossPercent
    }

    public static let unchanged = LinkSettings()

    /// Whether this direction needs netem (delay, jitter or loss); bandwidth alone needs only htb.
    public var needsNetem: Bool { delayMicroseconds > 0 || jitterMicroseconds > 0 || lossPercent > 0 }

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
    /// The file the profile was read from, if any.
    public var source: String?

    public init(name: String, summary: String = "", isApproximate: Bool = false,
                downlink: LinkSettings = .unchanged, uplink: LinkSettings = .unchanged,
                dnsDelayMicroseconds: UInt64 = 0, source: String? = nil) {
        self.name = name
        self.summary = summary
        self.isApproximate = isApproximate
        self.downlink = downlink
        self.uplink = uplink
        self.dnsDelayMicroseconds = dnsDelayMicroseconds
        self.source = source
    }

    public var needsNetem: Bool { downlink.needsNetem || uplink.needsNetem || dnsDelayMicroseconds > 0 }

    /// What is out of range, for profiles built in code rather than read from a file (files are checked
    /// by `ProfileFile`); empty when the profile is fine.
    public var problems: [String] {
        var problems: [String] = []
        let maxMicroseconds = UInt64(ProfileFile.maximumMilliseconds * 1000)
        let maxBits = UInt64(ProfileFile.maximumKbit * 1000)
        for (label, settings) in [("downlink", downlink), ("uplink", uplink)] {
            if settings.bitsPerSecond != 0 && !(1000...maxBits).contains(settings.bitsPerSecond) {
                problems.append("\(label) bandwidth must be 1 kbit/s to 100 Gbit/s")
            }
            if settings.delayMicroseconds > maxMicroseconds { problems.append("\(label) delay must be at most 60 s") }
            if settings.jitterMicroseconds > maxMicroseconds { problems.append("\(label) jitter must be at most 60 s") }
            if !(0...100).contains(settings.lossPercent) { problems.append("\(label) loss must be 0 to 100%") }
        }
        if dnsDelayMicroseconds > maxMicroseconds { problems.append("DNS delay must be at most 60 s") }
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
