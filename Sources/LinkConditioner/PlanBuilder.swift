/// What one conditioned egress carries: a direction's settings plus, on the uplink, the DNS delay, and
/// which traffic it applies to (seen from `direction`, which says where the far end is in a header).
public struct EgressSpec: Sendable, Equatable, Hashable {
    public var settings: LinkSettings
    public var dnsDelayMicroseconds: UInt64
    public var selection: TrafficSelection
    public var direction: TrafficDirection
    /// The MTU of the interface whose traffic the tree carries: the segmenters pass frames up to it whole.
    public var mtu: Int

    public init(settings: LinkSettings, dnsDelayMicroseconds: UInt64 = 0, selection: TrafficSelection = .allIP,
                direction: TrafficDirection = .uplink, mtu: Int = PlanBuilder.defaultMTU) {
        self.settings = settings
        self.dnsDelayMicroseconds = dnsDelayMicroseconds
        self.selection = selection
        self.direction = direction
        self.mtu = mtu
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
/// htb 7ac0: (default 0: unclassified packets go through htb's direct queue, untouched)
///  └ class 7ac0:1   rate = bandwidth (or 10gbit when unchanged)
///     ├ class 7ac0:10  selected IP traffic ── tbf 7ac3: (segmenter) ── netem 7ac1: (delay, jitter, loss), only if needed
///     └ class 7ac0:20  UDP/TCP port 53, IPv4 and IPv6 ── tbf 7ac4: ── netem 7ac2: (delay + DNS delay), only with a DNS delay
/// ```
/// The segmenters are there because the host's TCP hands the qdiscs GSO packets of up to 64 KB: htb charges and
/// releases such a packet whole, so at 32 kbit/s a link would deliver 64 KB every 16 s instead of a frame every
/// 0.4 s, and netem would lose or delay 44 frames at once. A tbf whose burst is one frame cuts every larger GSO
/// packet into frames as it is queued (`tbf_segment` in the kernel's sch_tbf.c; netem segments only packets it
/// corrupts), at a rate (100 Gbit/s) that never holds anything back; htb and netem then see frames.
/// u32 filters (`TrafficFilters`) put IPv4 and IPv6 in the classes; NDP, exclusions and anything not IP
/// (ARP) match none and pass untouched. The downlink: `ingress` on the interface, two u32 filters (IPv4,
/// IPv6) redirect arriving IP packets with mirred to the ifb, whose egress carries the downlink tree;
/// ARP and other frames are never redirected.
public enum PlanBuilder {
    /// The htb rate used when a direction's bandwidth is unchanged: faster than the links this is meant for.
    public static let unlimitedBitsPerSecond: UInt64 = 10_000_000_000
    /// Bytes assumed per packet when sizing netem's queue; small enough to cover ACK-heavy traffic.
    static let averagePacketBytes: UInt64 = 500
    /// Size of a full Ethernet frame plus a little, the least an htb burst or quantum may be.
    static let minimumBurstBytes: UInt64 = 1600
    /// The ifb's queue length, and the frames a class's queue holds when it has no netem (the segmenter's byte fifo).
    public static let ifbQueueLength = 1000
    /// The MTU assumed when the interface's is not known (Ethernet's).
    public static let defaultMTU = 1500
    /// The segmenter's rate: far above any class's, so it only cuts packets and never holds them back.
    static let segmenterBitsPerSecond: UInt64 = 100_000_000_000

    // MARK: - Whole plans for an interface

    /// Everything `apply` runs on a fresh interface: uplink tree, ifb, downlink tree, ingress redirect.
    /// `replaceRoot` swaps out a foreign root qdisc (`--force`); `replaceIngress` deletes a foreign ingress first.
    /// With the user-space engine (`engineStart`: the command that starts it, `UserspaceEngine.startCommand`), htb
    /// carries only the rates and the engine's nftables table, process and queue rules come before the redirect.
    public static func applyPlan(profile: Profile, interface: InterfaceName, selection: TrafficSelection = .allIP,
                                 replaceRoot: Bool = false, replaceIngress: Bool = false,
                                 engineStart: [String]? = nil, mtu: Int = defaultMTU,
                                 restampObject: String? = nil) -> [[String]] {
        let ifb = interface.ifbName
        let engineProfile = profile
        let profile = engineStart == nil ? profile : UserspaceEngine.rateOnly(profile)
        var commands: [[String]] = []
        let uplink = uplinkSpec(profile, selection: selection, mtu: mtu)
        if uplink.needsTree {
            commands += egressTree(device: interface, spec: uplink, replaceRoot: replaceRoot)
        }
        // ifb's default queue is 32 packets, too short for the htb leaves below a downlink class.
        commands.append(["ip", "link", "add", ifb.rawValue, "txqueuelen", String(ifbQueueLength), "type", "ifb"])
        commands.append(["ip", "link", "set", "dev", ifb.rawValue, "up"])
        let downlink = downlinkSpec(profile, selection: selection, mtu: mtu)
        if downlink.needsTree {
            commands += egressTree(device: ifb, spec: downlink)
        }
        if let engineStart {
            commands.append(UserspaceEngine.createTable(engineProfile, interface: interface, selection: selection))
            commands.append(engineStart)
            commands += UserspaceEngine.queueRules(interface)
        }
        if let faults = engineProfile.faults, faults.needsTable {
            commands.append(ConnectionFaults.createTable(faults, interface: interface,
                                                         selection: engineProfile.effectiveSelection(selection)))
        }
        if replaceIngress {
            commands.append(["tc", "qdisc", "del", "dev", interface.rawValue, "ingress"])
        }
        commands += ingressRedirect(interface: interface, ifb: ifb, restampObject: restampObject)
        return commands
    }

    /// The apply plan for a record: its profile, selection and engine (`executable` runs the user-space one).
    public static func applyPlan(state: ConditionState, executable: String, store: StateStore,
                                 replaceRoot: Bool = false) -> [[String]] {
        let start = state.activeEngine == .userspace
            ? UserspaceEngine.startCommand(executable: executable, interface: state.interface,
                                           engineID: state.engineID ?? "", store: store) : nil
        return applyPlan(profile: state.profile, interface: state.interface, selection: state.selection ?? .allIP,
                         replaceRoot: replaceRoot, replaceIngress: state.replacedIngress, engineStart: start,
                         mtu: state.mtu ?? defaultMTU,
                         restampObject: state.activeEngine == .userspace && state.restampsReceive == true
                            ? restampObjectPath(state.interface, store: store) : nil)
    }

    /// Where apply writes `ReceiveRestamp.object()` for tc to load (beside the record; removed once loaded).
    public static func restampObjectPath(_ interface: InterfaceName, store: StateStore) -> String {
        store.url(interface, suffix: "restamp.o").path
    }

    /// Switches an interface from the profile of `old` to that of `new` in place: class rates changed, leaf
    /// qdiscs replaced, added or removed. The ingress redirect and the ifb are not touched. A foreign root recorded
    /// in `new` but not in `old` is replaced by the new uplink tree (`--force`); one recorded in `old` and dropped
    /// from `new` is put back once the uplink tree is gone. `Conditioner` runs exactly this.
    public static func switchPlan(from old: ConditionState, to new: ConditionState) -> [[String]] {
        let selection = old.selection ?? .allIP
        let interface = old.interface
        let userspace = old.activeEngine == .userspace
        let oldProfile = userspace ? UserspaceEngine.rateOnly(old.profile) : old.profile
        let newProfile = userspace ? UserspaceEngine.rateOnly(new.profile) : new.profile
        let mtu = old.mtu ?? defaultMTU
        let oldUplink = uplinkSpec(oldProfile, selection: selection, mtu: mtu)
        let newUplink = uplinkSpec(newProfile, selection: selection, mtu: mtu)
        var plan: [[String]] = userspace ? [UserspaceEngine.switchTable(to: new.profile, interface: interface)] : []
        if !oldUplink.needsTree && newUplink.needsTree && new.replacedRoot != nil {
            plan += egressTree(device: interface, spec: newUplink, replaceRoot: true)
        } else {
            plan += switchEgress(device: interface, from: oldUplink, to: newUplink)
        }
        plan += switchEgress(device: interface.ifbName, from: downlinkSpec(oldProfile, selection: selection, mtu: mtu),
                             to: downlinkSpec(newProfile, selection: selection, mtu: mtu))
        if old.profile.faults.map({ $0.needsTable }) ?? false { plan.append(ConnectionFaults.deleteTable(interface)) }
        if let faults = new.profile.faults, faults.needsTable {
            plan.append(ConnectionFaults.createTable(faults, interface: interface,
                                                     selection: new.profile.effectiveSelection(selection)))
        }
        if oldUplink.needsTree && !newUplink.needsTree, new.replacedRoot == nil,
           let restore = old.replacedRoot?.restoreCommand(interface: interface) {
            plan.append(restore)
        }
        return plan
    }

    /// What `off` runs on an interface seen as `observed`, with `state` the record of what apply did (nil: TapKit
    /// qdiscs found without a record). The redirect goes first so arriving traffic flows normally, then the uplink
    /// tree, then what `--force` replaced comes back, then the ifb (which takes its tree with it). `Conditioner`
    /// runs exactly this (each command attempted even when one before failed); `condition plan` prints it for
    /// the interface as `apply` leaves it.
    public static func offPlan(interface: InterfaceName, state: ConditionState?, observed: ObservedInterface) -> [[String]] {
        // The queue rules first, so nothing more is queued; the engine sees its record gone and exits by itself.
        var commands: [[String]] = observed.presentQueueRules.map(UserspaceEngine.deleting)
        commands += observed.emptiedMangleTables.map { ["nft", "delete", "table", $0, "mangle"] }
        if observed.engineTablePresent { commands.append(UserspaceEngine.deleteTable(interface)) }
        if observed.faultTablePresent { commands.append(ConnectionFaults.deleteTable(interface)) }
        let dev = interface.rawValue
        if observed.interfacePresent {
            // With a record the ingress is ours (apply deleted any other first, under --force).
            let ingressOurs = observed.ingressPresent && (state != nil || observed.ingressRedirectsToOurIFB)
            if ingressOurs { commands.append(["tc", "qdisc", "del", "dev", dev, "ingress"]) }
            if observed.hasOurRoot { commands.append(["tc", "qdisc", "del", "dev", dev, "root"]) }
            if !observed.hasForeignRoot, let restore = state?.replacedRoot?.restoreCommand(interface: interface) {
                commands.append(restore)
            }
            if state?.replacedIngress == true, !observed.ingressPresent || ingressOurs {
                commands.append(["tc", "qdisc", "add", "dev", dev, "handle", ReservedHandles.ingress, "ingress"])
            }
        }
        if observed.ifbPresent { commands.append(["ip", "link", "del", "dev", interface.ifbName.rawValue]) }
        return commands
    }

    public static func uplinkSpec(_ profile: Profile, selection: TrafficSelection = .allIP, mtu: Int = defaultMTU) -> EgressSpec {
        EgressSpec(settings: profile.uplink, dnsDelayMicroseconds: profile.dnsDelayMicroseconds,
                   selection: profile.effectiveSelection(selection), direction: .uplink, mtu: mtu)
    }

    public static func downlinkSpec(_ profile: Profile, selection: TrafficSelection = .allIP, mtu: Int = defaultMTU) -> EgressSpec {
        EgressSpec(settings: profile.downlink, selection: profile.effectiveSelection(selection), direction: .downlink, mtu: mtu)
    }

    /// The ingress qdisc and the filters sending every arriving IPv4 and IPv6 packet to the ifb. ARP and
    /// other non-IP frames are not redirected, so a profile never delays or drops them.
    /// `restampObject`: with the user-space engine, the classifier is `ReceiveRestamp` loaded from that file (it
    /// matches every packet as `u32 match u32 0 0` does, and moves its receive stamp past the engine's hold).
    public static func ingressRedirect(interface: InterfaceName, ifb: InterfaceName, restampObject: String? = nil) -> [[String]] {
        let classifier = restampObject.map { ["bpf", "obj", $0, "sec", ReceiveRestamp.section] } ?? ["u32", "match", "u32", "0", "0"]
        return [["tc", "qdisc", "add", "dev", interface.rawValue, "handle", ReservedHandles.ingress, "ingress"]]
            + [("ip", ReservedHandles.ipv4FilterPriority), ("ipv6", ReservedHandles.ipv6FilterPriority)].map { family, priority in
                ["tc", "filter", "add", "dev", interface.rawValue, "parent", ReservedHandles.ingress,
                 "protocol", family, "prio", priority] + classifier
                    + ["action", "mirred", "egress", "redirect", "dev", ifb.rawValue]
            }
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
             "htb", "default", "0"],
            ["tc", "class", "add", "dev", dev, "parent", ReservedHandles.root, "classid", ReservedHandles.linkClass]
                + htbRate(rate(spec), ceil: rate(spec)) + overhead(spec),
            ["tc", "class", "add", "dev", dev, "parent", ReservedHandles.linkClass, "classid", ReservedHandles.mainClass]
                + htbRate(rate(spec), ceil: rate(spec)) + overhead(spec),
            segmenter(device: device, spec: spec, parent: ReservedHandles.mainClass, handle: ReservedHandles.mainSegmenter),
        ]
        if spec.settings.needsNetem {
            commands.append(addMainNetem(device: device, spec: spec))
        }
        if spec.dnsDelayMicroseconds > 0 {
            commands += dnsBranch(device: device, spec: spec)
        }
        return commands + TrafficFilters.commands(device: device, spec: spec)
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
        var rateCommands: [[String]] = []
        if rate(old) != rate(new) || old.settings.packetOverheadBytes != new.settings.packetOverheadBytes {
            rateCommands.append(["tc", "class", "change", "dev", dev, "parent", ReservedHandles.root,
                                 "classid", ReservedHandles.linkClass] + htbRate(rate(new), ceil: rate(new)) + overhead(new))
            rateCommands.append(["tc", "class", "change", "dev", dev, "parent", ReservedHandles.linkClass,
                                 "classid", ReservedHandles.mainClass] + htbRate(rate(new), ceil: rate(new)) + overhead(new))
        }
        // Into a profile that drops everything (Black Hole), the old leaf goes first, and with it the packets queued
        // under the old profile: otherwise that backlog drains at the new, unlimited rate before the loss takes hold
        // (seen in the VM: 48 KB of a Slow Net download arrived after the switch to Black Hole).
        let dropsEverything = new.settings.lossPercent >= 100 && old.settings.needsNetem
        if dropsEverything {
            commands.append(removeMainNetem(device: device, spec: new))
            commands.append(addMainNetem(device: device, spec: new))
        }
        commands += rateCommands
        switch (old.settings.needsNetem, new.settings.needsNetem) {
        case _ where dropsEverything:
            break
        case (true, true):
            if mainNetem(old) != mainNetem(new) {
                commands.append(["tc", "qdisc", "change", "dev", dev, "parent", ReservedHandles.mainSegmenterClass,
                                 "handle", ReservedHandles.mainNetem] + mainNetem(new))
            }
        case (false, true):
            commands.append(addMainNetem(device: device, spec: new))
        case (true, false):
            commands.append(removeMainNetem(device: device, spec: new))
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
                commands.append(["tc", "qdisc", "change", "dev", dev, "parent", ReservedHandles.dnsSegmenterClass,
                                 "handle", ReservedHandles.dnsNetem] + dnsNetem(new))
            }
        case (false, true):
            commands += dnsBranch(device: device, spec: new) + TrafficFilters.dnsCommands(device: device, spec: new)
        case (true, false):
            // Filters first: a class still referenced by a filter cannot be deleted.
            commands += TrafficFilters.removeDNSCommands(device: device, spec: old)
            commands.append(["tc", "class", "del", "dev", dev, "parent", ReservedHandles.linkClass,
                             "classid", ReservedHandles.dnsClass])
        case (false, false):
            break
        }
        return commands
    }

    // MARK: - Pieces

    /// The DNS class, its segmenter and its netem; its filters come with the others (`TrafficFilters`).
    private static func dnsBranch(device: InterfaceName, spec: EgressSpec) -> [[String]] {
        let dev = device.rawValue
        return [
            ["tc", "class", "add", "dev", dev, "parent", ReservedHandles.linkClass, "classid", ReservedHandles.dnsClass]
                + htbRate(dnsRate(spec), ceil: rate(spec)),
            segmenter(device: device, spec: spec, parent: ReservedHandles.dnsClass, handle: ReservedHandles.dnsSegmenter),
            ["tc", "qdisc", "add", "dev", dev, "parent", ReservedHandles.dnsSegmenterClass,
             "handle", ReservedHandles.dnsNetem] + dnsNetem(spec),
        ]
    }

    /// The tbf below a class that cuts GSO packets into frames (see the type's comment). tbf segments a GSO packet
    /// longer than its burst when each segment fits in the burst, and drops any other packet longer than it, so
    /// the burst is the largest frame the interface carries: its MTU plus 64 bytes for the link header and VLAN tags
    /// (`largestFrameBytes`). Its own byte fifo (`limit`) is the class's queue when there is no netem.
    static func segmenter(device: InterfaceName, spec: EgressSpec, parent: String, handle: String) -> [String] {
        ["tc", "qdisc", "add", "dev", device.rawValue, "parent", parent, "handle", handle, "tbf",
         "rate", TCUnits.rate(bitsPerSecond: segmenterBitsPerSecond), "burst", String(largestFrameBytes(spec)),
         "limit", String(queueBytes(spec))]
    }

    /// The longest frame on the interface: MTU plus room for the link header and two VLAN tags.
    static func largestFrameBytes(_ spec: EgressSpec) -> Int { spec.mtu + 64 }

    /// A class's queue without netem, in bytes: `ifbQueueLength` full frames, as the pfifo htb would give it holds packets.
    static func queueBytes(_ spec: EgressSpec) -> Int { ifbQueueLength * largestFrameBytes(spec) }

    /// `replace`, not `add`: after a switch the segmenter's child is the fifo `removeMainNetem` put there, and the
    /// kernel refuses to `add` over a child that is not the default one ("NLM_F_REPLACE needed to override").
    private static func addMainNetem(device: InterfaceName, spec: EgressSpec) -> [String] {
        ["tc", "qdisc", "replace", "dev", device.rawValue, "parent", ReservedHandles.mainSegmenterClass,
         "handle", ReservedHandles.mainNetem] + mainNetem(spec)
    }

    /// Puts a byte fifo in the main netem's place, dropping what the netem held. `tc qdisc del` would not do:
    /// tbf puts its noop qdisc in a deleted child's place, and that drops every packet.
    private static func removeMainNetem(device: InterfaceName, spec: EgressSpec) -> [String] {
        ["tc", "qdisc", "replace", "dev", device.rawValue, "parent", ReservedHandles.mainSegmenterClass,
         "handle", ReservedHandles.mainFifo, "bfifo", "limit", String(queueBytes(spec))]
    }

    /// The class rate: the profile's bandwidth, or `unlimitedBitsPerSecond` when unchanged.
    static func rate(_ spec: EgressSpec) -> UInt64 {
        spec.settings.bitsPerSecond > 0 ? spec.settings.bitsPerSecond : unlimitedBitsPerSecond
    }

    /// htb's per-packet `overhead` for the rate tables (link-layer framing the profile says to count).
    /// Left out when 0: `tc class change` without it sets 0 again.
    static func overhead(_ spec: EgressSpec) -> [String] {
        spec.settings.packetOverheadBytes != 0 ? ["overhead", String(spec.settings.packetOverheadBytes)] : []
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
        netem(spec.settings, delay: spec.settings.delayMicroseconds, rate: rate(spec))
    }

    static func dnsNetem(_ spec: EgressSpec) -> [String] {
        netem(spec.settings, delay: spec.settings.delayMicroseconds + spec.dnsDelayMicroseconds, rate: dnsRate(spec))
    }

    /// netem arguments. Its queue limit must hold everything in flight during the delay: at `rate` for
    /// delay + jitter, counted in small packets and doubled for headroom, never below netem's default 1000.
    /// The correlation applies to the jitter and the loss alike (NLC has one knob; netem one per value).
    static func netem(_ settings: LinkSettings, delay: UInt64, rate: UInt64) -> [String] {
        let jitter = settings.jitterMicroseconds
        let correlation = settings.correlationPercent > 0 ? [TCUnits.percent(settings.correlationPercent)] : []
        var arguments = ["netem"]
        if delay > 0 || jitter > 0 {
            arguments += ["delay", TCUnits.time(microseconds: delay)]
            if jitter > 0 {
                arguments.append(TCUnits.time(microseconds: jitter))
                arguments += correlation
                if let distribution = settings.jitterDistribution { arguments += ["distribution", distribution.rawValue] }
            }
        }
        if settings.lossPercent > 0 { arguments += ["loss", TCUnits.percent(settings.lossPercent)] + correlation }
        if settings.reorderPercent > 0 { arguments += ["reorder", TCUnits.percent(settings.reorderPercent)] }
        if settings.duplicatePercent > 0 { arguments += ["duplicate", TCUnits.percent(settings.duplicatePercent)] }
        if settings.corruptPercent > 0 { arguments += ["corrupt", TCUnits.percent(settings.corruptPercent)] }
        arguments += ["limit", String(netemLimit(rate: rate, delay: delay + jitter))]
        return arguments
    }

    /// The same for code that has only the three classic values.
    static func netem(delay: UInt64, jitter: UInt64, loss: Double, rate: UInt64) -> [String] {
        netem(LinkSettings(jitterMicroseconds: jitter, lossPercent: loss), delay: delay, rate: rate)
    }

    public static func netemLimit(rate: UInt64, delay microseconds: UInt64) -> UInt64 {
        let bytesInFlight = Double(rate) / 8 * Double(microseconds) / 1_000_000
        let packets = UInt64((2 * bytesInFlight / Double(averagePacketBytes)).rounded(.up))
        return max(1000, packets)
    }
}
