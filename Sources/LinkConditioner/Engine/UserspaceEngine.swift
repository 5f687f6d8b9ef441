import Foundation

/// What carries delay, jitter, loss and reordering on an interface: the kernel's netem qdiscs, or, on kernels
/// without `sch_netem` (WSL2's, many cloud and container kernels), nftables for loss and a user-space engine on
/// the netfilter queue for everything that holds packets. htb carries the bandwidth either way.
public enum ConditioningEngine: String, Sendable, Codable, Equatable {
    case netem
    case userspace

    /// In words, for `plan`, `status`, `list` and `doctor`.
    public var summary: String {
        switch self {
        case .netem: "netem (kernel)"
        case .userspace: "user space (nftables + netfilter queue)"
        }
    }
}

/// The nftables and iptables rules of the user-space engine, and the queues it serves. Nothing here runs anything.
///
/// ```
/// table inet tapkit_IFACE
///   chain uplink   (postrouting, priority -160, oifname IFACE)  -> uplink_select
///   chain downlink (prerouting,  priority -160, iifname IFACE)  -> downlink_select
///   chain *_select: NDP and --exclude return; targets (or all IP) go to *_apply
///   chain *_apply:  loss without correlation: numgen random drop; DNS: mark 0x40000000; the rest: mark 0x20000000
///   chain unmark (postrouting and prerouting, priority -140): the mark bits cleared again
/// The engine's own copies on the uplink (`RawPacketSender`) carry mark 0x10000000 and pass `uplink` untouched.
/// iptables-nft/ip6tables-nft -t mangle (priority -150, between the two):
///   -o IFACE -m mark --mark 0x20000000/0x60000000 -j NFQUEUE --queue-num BASE --queue-bypass    (uplink)
///   -o IFACE -m mark --mark 0x40000000/0x60000000 -j NFQUEUE --queue-num BASE+1 --queue-bypass  (uplink DNS)
///   -i IFACE -m mark --mark 0x20000000/0x60000000 -j NFQUEUE --queue-num BASE+2 --queue-bypass  (downlink)
/// ```
/// nftables selects (the same targets, exclusions and NDP exception as the tc filters) and drops; the queue is
/// reached through iptables-nft because nft's own `queue` statement needs `nft_queue`, which kernels without
/// netem often lack too, while the xt NFQUEUE target is there. `--queue-bypass` lets packets through untouched
/// if no engine is listening (it crashed): never a black hole by accident. The marks live only between priority
/// -160 and -140 of one hook, so routing and the user's own marks never see them.
public enum UserspaceEngine {
    static let mainMark: UInt32 = 0x2000_0000
    static let dnsMark: UInt32 = 0x4000_0000
    /// Set (with SO_MARK) on the copies the engine sends again on the uplink, so its rules let them pass.
    static let resentMark: UInt32 = 0x1000_0000
    static let markMask: UInt32 = 0x7000_0000

    /// The engine's queues on one interface: uplink, uplink DNS, downlink.
    struct Queue: Equatable, Sendable {
        enum Role: Equatable, Sendable { case uplink, uplinkDNS, downlink }
        var number: UInt16
        var role: Role
    }

    /// The nftables table of `interface` (`tapkit_` and its name, with `.` and `-` as `_`).
    public static func table(_ interface: InterfaceName) -> String {
        "tapkit_" + String(interface.rawValue.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// Three queue numbers per interface from 8192 on, chosen by a hash of its name (FNV-1a), so a plan can name
    /// them before anything exists; `apply` refuses a number another active interface already uses.
    static func queues(_ interface: InterfaceName) -> [Queue] {
        var hash: UInt32 = 2_166_136_261
        for byte in interface.rawValue.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let base = UInt16(8192 + (hash % 16_000) * 3)
        return [Queue(number: base, role: .uplink), Queue(number: base + 1, role: .uplinkDNS),
                Queue(number: base + 2, role: .downlink)]
    }

    /// The models the engine applies to each queue for `profile`: the part of the settings nftables cannot do.
    static func models(_ profile: Profile, interface: InterfaceName) -> [UInt16: DelayModel] {
        var models: [UInt16: DelayModel] = [:]
        for queue in queues(interface) {
            switch queue.role {
            case .uplink:
                models[queue.number] = DelayModel(settings: profile.uplink, lossInEngine: lossInEngine(profile.uplink, uplink: true))
            case .uplinkDNS:
                models[queue.number] = DelayModel(settings: profile.uplink, extraDelayMicroseconds: profile.dnsDelayMicroseconds,
                                                  lossInEngine: lossInEngine(profile.uplink, uplink: true))
            case .downlink:
                models[queue.number] = DelayModel(settings: profile.downlink, lossInEngine: lossInEngine(profile.downlink, uplink: false))
            }
        }
        return models
    }

    /// Where a direction's loss is decided. Downlink: nftables' `numgen` (no queue), unless correlated (that needs
    /// the engine's memory of the last draw). Uplink: always the engine. A packet this host sends that netfilter
    /// drops on its way out fails the send itself (`sendto`/`connect` get EPERM at once), where a lossy link, and
    /// netem, lose it silently; a packet dropped by a verdict after it was queued is lost silently, as on a link.
    static func lossInEngine(_ settings: LinkSettings, uplink: Bool) -> Bool {
        settings.lossPercent > 0 && (uplink || settings.correlationPercent > 0)
    }

    /// Whether a direction's packets go through the engine at all.
    static func needsQueue(_ settings: LinkSettings, uplink: Bool) -> Bool {
        settings.delayMicroseconds > 0 || settings.jitterMicroseconds > 0 || settings.reorderPercent > 0
            || lossInEngine(settings, uplink: uplink)
    }

    /// How many packets each queue may hold, as netem's limit is sized: rate × (delay + jitter) for the slower
    /// direction's worst case, in small packets, doubled, never below 1000.
    public static func maximumHeld(_ profile: Profile) -> UInt32 {
        let limits = [profile.uplink, profile.downlink].map { settings in
            PlanBuilder.netemLimit(rate: settings.bitsPerSecond > 0 ? settings.bitsPerSecond : PlanBuilder.unlimitedBitsPerSecond / 100,
                                   delay: settings.delayMicroseconds + settings.jitterMicroseconds + profile.dnsDelayMicroseconds)
        }
        return UInt32(min(limits.max() ?? 1000, 1_000_000))
    }

    /// What the user-space engine cannot do (it holds and drops packets, it does not copy or change them).
    public static func unsupported(_ profile: Profile) -> [String] {
        let both = [profile.downlink, profile.uplink]
        var missing: [String] = []
        if both.contains(where: { $0.duplicatePercent > 0 }) { missing.append("duplication") }
        if both.contains(where: { $0.corruptPercent > 0 }) { missing.append("corruption") }
        return missing
    }

    /// The settings htb still carries when the engine does the rest: bandwidth and framing overhead.
    static func rateOnly(_ profile: Profile) -> Profile {
        var copy = profile
        copy.downlink = LinkSettings(bitsPerSecond: profile.downlink.bitsPerSecond, packetOverheadBytes: profile.downlink.packetOverheadBytes)
        copy.uplink = LinkSettings(bitsPerSecond: profile.uplink.bitsPerSecond, packetOverheadBytes: profile.uplink.packetOverheadBytes)
        copy.dnsDelayMicroseconds = 0
        return copy
    }

    // MARK: - Commands

    /// One `nft` invocation (one netlink transaction: all or nothing) making the table, its chains and rules.
    static func createTable(_ profile: Profile, interface: InterfaceName, selection: TrafficSelection) -> [String] {
        let table = table(interface)
        var script: [[String]] = [["add", "table", "inet", table]]
        for (chain, hook) in [("uplink", "postrouting"), ("downlink", "prerouting")] {
            script.append(["add", "chain", "inet", table, chain, "{", "type", "filter", "hook", hook, "priority", "-160", ";", "}"])
            script.append(["add", "chain", "inet", table, chain + "_select"])
            script.append(["add", "chain", "inet", table, chain + "_apply"])
            script.append(["add", "chain", "inet", table, "unmark_" + chain,
                           "{", "type", "filter", "hook", hook, "priority", "-140", ";", "}"])
            let device = chain == "uplink" ? "oifname" : "iifname"
            if chain == "uplink" {
                script.append(["add", "rule", "inet", table, chain, "meta", "mark", "&", hex(resentMark), "!=", "0", "return"])
            }
            script.append(["add", "rule", "inet", table, chain, device, quoted(interface.rawValue), "jump", chain + "_select"])
            script.append(["add", "rule", "inet", table, "unmark_" + chain, device, quoted(interface.rawValue),
                           "meta", "mark", "&", hex(markMask), "!=", "0", "meta", "mark", "set", "meta", "mark", "&", hex(~markMask)])
            let spec = chain == "uplink" ? PlanBuilder.uplinkSpec(profile, selection: selection)
                                         : PlanBuilder.downlinkSpec(profile, selection: selection)
            script += selectRules(table: table, chain: chain, spec: spec)
        }
        script += applyRules(profile, table: table)
        return nft(script)
    }

    /// One `nft` invocation replacing the drop and mark rules for a new profile; selection rules stay.
    static func switchTable(to profile: Profile, interface: InterfaceName) -> [String] {
        let table = table(interface)
        return nft([["flush", "chain", "inet", table, "uplink_apply"], ["flush", "chain", "inet", table, "downlink_apply"]]
                   + applyRules(profile, table: table))
    }

    static func deleteTable(_ interface: InterfaceName) -> [String] {
        ["nft", "delete", "table", "inet", table(interface)]
    }

    /// The iptables-nft rules feeding the queues, as `-A` arguments (`-D` removes, `-C` checks).
    static func queueRules(_ interface: InterfaceName) -> [[String]] {
        queues(interface).flatMap { queue -> [[String]] in
            let (chain, device, mark) = switch queue.role {
            case .uplink: ("POSTROUTING", "-o", mainMark)
            case .uplinkDNS: ("POSTROUTING", "-o", dnsMark)
            case .downlink: ("PREROUTING", "-i", mainMark)
            }
            return ["iptables-nft", "ip6tables-nft"].map { program in
                [program, "-t", "mangle", "-A", chain, device, interface.rawValue, "-m", "mark", "--mark",
                 "\(hex(mark))/\(hex(markMask))", "-j", "NFQUEUE", "--queue-num", String(queue.number), "--queue-bypass"]
            }
        }
    }

    /// Whether a `mangle` table (`nft -j list table FAMILY mangle`) holds exactly `ruleCount` rules and only the
    /// built-in chains iptables-nft makes: then it is empty once those rules go.
    static func mangleTableHoldsOnly(ruleCount: Int, nftJSON: Data) -> Bool {
        guard let root = try? JSONSerialization.jsonObject(with: nftJSON) as? [String: Any],
              let items = root["nftables"] as? [[String: Any]] else { return false }
        let builtIn: Set<String> = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"]
        let chains = items.compactMap { ($0["chain"] as? [String: Any])?["name"] as? String }
        let rules = items.filter { $0["rule"] != nil }.count
        return rules == ruleCount && chains.allSatisfy(builtIn.contains) && !items.contains { $0["set"] != nil || $0["map"] != nil }
    }

    /// What the drop rules of one `*_apply` chain (`nft -j list chain inet TABLE CHAIN`) dropped: nftables' own loss
    /// (no correlation) and Black Hole, which never reach a queue or a qdisc, so only these counters see them.
    static func dropCounters(nftJSON: Data) -> (packets: UInt64, bytes: UInt64)? {
        guard let root = try? JSONSerialization.jsonObject(with: nftJSON) as? [String: Any],
              let items = root["nftables"] as? [[String: Any]] else { return nil }
        var packets: UInt64 = 0, bytes: UInt64 = 0
        for item in items {
            guard let rule = item["rule"] as? [String: Any], let expressions = rule["expr"] as? [[String: Any]],
                  expressions.contains(where: { $0.keys.contains("drop") }),
                  let counter = expressions.lazy.compactMap({ $0["counter"] as? [String: Any] }).first else { continue }
            packets += (counter["packets"] as? NSNumber)?.uint64Value ?? 0
            bytes += (counter["bytes"] as? NSNumber)?.uint64Value ?? 0
        }
        return (packets, bytes)
    }

    static func deleting(_ rule: [String]) -> [String] { rule.map { $0 == "-A" ? "-D" : $0 } }
    static func checking(_ rule: [String]) -> [String] { rule.map { $0 == "-A" ? "-C" : $0 } }

    /// Starts the engine in the network namespace the runner runs in, detached in a session of its own; returns
    /// once it has bound its queues (or failed to: then non-zero, with why, and apply rolls back). It reads the
    /// profile from the record, follows switches and exits when the record goes.
    static func startCommand(executable: String, interface: InterfaceName, engineID: String, store: StateStore) -> [String] {
        [executable, "__engine", "-i", interface.rawValue, "--id", engineID,
         "--state-dir", store.directory.path, "--namespace-id", store.namespaceID]
    }

    // MARK: - Rules

    private static func selectRules(table: String, chain: String, spec: EgressSpec) -> [[String]] {
        let select = chain + "_select"
        let apply = chain + "_apply"
        let far = spec.direction == .uplink ? "daddr" : "saddr"
        let farPort = spec.direction == .uplink ? "dport" : "sport"
        let localPort = spec.direction == .uplink ? "sport" : "dport"
        var rules: [[String]] = [
            ["add", "rule", "inet", table, select, "icmpv6", "type",
             "{", "nd-router-solicit,", "nd-router-advert,", "nd-neighbor-solicit,", "nd-neighbor-advert,", "nd-redirect", "}", "return"],
        ]
        for exclusion in spec.selection.exclusions {
            rules.append(["add", "rule", "inet", table, select]
                         + exclusionMatch(exclusion.endpoint, uplink: spec.direction == .uplink) + ["return"])
        }
        var ports: [String] = []
        if !spec.selection.ports.isEmpty {
            ports += ["meta", "l4proto", "{", "tcp,", "udp", "}", "th", farPort] + set(spec.selection.ports.map(String.init))
        }
        if !spec.selection.localPorts.isEmpty {
            if ports.isEmpty { ports += ["meta", "l4proto", "{", "tcp,", "udp", "}"] }
            ports += ["th", localPort] + set(spec.selection.localPorts.map(String.init))
        }
        if spec.selection.hosts.isEmpty {
            rules.append(["add", "rule", "inet", table, select] + ports + ["goto", apply])
        } else {
            for (family, keyword) in [(IPNetwork.Family.ipv4, "ip"), (.ipv6, "ip6")] {
                let hosts = spec.selection.hosts.filter { $0.family == family }.map(\.tcForm)
                if hosts.isEmpty { continue }
                rules.append(["add", "rule", "inet", table, select, keyword, far] + set(hosts) + ports + ["goto", apply])
            }
        }
        return rules
    }

    /// Matches traffic with an excluded far end (destination on the way out, source on the way in).
    static func exclusionMatch(_ endpoint: RemoteEndpoint, uplink: Bool) -> [String] {
        var match = [endpoint.network.family == .ipv4 ? "ip" : "ip6", uplink ? "daddr" : "saddr", endpoint.network.tcForm]
        if let port = endpoint.port { match += ["meta", "l4proto", "{", "tcp,", "udp", "}", "th", uplink ? "dport" : "sport", String(port)] }
        return match
    }

    private static func applyRules(_ profile: Profile, table: String) -> [[String]] {
        var rules: [[String]] = []
        for (chain, settings) in [("uplink", profile.uplink), ("downlink", profile.downlink)] {
            let apply = chain + "_apply"
            let uplink = chain == "uplink"
            if settings.lossPercent > 0 && !lossInEngine(settings, uplink: uplink) {
                if settings.lossPercent >= 100 {
                    rules.append(["add", "rule", "inet", table, apply, "counter", "drop"])
                    continue
                }
                // In millionths: loss is given to four decimals (netem's 32-bit probability is finer still).
                let threshold = Int((settings.lossPercent * 10_000).rounded())
                rules.append(["add", "rule", "inet", table, apply, "numgen", "random", "mod", "1000000", "<", String(threshold),
                              "counter", "drop"])
            }
            if chain == "uplink" && profile.dnsDelayMicroseconds > 0 {
                rules.append(["add", "rule", "inet", table, apply, "meta", "l4proto", "{", "tcp,", "udp", "}", "th", "dport", "53",
                              "meta", "mark", "set", "meta", "mark", "|", hex(dnsMark), "counter", "return"])
            }
            if needsQueue(settings, uplink: uplink) {
                rules.append(["add", "rule", "inet", table, apply, "meta", "mark", "set", "meta", "mark", "|", hex(mainMark), "counter"])
            }
        }
        return rules
    }

    /// Commands joined with `;` into one `nft` run: nft reads its arguments as one script, sent as one batch.
    static func nft(_ script: [[String]]) -> [String] {
        ["nft"] + script.enumerated().flatMap { index, command in index == 0 ? command : [";"] + command }
    }

    static func set(_ values: [String]) -> [String] {
        values.count == 1 ? values : ["{"] + values.enumerated().map { $0 == values.count - 1 ? $1 : $1 + "," } + ["}"]
    }

    private static func quoted(_ name: String) -> String { "\"\(name)\"" }
    private static func hex(_ value: UInt32) -> String { "0x" + String(value, radix: 16) }
}
