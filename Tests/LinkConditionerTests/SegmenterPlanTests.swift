import Foundation
import LinkConditioner
import TestSupport
import Testing

/// The tbf below each htb class that cuts GSO packets into frames (PlanBuilder's comment says why): its burst
/// follows the interface's MTU, and no switch ever leaves it without a child (tbf's noop child drops everything).
@Suite struct SegmenterPlanTests {
    @Test func theBurstIsTheInterfacesLargestFrame() throws {
        let settings = LinkSettings(bitsPerSecond: 32_000)
        let ethernet = PlanBuilder.egressTree(device: try InterfaceName("veth0"), spec: EgressSpec(settings: settings))
        #expect(ethernet[3] == ["tc", "qdisc", "add", "dev", "veth0", "parent", "7ac0:10", "handle", "7ac3:", "tbf",
                                "rate", "100gbit", "burst", "1564", "limit", "1564000"])
        // Loopback's 64 KB MTU: a burst of 1564 would drop every unsegmentable frame longer than that.
        let loopback = PlanBuilder.egressTree(device: try InterfaceName("lo"), spec: EgressSpec(settings: settings, mtu: 65536))
        #expect(Array(loopback[3].suffix(4)) == ["burst", "65600", "limit", "65600000"])
    }

    @Test func everyRateLimitedClassGetsOne() throws {
        let plan = PlanBuilder.applyPlan(profile: try builtIns().profile(named: "Slow Net"), interface: try InterfaceName("eth0"), mtu: 9000)
        let segmenters = plan.filter { $0.contains("tbf") }.map { "\($0[4]) \($0[6]) \($0[8]) \($0[13])" }
        #expect(segmenters == ["eth0 7ac0:10 7ac3: 9064", "eth0 7ac0:20 7ac4: 9064", "tk-eth0 7ac0:10 7ac3: 9064"])
        // netem hangs below the segmenter, so it sees frames too (its loss is per frame, not per 64 KB).
        #expect(plan.filter { $0.contains("netem") }.map { $0[6] } == ["7ac3:1", "7ac4:1", "7ac3:1"])
    }

    /// Delay off puts a fifo in netem's place; delay on again replaces that fifo (`add` would be refused over it).
    @Test func switchingDelayOffAndOnNeverDeletesTheSegmentersChild() throws {
        let catalog = try builtIns()
        let bandwidthOnly = Profile(name: "bw", downlink: LinkSettings(bitsPerSecond: 2_000_000), uplink: LinkSettings(bitsPerSecond: 256_000))
        let eth0 = try InterfaceName("eth0")
        let off = PlanBuilder.switchPlan(from: try catalog.profile(named: "DSL"), to: bandwidthOnly, interface: eth0)
        #expect(off.filter { $0.contains("7ac3:1") }.map { $0.joined(separator: " ") } == [
            "tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac5: bfifo limit 1564000",
            "tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac5: bfifo limit 1564000",
        ])
        let on = PlanBuilder.switchPlan(from: bandwidthOnly, to: try catalog.profile(named: "DSL"), interface: eth0)
        #expect(on.filter { $0.contains("7ac3:1") }.map { $0.joined(separator: " ") } == [
            "tc qdisc replace dev eth0 parent 7ac3:1 handle 7ac1: netem delay 5ms limit 1000",
            "tc qdisc replace dev tk-eth0 parent 7ac3:1 handle 7ac1: netem delay 5ms limit 1000",
        ])
        #expect(!(off + on).contains { $0.starts(with: ["tc", "qdisc", "del"]) })
    }

    /// apply reads the MTU from `ip link show`, keeps it in the record, and a later switch sizes new trees from it.
    @Test func applyRecordsTheMTUAndSwitchesUseIt() throws {
        let network = FakeNetwork()
        let runner = RecordingRunner(handler: { arguments in
            arguments == ["ip", "link", "show", "dev", "eth0"]
                ? CommandResult(stdout: "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP mode DEFAULT\n")
                : network.handle(arguments)
        })
        let conditioner = Conditioner(runner: runner, store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                                      inInitialNamespace: false, batchesTC: false)
        let catalog = try builtIns()
        let downlinkOnly = Profile(name: "down", downlink: LinkSettings(bitsPerSecond: 1_000_000))
        let applied = try conditioner.apply(downlinkOnly, to: InterfaceName("eth0"))
        #expect(applied.state.mtu == 9000)
        #expect(runner.changingCommands.contains { $0.contains("tbf") && $0.contains("9064") })
        let before = runner.changingCommands.count
        _ = try conditioner.apply(try catalog.profile(named: "Edge"), to: InterfaceName("eth0"))
        let uplinkTree = runner.changingCommands.dropFirst(before).filter { $0.contains("tbf") }
        #expect(uplinkTree.map { $0[4] } == ["eth0"])
        #expect(uplinkTree.first?.contains("9064") == true)
        try conditioner.off(InterfaceName("eth0"))
        #expect(network.snapshot.qdiscs["eth0", default: []].isEmpty)
    }

    @Test func theMTUComesFromIPLinkOrNowhere() throws {
        let shown = RecordingRunner(responses: [.init(prefix: ["ip", "link", "show"], result: CommandResult(
            stdout: "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n"))])
        #expect(Conditioner.mtu(try InterfaceName("lo"), runner: shown) == 65536)
        let silent = RecordingRunner(responses: [.init(prefix: ["ip", "link", "show"], result: CommandResult(stdout: "1: x"))])
        #expect(Conditioner.mtu(try InterfaceName("x"), runner: silent) == nil)
        let missing = RecordingRunner(responses: [.init(prefix: ["ip", "link", "show"], result: CommandResult(status: 1))])
        #expect(Conditioner.mtu(try InterfaceName("x"), runner: missing) == nil)
    }
}
