import Foundation
import LinkConditioner
import TestSupport
import Testing

/// Issue 11: only IP is conditioned (ARP and NDP pass), targets narrow it, exclusions take some out.
@Suite struct TrafficSelectionTests {
    static let names = ["Slow Net", "Nasty Net", "Black Hole", "3G", "Edge", "DSL", "Cable Modem", "Very Bad Network",
                        "100% Loss", "LTE", "Wi-Fi", "High Latency DNS"]

    /// No filter of any built-in plan matches `protocol all` (ARP would be caught); every tree leaves what no
    /// filter claims to htb's direct queue; NDP filters come before any filter that conditions.
    @Test(arguments: names)
    func onlyIPIsEverConditioned(name: String) throws {
        let plan = PlanBuilder.applyPlan(profile: try builtIns().profile(named: name), interface: try InterfaceName("eth0"))
        let filters = plan.filter { $0.starts(with: ["tc", "filter", "add"]) }
        for filter in filters {
            let protocolValue = filter[filter.firstIndex(of: "protocol")! + 1]
            #expect(["ip", "ipv6"].contains(protocolValue), "\(filter.joined(separator: " "))")
        }
        let redirects = filters.filter { $0.contains("mirred") }
        #expect(redirects.count == 2, "one redirect for IPv4, one for IPv6")
        for root in plan where root.contains("root") && root.contains("htb") {
            #expect(Array(root.suffix(2)) == ["default", "0"], "unclassified traffic must pass through htb's direct queue")
        }
        for device in Set(plan.filter { $0.contains("htb") && $0.contains("root") }.map { $0[4] }) {
            let treeFilters = filters.filter { $0[4] == device && !$0.contains("mirred") }
            let ndp = treeFilters.prefix(5)
            #expect(Array(ndp) == ndpFilters(device), "NDP first on \(device)")
            #expect(treeFilters.dropFirst(5).allSatisfy { Int($0[$0.firstIndex(of: "prio")! + 1])! > 1 })
        }
    }

    @Test func targetsAndExclusionsBecomeExactFilters() throws {
        var selection = TrafficSelection(hosts: [try IPNetwork("10.1.2.3"), try IPNetwork("2001:DB8::/32")], ports: [443])
        selection.exclusions = [.init(try RemoteEndpoint("192.0.2.7:22"))]
        let profile = Profile(name: "T", downlink: LinkSettings(bitsPerSecond: 1_000_000), uplink: LinkSettings(bitsPerSecond: 500_000))
        let plan = PlanBuilder.applyPlan(profile: profile, interface: try InterfaceName("eth0"), selection: selection)
        let filters = lines(plan.filter { $0.starts(with: ["tc", "filter"]) && !$0.contains("icmp_type") })
        #expect(filters == """
            tc filter add dev eth0 parent 7ac0: protocol ip prio 2 u32 match ip dst 192.0.2.7/32 match ip protocol 6 0xff match ip dport 22 0xffff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 2 u32 match ip dst 192.0.2.7/32 match ip protocol 17 0xff match ip dport 22 0xffff flowid 7ac0:0
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match ip dst 10.1.2.3/32 match ip protocol 6 0xff match ip dport 443 0xffff flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ip prio 6 u32 match ip dst 10.1.2.3/32 match ip protocol 17 0xff match ip dport 443 0xffff flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match ip6 dst 2001:db8::/32 match ip6 protocol 6 0xff match ip6 dport 443 0xffff flowid 7ac0:10
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 7 u32 match ip6 dst 2001:db8::/32 match ip6 protocol 17 0xff match ip6 dport 443 0xffff flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 2 u32 match ip src 192.0.2.7/32 match ip protocol 6 0xff match ip sport 22 0xffff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 2 u32 match ip src 192.0.2.7/32 match ip protocol 17 0xff match ip sport 22 0xffff flowid 7ac0:0
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match ip src 10.1.2.3/32 match ip protocol 6 0xff match ip sport 443 0xffff flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ip prio 6 u32 match ip src 10.1.2.3/32 match ip protocol 17 0xff match ip sport 443 0xffff flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match ip6 src 2001:db8::/32 match ip6 protocol 6 0xff match ip6 sport 443 0xffff flowid 7ac0:10
            tc filter add dev tk-eth0 parent 7ac0: protocol ipv6 prio 7 u32 match ip6 src 2001:db8::/32 match ip6 protocol 17 0xff match ip6 sport 443 0xffff flowid 7ac0:10
            tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            tc filter add dev eth0 parent ffff: protocol ipv6 prio 2 u32 match u32 0 0 action mirred egress redirect dev tk-eth0
            """)
    }

    /// A local port (`--src-port`) is the source on the way out and the destination on the way in.
    @Test func localPortsAreSourceOnUplinkAndDestinationOnDownlink() throws {
        let selection = TrafficSelection(localPorts: [8080])
        let up = PlanBuilder.egressTree(device: try InterfaceName("v"), spec: EgressSpec(
            settings: LinkSettings(bitsPerSecond: 1000_000), selection: selection, direction: .uplink))
        let down = PlanBuilder.egressTree(device: try InterfaceName("v"), spec: EgressSpec(
            settings: LinkSettings(bitsPerSecond: 1000_000), selection: selection, direction: .downlink))
        #expect(up.last == ["tc", "filter", "add", "dev", "v", "parent", "7ac0:", "protocol", "ipv6", "prio", "7", "u32",
                            "match", "ip6", "protocol", "17", "0xff", "match", "ip6", "sport", "8080", "0xffff", "flowid", "7ac0:10"])
        #expect(down.last == ["tc", "filter", "add", "dev", "v", "parent", "7ac0:", "protocol", "ipv6", "prio", "7", "u32",
                              "match", "ip6", "protocol", "17", "0xff", "match", "ip6", "dport", "8080", "0xffff", "flowid", "7ac0:10"])
    }

    /// With IPv4 targets only, DNS filters exist only for IPv4, and a switch that drops the DNS delay deletes
    /// exactly those (deleting a priority that has no filter would fail and roll the switch back).
    @Test func dnsFiltersFollowTheTargets() throws {
        let selection = TrafficSelection(hosts: [try IPNetwork("10.0.0.0/8")])
        let slow = try builtIns().profile(named: "Slow Net"), dsl = try builtIns().profile(named: "DSL")
        let eth0 = try InterfaceName("eth0")
        let plan = PlanBuilder.applyPlan(profile: slow, interface: eth0, selection: selection)
        #expect(plan.filter { $0.contains("7ac0:20") && $0.contains("filter") }.map { $0[$0.firstIndex(of: "prio")! + 1] } == ["4", "4"])
        let back = PlanBuilder.switchPlan(from: slow, to: dsl, interface: eth0, selection: selection)
        #expect(back.filter { $0.starts(with: ["tc", "filter", "del"]) } == [
            ["tc", "filter", "del", "dev", "eth0", "parent", "7ac0:", "protocol", "ip", "prio", "4"]])
    }

    @Test(arguments: [
        ("192.0.2.7:22", "192.0.2.7:22"), ("[2001:DB8::1]:443", "[2001:db8::1]:443"), ("10.0.0.0/8", "10.0.0.0/8"),
        ("2001:db8::/32", "2001:db8::/32"), ("::1", "::1"), ("[::1]", "::1"),
    ])
    func endpointsParse(text: String, printed: String) throws {
        #expect(try RemoteEndpoint(text).description == printed)
    }

    @Test(arguments: ["", "10.0.0.300", "10.0.0.0/33", "host.example:22", "192.0.2.7:0", "192.0.2.7:70000", "[::1]:x", "::1/129"])
    func badEndpointsAreRefusedWithTheExpectedForm(text: String) {
        let error = #expect(throws: SelectionError.self) { try RemoteEndpoint(text) }
        #expect(error?.description.contains("expected") == true)
    }

    @Test func sshSessionIsTheClientEnd() throws {
        let ssh = try #require(TrafficSelection.sshSession(from: "192.0.2.9 52100 192.0.2.1 22"))
        #expect(ssh.endpoint.description == "192.0.2.9:52100")
        #expect(ssh.description.contains("SSH"))
        #expect(TrafficSelection.sshSession(from: nil) == nil)
        #expect(TrafficSelection.sshSession(from: "garbage") == nil)
        let v6 = try #require(TrafficSelection.sshSession(from: "fe80::1 40000 fe80::2 22"))
        #expect(v6.endpoint.description == "[fe80::1]:40000")
    }

    /// The SSH session's exclusion is recorded and `status` says so, with the reason.
    @Test func statusListsTheExcludedSSHSession() throws {
        let network = FakeNetwork()
        let conditioner = Conditioner(runner: network.runner(), store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                                      inInitialNamespace: true, batchesTC: false)
        let ssh = try #require(TrafficSelection.sshSession(from: "192.0.2.9 52100 192.0.2.1 22"))
        let outcome = try conditioner.apply(try builtIns().profile(named: "Black Hole"), to: try InterfaceName("eth0"),
                                            options: ApplyOptions(confirmed: true, selection: TrafficSelection().excluding([ssh])))
        #expect(outcome.commands.contains { $0.joined(separator: " ").contains("match ip src 192.0.2.9/32 match ip protocol 6 0xff match ip sport 52100 0xffff flowid 7ac0:0") })
        let status = try #require(conditioner.status().first)
        #expect(status.excluded == ["192.0.2.9:52100 (the SSH session condition was started from)"])
        #expect(status.conditions == nil, "all IP traffic but the exclusion is conditioned")
    }

    @Test func excludeLoopbackLeavesLoopbackAddressesAlone() throws {
        var profile = Profile(name: "L", uplink: LinkSettings(bitsPerSecond: 1_000_000))
        profile.excludeLoopback = true
        let plan = PlanBuilder.applyPlan(profile: profile, interface: try InterfaceName("lo"))
        let exclusions = plan.filter { $0.contains("7ac0:0") && !$0.contains("icmp_type") }.map { $0.joined(separator: " ") }
        #expect(exclusions == [
            "tc filter add dev lo parent 7ac0: protocol ip prio 2 u32 match ip dst 127.0.0.0/8 flowid 7ac0:0",
            "tc filter add dev lo parent 7ac0: protocol ipv6 prio 3 u32 match ip6 dst ::1/128 flowid 7ac0:0",
        ])
    }

    /// A switch keeps the filters; asking for other targets over an active profile is refused, unchanged.
    @Test func switchWithOtherTargetsIsRefused() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let conditioner = Conditioner(runner: runner, store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                                      inInitialNamespace: false, batchesTC: false)
        let eth0 = try InterfaceName("eth0")
        let first = TrafficSelection(ports: [443])
        _ = try conditioner.apply(try builtIns().profile(named: "3G"), to: eth0, options: ApplyOptions(selection: first))
        let before = runner.changingCommands.count
        let error = #expect(throws: ConditionerError.self) {
            try conditioner.apply(try builtIns().profile(named: "Edge"), to: eth0,
                                  options: ApplyOptions(selection: TrafficSelection(ports: [80])))
        }
        #expect(error?.description.contains("IP traffic on remote port 443") == true)
        #expect(runner.changingCommands.count == before)
        // Without targets a switch keeps the active ones.
        let outcome = try conditioner.apply(try builtIns().profile(named: "Edge"), to: eth0)
        #expect(outcome.kind == .switched)
        #expect(outcome.state.selection == first)
        #expect(conditioner.status().first?.conditions == "IP traffic on remote port 443")
    }
}
