/// Which way the packets on a conditioned egress travel, which decides where the far end's address and
/// port are in the header: leaving the interface (uplink) the far end is the destination; on the ifb, which
/// carries what arrived (downlink), it is the source.
public enum TrafficDirection: String, Sendable, Codable {
    case uplink, downlink
}

/// The u32 filters that sort an egress tree's packets. htb's `default 0` sends anything no filter claims
/// straight through htb's direct queue, unshaped and undelayed, so only what a filter puts in a class is
/// conditioned:
/// ```
/// prio 1  ipv6  NDP (ICMPv6 133-137)          -> 7ac0:0  (direct: untouched)
/// prio 2  ip    exclusions                    -> 7ac0:0
/// prio 3  ipv6  exclusions                    -> 7ac0:0
/// prio 4  ip    DNS (port 53) within targets  -> 7ac0:20
/// prio 5  ipv6  DNS (port 53) within targets  -> 7ac0:20
/// prio 6  ip    targets (or all IPv4)         -> 7ac0:10
/// prio 7  ipv6  targets (or all IPv6)         -> 7ac0:10
/// ```
/// ARP and other non-IP frames match no filter (every filter is `protocol ip` or `protocol ipv6`).
/// u32's `ip`/`ip6` port matches assume a 20-byte IPv4 header (no options) and no IPv6 extension headers,
/// as tc's own `match ip dport` does.
public enum TrafficFilters {
    /// One u32 match: a family, and optionally a far-end network, a transport protocol and ports.
    struct Rule: Hashable {
        var family: IPNetwork.Family
        var network: IPNetwork?
        var transport: UInt8?
        var remotePort: UInt16?
        var localPort: UInt16?
    }

    static let tcp: UInt8 = 6, udp: UInt8 = 17
    /// Router and neighbour solicitations and advertisements, and redirects: NDP, which must never be delayed
    /// or dropped or the neighbour entry fails and nothing at all reaches the far end.
    public static let neighbourDiscoveryTypes: [UInt8] = [133, 134, 135, 136, 137]

    static func priority(_ purpose: Purpose, _ family: IPNetwork.Family) -> String {
        switch (purpose, family) {
        case (.neighbourDiscovery, _): "1"
        case (.exclusion, .ipv4): "2"
        case (.exclusion, .ipv6): "3"
        case (.dns, .ipv4): "4"
        case (.dns, .ipv6): "5"
        case (.conditioned, .ipv4): "6"
        case (.conditioned, .ipv6): "7"
        }
    }

    enum Purpose { case neighbourDiscovery, exclusion, dns, conditioned }

    /// The filters for one tree: NDP and exclusions direct, DNS to the DNS class (when `withDNS`), the
    /// selected traffic to the main class.
    static func commands(device: InterfaceName, spec: EgressSpec) -> [[String]] {
        let selection = spec.selection
        var commands: [[String]] = []
        for type in neighbourDiscoveryTypes {
            commands.append(filter(device, .neighbourDiscovery, .ipv6, flowid: ReservedHandles.direct,
                                   matches: [["match", "ip6", "protocol", "58", "0xff"],
                                             ["match", "ip6", "icmp_type", String(type), "0xff"]]))
        }
        for rule in exclusionRules(selection) {
            commands.append(filter(device, .exclusion, rule.family, flowid: ReservedHandles.direct,
                                   matches: matches(rule, direction: spec.direction)))
        }
        if spec.dnsDelayMicroseconds > 0 { commands += dnsCommands(device: device, spec: spec) }
        for rule in selectionRules(selection) {
            commands.append(filter(device, .conditioned, rule.family, flowid: ReservedHandles.mainClass,
                                   matches: matches(rule, direction: spec.direction)))
        }
        return commands
    }

    /// The DNS filters alone (added or removed when a switch adds or drops the DNS delay).
    static func dnsCommands(device: InterfaceName, spec: EgressSpec) -> [[String]] {
        dnsRules(spec.selection).map { rule in
            filter(device, .dns, rule.family, flowid: ReservedHandles.dnsClass,
                   matches: matches(rule, direction: .uplink))
        }
    }

    /// `tc filter del` for the DNS filters, one per family that has any.
    static func removeDNSCommands(device: InterfaceName, spec: EgressSpec) -> [[String]] {
        let families = IPNetwork.Family.allCases.filter { family in dnsRules(spec.selection).contains { $0.family == family } }
        return families.map { family in
            ["tc", "filter", "del", "dev", device.rawValue, "parent", ReservedHandles.root,
             "protocol", protocolName(family), "prio", priority(.dns, family)]
        }
    }

    private static func filter(_ device: InterfaceName, _ purpose: Purpose, _ family: IPNetwork.Family,
                               flowid: String, matches: [[String]]) -> [String] {
        var command = ["tc", "filter", "add", "dev", device.rawValue, "parent", ReservedHandles.root,
                       "protocol", protocolName(family), "prio", priority(purpose, family), "u32"]
        command += matches.isEmpty ? ["match", "u32", "0", "0"] : matches.flatMap { $0 }
        return command + ["flowid", flowid]
    }

    static func protocolName(_ family: IPNetwork.Family) -> String { family == .ipv4 ? "ip" : "ipv6" }

    /// u32 match clauses for a rule, seen from `direction`.
    static func matches(_ rule: Rule, direction: TrafficDirection) -> [[String]] {
        let key = rule.family == .ipv4 ? "ip" : "ip6"
        let (remoteAddress, remotePort, localPort) = direction == .uplink ? ("dst", "dport", "sport") : ("src", "sport", "dport")
        var clauses: [[String]] = []
        if let network = rule.network { clauses.append(["match", key, remoteAddress, network.tcForm]) }
        if let transport = rule.transport { clauses.append(["match", key, "protocol", String(transport), "0xff"]) }
        if let port = rule.remotePort { clauses.append(["match", key, remotePort, String(port), "0xffff"]) }
        if let port = rule.localPort { clauses.append(["match", key, localPort, String(port), "0xffff"]) }
        return clauses
    }

    /// Targets as rules, IPv4 first: kinds combine, values of one kind are alternatives; ports mean TCP and UDP.
    static func selectionRules(_ selection: TrafficSelection) -> [Rule] {
        let networks: [IPNetwork?] = selection.hosts.isEmpty ? [nil] : selection.hosts
        let transports: [UInt8?] = selection.ports.isEmpty && selection.localPorts.isEmpty ? [nil] : [tcp, udp]
        let remotePorts: [UInt16?] = selection.ports.isEmpty ? [nil] : selection.ports
        let localPorts: [UInt16?] = selection.localPorts.isEmpty ? [nil] : selection.localPorts
        var rules: [Rule] = []
        for family in IPNetwork.Family.allCases {
            for network in networks where network == nil || network?.family == family {
                for transport in transports {
                    for remote in remotePorts {
                        for local in localPorts {
                            rules.append(Rule(family: family, network: network, transport: transport,
                                              remotePort: remote, localPort: local))
                        }
                    }
                }
            }
        }
        return unique(rules)
    }

    static func exclusionRules(_ selection: TrafficSelection) -> [Rule] {
        var rules: [Rule] = []
        for family in IPNetwork.Family.allCases {
            for exclusion in selection.exclusions where exclusion.endpoint.network.family == family {
                if let port = exclusion.endpoint.port {
                    for transport in [tcp, udp] {
                        rules.append(Rule(family: family, network: exclusion.endpoint.network, transport: transport, remotePort: port))
                    }
                } else {
                    rules.append(Rule(family: family, network: exclusion.endpoint.network))
                }
            }
        }
        return unique(rules)
    }

    /// DNS queries (UDP and TCP to port 53) among the selected traffic.
    static func dnsRules(_ selection: TrafficSelection) -> [Rule] {
        var rules: [Rule] = []
        for rule in selectionRules(selection) where rule.remotePort == nil || rule.remotePort == 53 {
            for transport in [udp, tcp] where rule.transport == nil || rule.transport == transport {
                var dns = rule
                dns.transport = transport
                dns.remotePort = 53
                rules.append(dns)
            }
        }
        return unique(rules)
    }

    private static func unique(_ rules: [Rule]) -> [Rule] {
        var seen = Set<Rule>()
        return rules.filter { seen.insert($0).inserted }
    }
}
