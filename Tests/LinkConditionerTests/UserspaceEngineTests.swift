import Foundation
@testable import LinkConditioner
import TestSupport
import Testing

/// The user-space engine's plans and its per-packet model, without root (the namespace suite runs it for real).
@Suite struct UserspaceEngineTests {
    let eth0 = try! InterfaceName("eth0")

    /// Issue 36: under Black Hole on the user-space engine nothing but an nftables rule drops, so `status` said
    /// "downlink: unchanged". It reads the rule's counter: every downlink packet dropped, with the counts.
    @Test func blackHoleStatusCountsWhatTheDropRuleDropped() throws {
        let network = FakeNetwork()
        let chain = #"{"nftables": [{"metainfo": {"version": "1.0.6"}}, {"chain": {"family": "inet", "table": "tapkit_eth0", "name": "downlink_apply"}}, "#
            + #"{"rule": {"family": "inet", "table": "tapkit_eth0", "chain": "downlink_apply", "expr": [{"counter": {"packets": 42, "bytes": 3528}}, {"drop": null}]}}]}"#
        let runner = RecordingRunner(handler: { arguments in
            if arguments == ["nft", "-j", "list", "chain", "inet", "tapkit_eth0", "downlink_apply"] { return CommandResult(stdout: chain) }
            return network.handle(arguments)
        })
        let conditioner = Conditioner(runner: runner, store: temporaryStore(), kernel: FixedKernelSupport(netem: false, userspace: true),
                                      inInitialNamespace: false, batchesTC: false, engineExecutable: "/usr/bin/condition")
        _ = try conditioner.apply(try builtIns().profile(named: "Black Hole"), to: eth0)
        let status = try #require(conditioner.status().first)
        #expect(status.downlink == DirectionCounters(dropped: 42, lossPercent: 100, droppedBytes: 3528))
        #expect(status.uplink == nil)
        #expect(UserspaceEngine.dropCounters(nftJSON: Data(chain.utf8))! == (42, 3528))
    }

    @Test func withoutNetemApplyBuildsRatesInTcAndTheRestInTheEngine() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        let conditioner = Conditioner(runner: runner, store: store, kernel: FixedKernelSupport(netem: false, userspace: true),
                                      inInitialNamespace: false, batchesTC: false, engineExecutable: "/usr/bin/condition")
        let outcome = try conditioner.apply(try builtIns().profile(named: "Very Bad Network"), to: eth0)
        #expect(outcome.state.engine == .userspace)
        let commands = runner.changingCommands
        #expect(!commands.joined().contains("netem"))
        #expect(commands.contains { $0.starts(with: ["tc", "class", "add", "dev", "eth0"]) && $0.contains("1mbit") })
        let table = try #require(commands.first { $0.starts(with: ["nft", "add", "table", "inet", "tapkit_eth0"]) })
        // Downlink: 10% loss without correlation is nftables' numgen. Uplink loss is the engine's (a send
        // netfilter drops fails with EPERM); the 500 ms delay marks packets for the queue.
        #expect(table.joined(separator: " ").contains("add rule inet tapkit_eth0 downlink_apply numgen random mod 1000000 < 100000 counter drop"))
        #expect(!table.joined(separator: " ").contains("uplink_apply numgen"))
        #expect(table.joined(separator: " ").contains("meta mark set meta mark | 0x20000000"))
        let start = try #require(commands.first { $0.first == "/usr/bin/condition" })
        #expect(start.starts(with: ["/usr/bin/condition", "__engine", "-i", "eth0", "--id", outcome.state.engineID ?? "?"]))
        #expect(commands.filter { $0.first == "iptables-nft" }.count == 3)
        #expect(commands.filter { $0.first == "ip6tables-nft" }.count == 3)
        // What off runs for it: queue rules, the mangle tables iptables-nft made for them, table, then the tc pieces.
        let off = PlanBuilder.offPlan(interface: eth0, state: outcome.state, observed: .afterApplying(outcome.state))
        #expect(off.prefix(9).map { $0.first } == ["iptables-nft", "ip6tables-nft", "iptables-nft", "ip6tables-nft",
                                                  "iptables-nft", "ip6tables-nft", "nft", "nft", "nft"])
        #expect(off[0].contains("-D"))
        #expect(off[6...8] == [["nft", "delete", "table", "ip", "mangle"], ["nft", "delete", "table", "ip6", "mangle"],
                               ["nft", "delete", "table", "inet", "tapkit_eth0"]])
    }

    @Test func aSwitchReplacesOnlyTheDropAndMarkRules() throws {
        var old = ConditionState(interface: eth0, profile: try builtIns().profile(named: "3G"), complete: true)
        old.engine = .userspace
        var new = old
        new.profile = try builtIns().profile(named: "Black Hole")
        let plan = PlanBuilder.switchPlan(from: old, to: new)
        let nft = try #require(plan.first).joined(separator: " ")
        #expect(nft == "nft flush chain inet tapkit_eth0 uplink_apply ; flush chain inet tapkit_eth0 downlink_apply ; "
                + "add rule inet tapkit_eth0 downlink_apply counter drop")
        #expect(!plan.joined().contains("netem"))
    }

    @Test func duplicationAndCorruptionAreRefusedWithoutNetem() throws {
        var profile = Profile(name: "Dup", downlink: LinkSettings(delayMicroseconds: 10_000))
        profile.downlink.duplicatePercent = 1
        let conditioner = Conditioner(runner: FakeNetwork().runner(), store: temporaryStore(),
                                      kernel: FixedKernelSupport(netem: false, userspace: true), inInitialNamespace: false)
        let error = #expect(throws: ConditionerError.self) { try conditioner.apply(profile, to: eth0) }
        #expect(error?.description.contains("duplication") == true)
    }

    /// The model's draws have netem's shape: measured over many packets.
    @Test func jitterLossAndReorderHaveTheirShape() throws {
        func sample(_ settings: LinkSettings, _ count: Int = 200_000) -> (delays: [Double], dropped: Int, now: Int) {
            let model = DelayModel(settings: settings, lossInEngine: true)
            var state = DelayModel.State()
            var delays: [Double] = [], dropped = 0, now = 0
            for _ in 0..<count {
                switch model.decide(&state) {
                case .drop: dropped += 1
                case .now: now += 1
                case .after(let ns): delays.append(Double(ns) / 1e6)
                }
            }
            return (delays, dropped, now)
        }
        func deviation(_ values: [Double]) -> (mean: Double, sd: Double) {
            let mean = values.reduce(0, +) / Double(values.count)
            return (mean, (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot())
        }
        let uniform = deviation(sample(LinkSettings(delayMicroseconds: 100_000, jitterMicroseconds: 10_000)).delays)
        #expect(abs(uniform.mean - 100) < 0.1 && abs(uniform.sd - 10 / 3.0.squareRoot()) < 0.1)
        var normal = LinkSettings(delayMicroseconds: 100_000, jitterMicroseconds: 10_000)
        normal.jitterDistribution = .normal
        let normalShape = deviation(sample(normal).delays)
        #expect(abs(normalShape.mean - 100) < 0.1 && abs(normalShape.sd - 10) < 0.2)
        for distribution in [LinkSettings.JitterDistribution.pareto, .paretonormal] {
            var settings = LinkSettings(delayMicroseconds: 100_000, jitterMicroseconds: 10_000)
            settings.jitterDistribution = distribution
            let shape = deviation(sample(settings).delays)
            #expect(abs(shape.mean - 100) < 1, "\(distribution): \(shape)")
        }
        var lossy = LinkSettings(delayMicroseconds: 1000, lossPercent: 10)
        lossy.correlationPercent = 25
        lossy.reorderPercent = 5
        let counts = sample(lossy)
        #expect(abs(Double(counts.dropped) / 200_000 - 0.10) < 0.01, "\(counts.dropped)")
        #expect(abs(Double(counts.now) / 180_000 - 0.05) < 0.01, "\(counts.now)")
    }

    /// off deletes a mangle table only when the queue rules it removes are all that table holds.
    @Test func aMangleTableIsEmptiedOnlyWhenOurRulesAreAllItHolds() {
        let listed = Data(#"""
            {"nftables": [{"metainfo": {"version": "1.0.6"}}, {"table": {"family": "ip", "name": "mangle"}},
             {"chain": {"family": "ip", "table": "mangle", "name": "POSTROUTING"}},
             {"chain": {"family": "ip", "table": "mangle", "name": "PREROUTING"}},
             {"rule": {"family": "ip", "table": "mangle", "chain": "POSTROUTING", "expr": []}},
             {"rule": {"family": "ip", "table": "mangle", "chain": "PREROUTING", "expr": []}}]}
            """#.utf8)
        #expect(UserspaceEngine.mangleTableHoldsOnly(ruleCount: 2, nftJSON: listed))
        #expect(!UserspaceEngine.mangleTableHoldsOnly(ruleCount: 1, nftJSON: listed), "another rule stays")
        let ownChain = Data(String(decoding: listed, as: UTF8.self)
            .replacingOccurrences(of: #""name": "PREROUTING"}"#, with: #""name": "mine"}"#).utf8)
        #expect(!UserspaceEngine.mangleTableHoldsOnly(ruleCount: 2, nftJSON: ownChain), "a chain of someone else's")
        #expect(!UserspaceEngine.mangleTableHoldsOnly(ruleCount: 0, nftJSON: Data("not json".utf8)))
    }
}
