/// What one conditioned egress carries: a direction's settings plus, on the uplink, the DNS delay.
public struct EgressSpec: Sendable, Equatable, Hashable {
    public var settings: LinkSettings
    public var dnsDelayMicroseconds: UInt64

    public init(settings: LinkSettings, dnsDelayMicroseconds: UInt64 = 0) {
        self.settings = settings
        self.dnsDelayMicroseconds = dnsDelayMicroseconds
    }

    /// Whether a tree is needed at all: an unchanged direction without DNS delay gets none.
    public var needsTree: Bool { !settings.isUnchanged || dnsDelayMicroseconds > 0 }

    public var needsNetem: Bool { settings.needsNetem || dnsDelayMicroseconds > 0 }
}

/// Turns profiles into the exact `tc` and `ip` commands, as argument arrays, in the order they must run.
/// Nothing here runs anything, so every plan can be checked without root.
///
/// An egress tree (on the interface for the uplink, on its ifb for the downlink):
/// ```
/// htb 7ac0: (default 10)
///  └ class 7ac0:1   rate = bandwidth (or 10gbit when unchanged)
///     ├ class 7ac0:10  everything else ── netem 7ac1: (delay, jitter, loss), only if needed
///     └ class 7ac0:20  UDP/TCP port 53, IPv4 and IPv6 ── netem 7ac2: (delay + DNS delay), only with a DNS delay
/// ```
/// The downlink: `ingress` on the interface, one u32 filter matching every protocol redirects all
/// arriving packets with mirred to the ifb, whose egress carries the downlink tree.
public enum PlanBuilder {
    /// The htb rate used when a direction's bandwidth is unchanged: faster than the links this is meant for.
    public static let unlimitedBitsPerSecond: UInt64 = 10_000_000_000
    /// Bytes assumed per packet when sizing netem's queue; small enough to cover ACK-heavy traffic.
    static let averagePacketBytes: UInt64 = 500
    /// Size of a full Ethernet frame plus a little, the least an htb burst or quantum may be.
    static let minimumBurstBytes: UInt64 = 1600
    /// The ifb's queue length, which is also the limit of the pfifo htb puts below a class without netem.
    public static let ifbQueueLength = 1000

    // MARK: - Whole plans for an interface

    /// Everything `apply` runs on a fresh interface: uplink tree, ifb, downlink tree, ingress redirect.
    /// `replaceRoot` swaps out a foreign root qdisc (`--force`); `replaceIngress` deletes a foreign ingress first.
    public static func applyPlan(profile: Profile, interface: InterfaceName,
                                 replaceRoot: Bool = false, replaceIngress: Bool = false) -> [[String]] {
        let ifb = interface.ifbName
        var commands: [[String]] = []
        let uplink = uplinkSpec(profile)
        if uplink.needsTree {
            commands += egressTree(device: interface, spec: uplink, replaceRoot: replaceRoot)
        }
        // ifb's default queue is 32 packets, too short for the htb leaves below a downlink class.
        commands.append(["ip", "link", "add", ifb.rawValue, "txqueuelen", String(ifbQueueLength), "type", "ifb"])
        commands.append(["ip", "link", "set", "dev", ifb.rawValue, "up"])
        let downlink = downlinkSpec(profile)
        if downlink.needsTree {
            commands += egressTree(device: ifb, spec: downlink)
        }
        if replaceIngress {
            commands.append(["tc", "qdisc", "del", "dev", interface.rawValue, "ingress"])
        }
        commands += ingressRedirect(interface: interface, ifb: ifb)
        return commands
    }

    /// Switches an interface from one active profile to another in place: class rates changed, leaf
    /// qdiscs replaced, added or removed. The ingress redirect and the ifb are not touched.
    public static func switchPlan(from old: Profile, to new: Profile, interface: InterfaceName) -> [[String]] {
        switchEgress(device: interface, from: uplinkSpec(old), to: uplinkSpec(new))
            + switchEgress(device: interface.ifbName, from: downlinkSpec(old), to: downlinkSpec(new))
    }

    /// What `off` runs for an interface with `profile` active: the redirect goes first so arriving traffic
    /// flows normally, then the uplink tree, then the ifb (which takes its tree with it).
    public static func teardownPlan(profile: Profile, interface: InterfaceName) -> [[String]] {
        var commands = [["tc", "qdisc", "del", "dev", interface.rawValue, "ingress"]]
        if uplinkSpec(profile).needsTree {
            commands.append(["tc", "qdisc", "del", "dev", interface.rawValue, "root"])
        }
        commands.append(["ip", "link", "del", "dev", interface.ifbName.rawValue])
        return commands
    }

    public static func uplinkSpec(_ profile: Profile) -> EgressSpec {
        EgressSpec(settings: profile.uplink, dnsDelayMicroseconds: profile.dnsDelayMicroseconds)
    }

    public static func downlinkSpec(_ profile: Profile) -> EgressSpec {
        EgressSpec(settings: profile.downlink)
    }

    /// The ingress qdisc and the filter sending every arriving packet (IPv4, IPv6, anything) to the ifb.
    public static func ingressRedirect(interface: InterfaceName, ifb: InterfaceName) -> [[String]] {
        [
            ["tc", "qdisc", "add", "dev", interface.rawValue, "handle", ReservedHandles.ingress, "ingress"],
            ["tc", "filter", "add", "dev", interface.rawValue, "parent", ReservedHandles.ingress,
             "protocol", "all", "prio", ReservedHandles.ipv4FilterPriority, "u32", "match", "u32", "0", "0",
             "action", "mirred", "egress", "redirect", "dev", ifb.rawValue],
        ]
    }

    // MARK: - One egress tree

    /// The commands that build a conditioned egress on one device, for example one end of a veth pair.
    /// `replaceRoot` uses `tc qdisc replace` for the root, swapping out whatever root was there.
    public static func egressTree(device: InterfaceName, settings: LinkSettings,
                                  dnsDelayMicroseconds: UInt64 = 0, replaceRoot: Bool = false) -> [[String]] {
        egressTree(device: device, spec: EgressSpec(settings: settings, dnsDelayMicroseconds: dnsDelayMicroseconds),
                   replaceRoot: replaceRoot)
    }

    public static func egressTree(device: InterfaceName, spec: EgressSpec, replaceRoot: Bool = false) -> [[String]] {
        let dev = device.rawValue
        var commands: [[String]] = [
            ["tc", "qdisc", replaceRoot ? "replace" : "add", "dev", dev, "root", "handle", ReservedHandles.root,
             "htb", "default", "10"],
            ["tc", "class", "add", "dev", dev, "parent", ReservedHandles.root, "classid", ReservedHandles.linkClass]
                + htbRate(rate(spec), ceil: rate(spec)),
            ["tc", "class", "add", "dev", dev, "parent", ReservedHandles.linkClass, "classid", ReservedHandles.mainClass]
                + htbRate(rate(spec), ceil: rate(spec)),
        ]
        if spec.settings.needsNetem {
            commands.append(["tc", "qdisc", "add", "dev", dev, "parent", ReservedHandles.mainClass,
                             "handle", ReservedHandles.mainNetem] + mainNetem(spec))
        }
        if spec.dnsDelayMicroseconds > 0 {
            commands += dnsBranch(device: device, spec: spec)
        }
        return commands
    }

    /// Removes a tree built by `egressTree`.
    public static func removeEgressTree(device: InterfaceName) -> [[String]] {
        [["tc", "qdisc", "del", "dev", device.rawValue, "root"]]
    }

    /// Changes one device's tree in place from `old` to `new` (either may need no tree at all).
    public static func switchEgress(device: InterfaceName, from old: EgressSpec, to new: EgressSpec) -> [[String]] {
        let dev = device.rawValue
        switch (old.needsTree, new.needsTree) {
        case (false, false): return []
        case (false, true): return egressTree(device: device, spec: new)
        case (true, false): return removeEgressTree(device: device)
        case (true, true): break
        }
        var commands: [[String]] = []
        if rate(old) != rate(new) {
            commands.append(["tc", "class", "change", "dev", dev, "parent", ReservedHandles.root,
                             "classid", ReservedHandles.linkClass] + htbRate(rate(new), ceil: rate(new)))
            commands.append(["tc", "class", "change", "dev", dev, "parent", ReservedHandles.linkClass,
                             "classid", ReservedHandles.mainClass] + htbRate(rate(new), ceil: rate(new)))
        }
        switch (old.settings.needsNetem, new.settings.needsNetem) {
        case (true, true):
            if mainNetem(old) != mainNetem(new) {
                commands.append(["tc", "qdisc", "change", "dev", dev, "parent", ReservedHandles.mainClass,
                                 "handle", ReservedHandles.mainNetem] + mainNetem(new))
            }
        case (false, true):
            commands.append(["tc", "qdisc", "add", "dev", dev, "parent", ReservedHandles.mainClass,
                             "handle", ReservedHandles.mainNetem] + mainNetem(new))
        case (true, false):
            commands.append(["tc", "qdisc", "del", "dev", dev, "parent", ReservedHandles.mainClass,
                             "handle", ReservedHandles.mainNetem])
        case (false, false):
            break
        }
        switch (old.dnsDelayMicroseconds > 0, new.dnsDelayMicroseconds > 0) {
        case (true, true):
            if dnsRate(old) != dnsRate(new) {
                commands.append(["tc", "class", "change", "dev", dev, "parent", ReservedHandles.linkClass,
                                 "classid", ReservedHandles.dnsClass] + htbRate(dnsRate(new), ceil: rate(new)))
            }
            if dnsNetem(old) != dnsNetem(new) {
                commands.append(["tc", "qdisc", "change", "dev", dev, "parent", ReservedHandles.dnsClass,
                                 "handle", ReservedHandles.dnsNetem] + dnsNetem(new))
            }
        case (false, true):
            commands += dnsBranch(device: device, spec: new)
        case (true, false):
            // Filters first: a class still referenced by a filter cannot be deleted.
            commands.append(["tc", "filter", "del", "dev", dev, "parent", ReservedHandles.root,
                             "protocol", "ip", "prio", ReservedHandles.ipv4FilterPriority])
            commands.append(["tc", "filter", "del", "dev", dev, "parent", ReservedHandles.root,
                             "protocol", "ipv6", "prio", ReservedHandles.ipv6FilterPriority])
            commands.append(["tc", "class", "del", "dev", dev, "parent", ReservedHandles.linkClass,
                             "classid", ReservedHandles.dnsClass])
        case (false, false):
            break
        }
        return commands
    }

    // MARK: - Pieces

    private static func dnsBranch(device: InterfaceName, spec: EgressSpec) -> [[String]] {
        let dev = device.rawValue
        var commands: [[String]] = [
            ["tc", "class", "add", "dev", dev, "parent", ReservedHandles.linkClass, "classid", ReservedHandles.dnsClass]
                + htbRate(dnsRate(spec), ceil: rate(spec)),
            ["tc", "qdisc", "add", "dev", dev, "parent", ReservedHandles.dnsClass,
             "handle", ReservedHandles.dnsNetem] + dnsNetem(spec),
        ]
        for transport in ["17", "6"] {  // UDP, TCP
            commands.append(["tc", "filter", "add", "dev", dev, "parent", ReservedHandles.root, "protocol", "ip",
                             "prio", ReservedHandles.ipv4FilterPriority, "u32",
                             "match", "ip", "protocol", transport, "0xff", "match", "ip", "dport", "53", "0xffff",
                             "flowid", ReservedHandles.dnsClass])
        }
        for transport in ["17", "6"] {
            commands.append(["tc", "filter", "add", "dev", dev, "parent", ReservedHandles.root, "protocol", "ipv6",
                             "prio", ReservedHandles.ipv6FilterPriority, "u32",
                             "match", "ip6", "protocol", transport, "0xff", "match", "ip6", "dport", "53", "0xffff",
                             "flowid", ReservedHandles.dnsClass])
        }
        return commands
    }

    /// The class rate: the profile's bandwidth, or `unlimitedBitsPerSecond` when unchanged.
    static func rate(_ spec: EgressSpec) -> UInt64 {
        spec.settings.bitsPerSecond > 0 ? spec.settings.bitsPerSecond : unlimitedBitsPerSecond
    }

    /// DNS is guaranteed a hundredth of the link (at least 8 kbit/s) and may borrow up to all of it.
    static func dnsRate(_ spec: EgressSpec) -> UInt64 {
        min(rate(spec), max(8_000, rate(spec) / 100))
    }

    /// htb rate and ceiling with burst and quantum sized for the rate: burst holds 10 ms of traffic and
    /// quantum a tenth of a second's (tc's r2q default), both at least one full frame and quantum at most
    /// 200000 bytes, so neither low nor high rates trigger htb's "quantum is small/big" fallbacks.
    static func htbRate(_ bits: UInt64, ceil: UInt64) -> [String] {
        let bytesPerSecond = bits / 8
        let burst = max(minimumBurstBytes, bytesPerSecond / 100)
        let cburst = max(minimumBurstBytes, (ceil / 8) / 100)
        let quantum = min(200_000, max(minimumBurstBytes, bytesPerSecond / 10))
        return ["htb", "rate", TCUnits.rate(bitsPerSecond: bits), "ceil", TCUnits.rate(bitsPerSecond: ceil),
                "burst", String(burst), "cburst", String(cburst), "quantum", String(quantum)]
    }

    static func mainNetem(_ spec: EgressSpec) -> [String] {
        netem(delay: spec.settings.delayMicroseconds, jitter: spec.settings.jitterMicroseconds,
              loss: spec.settings.lossPercent, rate: rate(spec))
    }

    static func dnsNetem(_ spec: EgressSpec) -> [String] {
        netem(delay: spec.settings.delayMicroseconds + spec.dnsDelayMicroseconds,
              jitter: spec.settings.jitterMicroseconds, loss: spec.settings.lossPercent, rate: dnsRate(spec))
    }

    /// netem arguments. Its queue limit must hold everything in flight during the delay: at `rate` for
    /// delay + jitter, counted in small packets and doubled for headroom, never below netem's default 1000.
    static func netem(delay: UInt64, jitter: UInt64, loss: Double, rate: UInt64) -> [String] {
        var arguments = ["netem"]
        if delay > 0 || jitter > 0 {
            arguments += ["delay", TCUnits.time(microseconds: delay)]
            if jitter > 0 { arguments.append(TCUnits.time(microseconds: jitter)) }
        }
        if loss > 0 { arguments += ["loss", TCUnits.percent(loss)] }
        arguments += ["limit", String(netemLimit(rate: rate, delay: delay + jitter))]
        return arguments
    }

    public static func netemLimit(rate: UInt64, delay microseconds: UInt64) -> UInt64 {
        let bytesInFlight = Double(rate) / 8 * Double(microseconds) / 1_000_000
        let packets = UInt64((2 * bytesInFlight / Double(averagePacketBytes)).rounded(.up))
        return max(1000, packets)
    }
}
