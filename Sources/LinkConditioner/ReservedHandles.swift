/// The handles TapKit gives its own qdiscs and classes, so it can tell them from anyone else's.
/// Major 0x7ac0..0x7ac2 ("7ac" for TapKit Conditioner) is not something tc or a distribution picks by default.
public enum ReservedHandles {
    /// The htb root of a conditioned egress (on the interface for the uplink, on the ifb for the downlink).
    public static let root = "7ac0:"
    /// The class holding the direction's bandwidth; DNS and everything else share it.
    public static let linkClass = "7ac0:1"
    /// Everything that is not DNS (the htb default, minor 0x10).
    public static let mainClass = "7ac0:10"
    /// DNS queries, when the profile delays them.
    public static let dnsClass = "7ac0:20"
    /// The netem below the main class (below its segmenter, whose one class is `mainSegmenterClass`).
    public static let mainNetem = "7ac1:"
    /// The netem below the DNS class (below its segmenter).
    public static let dnsNetem = "7ac2:"
    /// The tbf directly below the main class that cuts GSO packets into frames (`PlanBuilder.segmenter`).
    public static let mainSegmenter = "7ac3:"
    /// The one class of the main segmenter, where its netem or fifo hangs.
    public static let mainSegmenterClass = "7ac3:1"
    /// The tbf directly below the DNS class.
    public static let dnsSegmenter = "7ac4:"
    public static let dnsSegmenterClass = "7ac4:1"
    /// The byte fifo that takes the main netem's place when a switch drops delay and loss (deleting a tbf's child
    /// would leave tbf's noop qdisc there, which drops everything).
    public static let mainFifo = "7ac5:"
    /// htb's own handle as a flow id: "send through htb's direct queue", unshaped and undelayed. The filters
    /// send NDP and exclusions here, and `default 0` sends anything no filter claims here too.
    public static let direct = "7ac0:0"
    /// The ingress qdisc's fixed handle.
    public static let ingress = "ffff:"
    /// Filter priority of the IPv4 downlink redirect on ingress (egress trees: see `TrafficFilters`).
    public static let ipv4FilterPriority = "1"
    /// Filter priority of the IPv6 downlink redirect on ingress.
    public static let ipv6FilterPriority = "2"

    /// Whether a qdisc handle as printed by `tc` ("7ac0:") is one of ours.
    public static func isOurs(_ handle: String) -> Bool {
        [root, mainNetem, dnsNetem, mainSegmenter, dnsSegmenter, mainFifo].contains(handle.lowercased())
    }
}
