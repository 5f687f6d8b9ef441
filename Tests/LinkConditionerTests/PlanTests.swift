import Foundation
import LinkConditioner
import TestSupport
import Testing

func lines(_ commands: [[String]]) -> String {
    commands.map { $0.joined(separator: " ") }.joined(separator: "\n")
}

@Suite struct PlanTests {
    static let names = ["Slow Net", "Nasty Net", "Black Hole", "3G", "Edge", "DSL", "Cable Modem", "Very Bad Network",
                        "100% Loss", "LTE", "Wi-Fi", "High Latency DNS"]

    @Test(arguments: names)
    func builtInPlansAreExact(name: String) throws {
        let profile = try builtIns().profile(named: name)
        let expected = try #require(ExpectedPlans.eth0[name])
        let eth0 = try InterfaceName("eth0")
        #expect(lines(PlanBuilder.applyPlan(profile: profile, interface: eth0)) == expected.apply)
        #expect(lines(PlanBuilder.offPlan(afterApplying: profile, interface: eth0)) == expected.off)
    }

    /// What apply really runs (recorded through the conditioner, on a fake kernel) is the plan, exactly.
    @Test(arguments: names)
    func applyRunsExactlyThePlan(name: String) throws {
        let profile = try builtIns().profile(named: name)
        let network = FakeNetwork()
        let runner = network.runner()
        let conditioner = Conditioner(runner: runner, store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                                      inInitialNamespace: false, batchesTC: false)
        _ = try conditioner.apply(profile, to: InterfaceName("eth0"))
        #expect(lines(runner.changingCommands) == ExpectedPlans.eth0[name]?.apply)
        let before = runner.changingCommands.count
        try conditioner.off(InterfaceName("eth0"))
        #expect(lines(Array(runner.changingCommands.dropFirst(before))) == ExpectedPlans.eth0[name]?.off)
        #expect(network.snapshot.links == ["eth0"])
        #expect(network.snapshot.qdiscs["eth0", default: []].isEmpty)
    }

    @Test(arguments: names)
    func neverKilobytesAndOnlyReservedHandles(name: String) throws {
        let profile = try builtIns().profile(named: name)
        let plan = PlanBuilder.applyPlan(profile: profile, interface: try InterfaceName("wlan0"))
        for argument in plan.joined() {
            #expect(!argument.lowercased().hasSuffix("bps"), "\(argument) would be bytes per second to tc")
        }
        for (index, argument) in plan.joined().enumerated() where argument == "handle" || argument == "classid" {
            let value = Array(plan.joined())[index + 1]
            #expect(value.hasPrefix("7ac") || value == "ffff:", "\(value) is not a reserved handle")
        }
    }

    @Test func lowRatesGetAFullFrameOfBurstAndQuantum() throws {
        let tree = PlanBuilder.egressTree(device: try InterfaceName("veth0"), settings: LinkSettings(bitsPerSecond: 8_000))
        #expect(lines(tree) == """
            tc qdisc add dev veth0 root handle 7ac0: htb default 0
            tc class add dev veth0 parent 7ac0: classid 7ac0:1 htb rate 8kbit ceil 8kbit burst 1600 cburst 1600 quantum 1600
            tc class add dev veth0 parent 7ac0:1 classid 7ac0:10 htb rate 8kbit ceil 8kbit burst 1600 cburst 1600 quantum 1600
            tc qdisc add dev veth0 parent 7ac0:10 handle 7ac3: tbf rate 100gbit burst 1564 limit 1564000
            """ + "\n" + lines(ndpFilters("veth0")) + """

            tc filter add dev veth0 parent 7ac0: protocol ip prio 6 u32 match u32 0 0 flowid 7ac0:10
            tc filter add dev veth0 parent 7ac0: protocol ipv6 prio 7 u32 match u32 0 0 flowid 7ac0:10
            """)
    }

    @Test func highRatesGetTenMillisecondsOfBurstAndCappedQuantum() throws {
        let tree = PlanBuilder.egressTree(device: try InterfaceName("veth0"), settings: LinkSettings(bitsPerSecond: 400_000_000))
        #expect(Array(tree[1].suffix(11)) == ["htb", "rate", "400mbit", "ceil", "400mbit", "burst", "500000",
                                               "cburst", "500000", "quantum", "200000"])
    }

    @Test func netemLimitCoversRateTimesDelay() {
        // 50 Mbit/s for 500 ms is 3.125 MB in flight: 12500 packets of 500 bytes, doubled.
        #expect(PlanBuilder.netemLimit(rate: 50_000_000, delay: 500_000) == 12_500)
        #expect(PlanBuilder.netemLimit(rate: 32_000, delay: 100_000) == 1000)
        let tree = PlanBuilder.egressTree(device: try! InterfaceName("v"), settings:
            LinkSettings(bitsPerSecond: 100_000_000, delayMicroseconds: 200_000, jitterMicroseconds: 50_000, lossPercent: 1.5))
        #expect(tree.first { $0.contains("netem") } == ["tc", "qdisc", "replace", "dev", "v", "parent", "7ac3:1", "handle", "7ac1:",
                              "netem", "delay", "200ms", "50ms", "loss", "1.5%", "limit", "12500"])
    }

    @Test func egressTreeForOneDeviceHasNoIfbOrIngress() throws {
        let tree = PlanBuilder.egressTree(device: try InterfaceName("veth-sb0"), settings: LinkSettings(bitsPerSecond: 2_000_000),
                                          dnsDelayMicroseconds: 100_000)
        #expect(tree.allSatisfy { $0[0] == "tc" && $0[4] == "veth-sb0" })
        #expect(!tree.joined().contains("ingress"))
        // 5 NDP (direct), 4 DNS (UDP/TCP, IPv4/IPv6), 2 for everything else that is IP.
        #expect(tree.filter { $0[1] == "filter" }.count == 11)
    }

    /// The downlink leaf is replaced before the rate rises, so what Slow Net had queued is dropped with it instead of
    /// arriving at 10 Gbit/s after the switch.
    @Test func switchingSlowNetToBlackHoleReplacesTheLeafBeforeTheRateAndKeepsTheRedirect() throws {
        let catalog = try builtIns()
        let plan = PlanBuilder.switchPlan(from: try catalog.profile(named: "Slow Net"),
                                          to: try catalog.profile(named: "Black Hole"), interface: try InterfaceName("eth0"))
        #expect(lines(plan) == """
            tc qdisc del dev eth0 root
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac5: bfifo limit 1564000
            tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem loss 100% limit 1000
            tc class change dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            tc class change dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 10gbit ceil 10gbit burst 12500000 cburst 12500000 quantum 200000
            """)
        #expect(!plan.joined().contains("ingress"))
        #expect(!plan.contains { $0.starts(with: ["ip", "link"]) })
    }

    @Test func switchingAddsAndRemovesTheDnsBranch() throws {
        let catalog = try builtIns()
        let eth0 = try InterfaceName("eth0")
        let toSlow = PlanBuilder.switchPlan(from: try catalog.profile(named: "3G"), to: try catalog.profile(named: "Slow Net"), interface: eth0)
        #expect(lines(toSlow) == """
            tc class change dev eth0 parent 7ac0: classid 7ac0:1 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc class change dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc class add dev eth0 parent 7ac0:1 classid 7ac0:20 htb rate 8kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc qdisc add dev eth0 parent 7ac0:20 handle 7ac4: tbf rate 100gbit burst 1564 limit 1564000
            tc qdisc add dev eth0 parent 7ac4:1 handle 7ac2: netem delay 300ms limit 1000
            tc filter add dev eth0 parent 7ac0: protocol ip prio 4 u32 match ip protocol 17 0xff match ip dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ip prio 4 u32 match ip protocol 6 0xff match ip dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 5 u32 match ip6 protocol 17 0xff match ip6 dport 53 0xffff flowid 7ac0:20
            tc filter add dev eth0 parent 7ac0: protocol ipv6 prio 5 u32 match ip6 protocol 6 0xff match ip6 dport 53 0xffff flowid 7ac0:20
            tc class change dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            tc class change dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 32kbit ceil 32kbit burst 1600 cburst 1600 quantum 1600
            """)
        let back = PlanBuilder.switchPlan(from: try catalog.profile(named: "Slow Net"), to: try catalog.profile(named: "DSL"), interface: eth0)
        #expect(lines(back) == """
            tc class change dev eth0 parent 7ac0: classid 7ac0:1 htb rate 256kbit ceil 256kbit burst 1600 cburst 1600 quantum 3200
            tc class change dev eth0 parent 7ac0:1 classid 7ac0:10 htb rate 256kbit ceil 256kbit burst 1600 cburst 1600 quantum 3200
            tc qdisc change dev eth0 parent 7ac3:1 handle 7ac1: netem delay 5ms limit 1000
            tc filter del dev eth0 parent 7ac0: protocol ip prio 4
            tc filter del dev eth0 parent 7ac0: protocol ipv6 prio 5
            tc class del dev eth0 parent 7ac0:1 classid 7ac0:20
            tc class change dev tk-eth0 parent 7ac0: classid 7ac0:1 htb rate 2mbit ceil 2mbit burst 2500 cburst 2500 quantum 25000
            tc class change dev tk-eth0 parent 7ac0:1 classid 7ac0:10 htb rate 2mbit ceil 2mbit burst 2500 cburst 2500 quantum 25000
            tc qdisc change dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 5ms limit 1000
            """)
    }

    @Test func forcePlanReplacesRootAndIngress() throws {
        let plan = PlanBuilder.applyPlan(profile: try builtIns().profile(named: "DSL"), interface: try InterfaceName("eth0"),
                                         replaceRoot: true, replaceIngress: true)
        #expect(plan.first == ["tc", "qdisc", "replace", "dev", "eth0", "root", "handle", "7ac0:", "htb", "default", "0"])
        #expect(plan.suffix(4).first == ["tc", "qdisc", "del", "dev", "eth0", "ingress"])
    }
}

/// The five filters that send NDP (ICMPv6 133-137) through htb's direct queue, untouched.
func ndpFilters(_ device: String) -> [[String]] {
    (133...137).map { type in
        ["tc", "filter", "add", "dev", device, "parent", "7ac0:", "protocol", "ipv6", "prio", "1", "u32",
         "match", "ip6", "protocol", "58", "0xff", "match", "ip6", "icmp_type", String(type), "0xff", "flowid", "7ac0:0"]
    }
}

func temporaryStore() -> StateStore {
    StateStore(directory: FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-state-\(UUID().uuidString)"),
               namespaceID: "test")
}
