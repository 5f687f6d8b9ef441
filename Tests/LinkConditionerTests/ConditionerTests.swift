import Foundation
import LinkConditioner
import TestSupport
import Testing

private let eth0 = try! InterfaceName("eth0")
private let tbf = FakeNetwork.Qdisc(kind: "tbf", handle: "5:", parent: nil, options: #"{"rate":125000,"burst":4000,"lat":400000}"#)

private func conditioner(_ network: FakeNetwork, _ runner: RecordingRunner, netem: Bool = true,
                         initial: Bool = false, store: StateStore = temporaryStore()) -> Conditioner {
    Conditioner(runner: runner, store: store, kernel: FixedKernelSupport(netem: netem), inInitialNamespace: initial,
                batchesTC: false)
}

private func profile(_ name: String) throws -> Profile { try builtIns().profile(named: name) }

private let bandwidthOnly = Profile(name: "Test BW", downlink: LinkSettings(bitsPerSecond: 4_000_000),
                                    uplink: LinkSettings(bitsPerSecond: 2_000_000))

@Suite struct ConditionerTests {
    @Test func withoutNetemADelayProfileStopsBeforeChangingAnything() throws {
        let network = FakeNetwork(netem: false)
        let runner = network.runner()
        let error = #expect(throws: ConditionerError.self) {
            try conditioner(network, runner, netem: false).apply(try profile("Slow Net"), to: eth0)
        }
        #expect(error?.description.contains("netem") == true)
        #expect(error?.description.contains("nothing was changed") == true)
        #expect(runner.changingCommands.isEmpty)
    }

    @Test func withoutNetemABandwidthOnlyProfileWorks() throws {
        let network = FakeNetwork(netem: false)
        let runner = network.runner()
        let outcome = try conditioner(network, runner, netem: false).apply(bandwidthOnly, to: eth0)
        #expect(outcome.kind == .applied)
        #expect(!runner.changingCommands.joined().contains("netem"))
    }

    @Test func realKernelProbeIsAThrowawayNamespace() {
        let runner = RecordingRunner(responses: [.init(prefix: ["unshare"], result: CommandResult(status: 2, stderr: "Error: Specified qdisc kind is unknown."))])
        #expect(!LiveKernelSupport(runner: runner).netemAvailable())
        #expect(runner.commands == [["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"]])
    }

    @Test func missingInterfaceIsNamed() throws {
        let network = FakeNetwork()
        let error = #expect(throws: ConditionerError.self) {
            try conditioner(network, network.runner()).apply(bandwidthOnly, to: try InterfaceName("eth9"))
        }
        #expect(error?.description.contains("no interface \"eth9\"") == true)
    }

    @Test func foreignRootIsRefusedWithoutForce() throws {
        let network = FakeNetwork()
        network.setRoot("eth0", tbf)
        let runner = network.runner()
        let error = #expect(throws: ConditionerError.self) { try conditioner(network, runner).apply(bandwidthOnly, to: eth0) }
        #expect(error?.description.contains("tbf 5:") == true)
        #expect(error?.description.contains("--force") == true)
        #expect(runner.changingCommands.isEmpty)
    }

    @Test func forceRecordsTheForeignRootAndOffRestoresIt() throws {
        let network = FakeNetwork()
        network.setRoot("eth0", tbf)
        let runner = network.runner()
        let store = temporaryStore()
        let c = conditioner(network, runner, store: store)
        let outcome = try c.apply(bandwidthOnly, to: eth0, options: ApplyOptions(force: true))
        #expect(outcome.state.replacedRoot == RecordedQdisc(kind: "tbf", handle: "5:", options: .object(["rate": .number(125000), "burst": .number(4000), "lat": .number(400000)])))
        #expect(runner.changingCommands.first?.starts(with: ["tc", "qdisc", "replace", "dev", "eth0", "root", "handle", "7ac0:"]) == true)
        #expect(try store.load(eth0)?.replacedRoot != nil)
        let before = runner.changingCommands.count
        try c.off(eth0)
        #expect(Array(runner.changingCommands.dropFirst(before)) == [
            ["tc", "qdisc", "del", "dev", "eth0", "ingress"],
            ["tc", "qdisc", "del", "dev", "eth0", "root"],
            ["tc", "qdisc", "add", "dev", "eth0", "root", "handle", "5:", "tbf", "rate", "1mbit", "burst", "4000", "latency", "400ms"],
            ["ip", "link", "del", "dev", "tk-eth0"],
        ])
        #expect(network.snapshot.qdiscs["eth0"] == [FakeNetwork.Qdisc(kind: "tbf", handle: "5:", parent: nil)])
        #expect(try store.load(eth0) == nil)
    }

    @Test func foreignRootIsLeftAloneWhenTheUplinkIsUnchanged() throws {
        let network = FakeNetwork()
        network.setRoot("eth0", tbf)
        let runner = network.runner()
        _ = try conditioner(network, runner).apply(try profile("Black Hole"), to: eth0)
        #expect(!runner.changingCommands.contains { $0.contains("root") && $0.contains("eth0") })
    }

    @Test func blackHoleOnTheMachinesOwnNamespaceNeedsForOrYes() throws {
        let blackHole = try profile("Black Hole")
        let network = FakeNetwork()
        let runner = network.runner()
        let error = #expect(throws: ConditionerError.self) {
            try conditioner(network, runner, initial: true).apply(blackHole, to: eth0)
        }
        #expect(error?.description.contains("SSH") == true)
        #expect(runner.changingCommands.isEmpty)
        for options in [ApplyOptions(duration: 5), ApplyOptions(confirmed: true)] {
            let fresh = FakeNetwork()
            _ = try conditioner(fresh, fresh.runner(), initial: true).apply(blackHole, to: eth0, options: options)
        }
        // A private namespace needs neither; nor does a profile that does not cut sessions.
        _ = try conditioner(FakeNetwork(), FakeNetwork().runner(), initial: false).apply(blackHole, to: eth0)
        let veryBad = FakeNetwork()
        _ = try conditioner(veryBad, veryBad.runner(), initial: true).apply(try profile("Very Bad Network"), to: eth0)
        #expect(try profile("Nasty Net").cutsRemoteSessions)
        #expect(try !profile("Very Bad Network").cutsRemoteSessions)
    }

    /// A failure at any step leaves the interface exactly as it was, with no record left.
    @Test(arguments: 1...18)
    func failurePartWayRollsBack(step: Int) throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        network.failOnChange(step)
        let error = #expect(throws: ConditionerError.self) {
            try conditioner(network, runner, store: store).apply(try profile("Slow Net"), to: eth0)
        }
        #expect(error?.description.contains("injected failure") == true)
        #expect(error?.description.contains("rolled back to the state before") == true)
        #expect(network.snapshot.links == ["eth0"])
        #expect(network.snapshot.qdiscs["eth0", default: []].isEmpty)
        #expect(try store.load(eth0) == nil)
    }

    @Test(arguments: [1, 5, 9, 12])
    func failurePartWayWithForceRestoresTheForeignRoot(step: Int) throws {
        let network = FakeNetwork()
        network.setRoot("eth0", tbf)
        network.failOnChange(step)
        #expect(throws: ConditionerError.self) {
            try conditioner(network, network.runner()).apply(try profile("DSL"), to: eth0, options: ApplyOptions(force: true))
        }
        #expect(network.snapshot.qdiscs["eth0"]?.map { "\($0.kind) \($0.handle)" } == ["tbf 5:"])
        #expect(network.snapshot.links == ["eth0"])
    }

    @Test func applyOverAnActiveProfileSwitchesInPlace() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        let c = conditioner(network, runner, store: store)
        let first = try c.apply(try profile("Slow Net"), to: eth0)
        let before = runner.changingCommands.count
        let outcome = try c.apply(try profile("Black Hole"), to: eth0)
        #expect(outcome.kind == .switched)
        let switchCommands = Array(runner.changingCommands.dropFirst(before))
        #expect(switchCommands == PlanBuilder.switchPlan(from: try profile("Slow Net"), to: try profile("Black Hole"), interface: eth0))
        #expect(!switchCommands.joined().contains("ingress"))
        #expect(!switchCommands.contains { $0.starts(with: ["ip", "link"]) })
        #expect(network.snapshot.redirects["eth0"] == "tk-eth0")
        let state = try #require(try store.load(eth0))
        #expect(state.profile.name == "Black Hole")
        #expect(state.token != first.state.token)
    }

    @Test func failedSwitchGoesBackToTheOldProfile() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        let c = conditioner(network, runner, store: store)
        let first = try c.apply(try profile("3G"), to: eth0)
        network.failWhen { $0.contains("7ac0:20") }
        let error = #expect(throws: ConditionerError.self) { try c.apply(try profile("Slow Net"), to: eth0) }
        #expect(error?.description.contains("rolled back") == true)
        network.failWhen { _ in false }
        let state = try #require(try store.load(eth0))
        #expect(state.profile.name == "3G")
        #expect(state.token == first.state.token)
        #expect(state.complete)
        #expect(network.snapshot.redirects["eth0"] == "tk-eth0")
        #expect(network.snapshot.qdiscs["eth0"]?.contains { $0.handle == "7ac1:" } == true)
        #expect(network.snapshot.qdiscs["eth0"]?.contains { $0.handle == "7ac2:" } == false)
    }

    @Test func watchdogTokenOnlyTurnsOffItsOwnProfile() throws {
        let network = FakeNetwork()
        let store = temporaryStore()
        let c = conditioner(network, network.runner(), store: store)
        let first = try c.apply(bandwidthOnly, to: eth0, options: ApplyOptions(duration: 3))
        #expect(first.state.expiresAt != nil)
        let second = try c.apply(try profile("Cable Modem"), to: eth0, options: ApplyOptions(duration: 5))
        #expect(second.state.token != first.state.token)
        #expect(try c.off(eth0, token: first.state.token) == nil)
        #expect(try store.load(eth0)?.profile.name == "Cable Modem")
        #expect(try c.off(eth0, token: second.state.token)?.name == "Cable Modem")
        #expect(network.snapshot.links == ["eth0"])
    }

    /// The README's own sequence: `apply "Slow Net" --for 60s`, then `apply "Black Hole"` without `--for`. The switch
    /// keeps the deadline and the token, so the first apply's watchdog still turns the new profile off on time; Black
    /// Hole needs no confirmation there, its end being set.
    @Test func aSwitchWithoutForKeepsTheRunningDeadline() throws {
        let network = FakeNetwork()
        let store = temporaryStore()
        let c = conditioner(network, network.runner(), initial: true, store: store)
        let first = try c.apply(try profile("Slow Net"), to: eth0, options: ApplyOptions(duration: 60))
        let deadline = try #require(first.state.expiresAt)
        let second = try c.apply(try profile("Black Hole"), to: eth0)
        #expect(second.kind == .switched)
        // The record keeps whole seconds (ISO 8601): the same deadline within one.
        #expect(abs((second.state.expiresAt ?? .distantPast).timeIntervalSince(deadline)) < 1)
        #expect(second.state.token == first.state.token)
        #expect(try store.load(eth0)?.expiresAt == second.state.expiresAt)
        #expect(try c.off(eth0, token: first.state.token)?.name == "Black Hole")
        // With nothing running out, a switch is a fresh start: no deadline, a new token.
        let third = try c.apply(bandwidthOnly, to: eth0)
        let fourth = try c.apply(try profile("Cable Modem"), to: eth0)
        #expect(fourth.state.expiresAt == nil)
        #expect(fourth.state.token != third.state.token)
    }

    @Test func offWithNothingActiveDoesNothing() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        #expect(try conditioner(network, runner).off(eth0) == nil)
        #expect(runner.changingCommands.isEmpty)
    }

    @Test func offRecognisesItsOwnQdiscsWithoutARecord() throws {
        let network = FakeNetwork(links: ["eth0", "tk-eth0"])
        network.setRoot("eth0", FakeNetwork.Qdisc(kind: "htb", handle: "7ac0:", parent: nil))
        let runner = network.runner()
        #expect(try conditioner(network, runner).off(eth0) != nil)
        #expect(runner.changingCommands == [["tc", "qdisc", "del", "dev", "eth0", "root"], ["ip", "link", "del", "dev", "tk-eth0"]])
    }

    @Test func restoreArgumentsForRecordableKinds() {
        #expect(RecordedQdisc(kind: "pfifo", handle: "8001:", options: .object(["limit": .number(50)])).restoreCommand(interface: eth0)
                == ["tc", "qdisc", "add", "dev", "eth0", "root", "handle", "8001:", "pfifo", "limit", "50"])
        #expect(RecordedQdisc(kind: "htb", handle: "1:", options: .object(["r2q": .number(5), "default": .string("0x20"), "direct_qlen": .number(1000)])).restoreArguments()
                == ["htb", "default", "20", "r2q", "5", "direct_qlen", "1000"])
        #expect(RecordedQdisc(kind: "fq_codel", handle: "1:", options: .object(["limit": .number(10240)])).restoreArguments() == nil)
    }

    @Test func countersComeFromTheRootAndLeaves() throws {
        let json = #"""
            [{"kind":"htb","handle":"7ac0:","root":true,"options":{},"bytes":9000,"packets":30,"drops":4,"overlimits":12,"requeues":0,"backlog":0,"qlen":2},
             {"kind":"netem","handle":"7ac1:","parent":"7ac0:10","options":{},"bytes":9000,"packets":30,"drops":4,"overlimits":0,"qlen":2},
             {"kind":"ingress","handle":"ffff:","parent":"ffff:fff1","options":{},"bytes":1,"packets":1,"drops":0,"overlimits":0}]
            """#
        let counters = DirectionCounters(qdiscs: try InterfaceQdiscs(json: json, device: "eth0"))
        #expect(counters == DirectionCounters(packets: 30, bytes: 9000, dropped: 4, overlimits: 12, queued: 2))
    }
}

@Suite struct ProfileValidationTests {
    @Test func outOfRangeValuesFromCodeNeverReachTc() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let bad = Profile(name: "Bad", downlink: LinkSettings(bitsPerSecond: 10, lossPercent: 150))
        let error = #expect(throws: ConditionerError.self) {
            try Conditioner(runner: runner, store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                            inInitialNamespace: false, batchesTC: false).apply(bad, to: try InterfaceName("eth0"))
        }
        #expect(error?.description.contains("downlink loss must be 0 to 100%") == true)
        #expect(error?.description.contains("downlink bandwidth") == true)
        #expect(runner.commands.isEmpty)
        #expect(try builtIns().profiles.allSatisfy { $0.problems.isEmpty })
    }
}
