import Foundation
import LinkConditioner
import TestSupport
import Testing

private let eth0 = try! InterfaceName("eth0")

/// A plan's tc commands run as one `tc -batch`, and a batch that fails part-way is undone like single commands.
@Suite struct TCBatchTests {
    @Test func consecutiveTcCommandsShareABatchAndOthersRunAlone() throws {
        let plan = PlanBuilder.applyPlan(profile: try builtIns().profile(named: "3G"), interface: eth0)
        let segments = TCBatch.segments(plan)
        // Uplink tree, ifb add, ifb up, downlink tree + ingress redirect.
        #expect(segments.count == 4, "\(segments)")
        guard case .batch(let uplink) = segments[0], case .single(let add) = segments[1],
              case .single(let up) = segments[2], case .batch(let downlink) = segments[3] else {
            Issue.record("unexpected segments \(segments)"); return
        }
        #expect(add.starts(with: ["ip", "link", "add"]) && up.starts(with: ["ip", "link", "set"]))
        #expect(uplink + [add, up] + downlink == plan)
        #expect(TCBatch.text(uplink).hasPrefix("qdisc add dev eth0 root handle 7ac0: htb default 0\n"))
        #expect(TCBatch.text(uplink).split(separator: "\n").count == uplink.count)
    }

    @Test func linesTcCannotReadBackRunOnTheirOwn() {
        #expect(TCBatch.line(["tc", "qdisc", "show"]) == "qdisc show")
        #expect(TCBatch.line(["tc", "-j", "qdisc", "show"]) == nil, "global options cannot go in a batch line")
        #expect(TCBatch.line(["tc", "filter", "add", "a b"]) == nil)
        #expect(TCBatch.line(["tc", "filter", "add", "x#y"]) == nil, "tc cuts a batch line at #")
        #expect(TCBatch.line(["tc", "filter", "add", ""]) == nil)
        #expect(TCBatch.line(["ip", "link", "add"]) == nil)
        let segments = TCBatch.segments([["tc", "qdisc", "add", "a"], ["tc", "class", "add", "b c"], ["tc", "qdisc", "del", "d"]])
        #expect(segments == [.single(["tc", "qdisc", "add", "a"]), .single(["tc", "class", "add", "b c"]),
                             .single(["tc", "qdisc", "del", "d"])])
    }

    @Test func theFailedLineIsReadFromTcsMessage() {
        #expect(TCBatch.failedLine(stderr: "Error: Specified class not found.\nCommand failed /run/x.batch:3\n") == 3)
        #expect(TCBatch.failedLine(stderr: "RTNETLINK answers: File exists\nCommand failed /a:b/c.batch:12") == 12)
        #expect(TCBatch.failedLine(stderr: "something else") == nil)
    }

    @Test func aFailedBatchNamesTheCommandThatFailed() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-batch-\(UUID().uuidString)")
        let plan = [["tc", "qdisc", "add", "dev", "eth0", "root", "handle", "7ac0:", "htb", "default", "0"],
                    ["tc", "qdisc", "change", "dev", "eth0", "parent", "7ac0:10", "handle", "7ac1:", "netem", "delay", "1ms"],
                    ["tc", "qdisc", "del", "dev", "eth0", "root"]]
        let error = #expect(throws: CommandFailedError.self) { try TCBatch.run(plan, runner: runner, file: file) }
        #expect(error?.arguments == plan[1])
        #expect(error?.stderr.contains("no such qdisc") == true)
        #expect(error?.stderr.contains("Command failed") == false)
        #expect(runner.commands == [["tc", "-batch", file.path]])
        #expect(!FileManager.default.fileExists(atPath: file.path), "the batch file is removed")
        // tc stops at the failing line: the first applied, the third not run.
        #expect(network.snapshot.qdiscs["eth0"]?.contains { $0.handle == "7ac0:" } == true)
    }

    private func batching(_ network: FakeNetwork, _ runner: RecordingRunner, store: StateStore) -> Conditioner {
        Conditioner(runner: runner, store: store, kernel: FixedKernelSupport(netem: true), inInitialNamespace: false)
    }

    @Test func aSwitchIsOneTcProcess() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let c = batching(network, runner, store: temporaryStore())
        _ = try c.apply(try builtIns().profile(named: "Slow Net"), to: eth0)
        let before = runner.changingCommands.count
        let outcome = try c.apply(try builtIns().profile(named: "3G"), to: eth0)
        #expect(outcome.kind == .switched)
        let switchCommands = Array(runner.changingCommands.dropFirst(before))
        #expect(switchCommands.count == 1 && switchCommands.first?.starts(with: ["tc", "-batch"]) == true, "\(switchCommands)")
        #expect(outcome.commands == PlanBuilder.switchPlan(from: try builtIns().profile(named: "Slow Net"),
                                                           to: try builtIns().profile(named: "3G"), interface: eth0))
        #expect(network.snapshot.qdiscs["eth0"]?.contains { $0.handle == "7ac1:" } == true)
    }

    /// Issue 11: a failing batch leaves the old profile in force: the lines before the failure are undone by
    /// taking the tree down and applying the old profile afresh, and the record is the old one.
    @Test(arguments: [1, 2, 3])
    func aFailingSwitchBatchRestoresTheOldProfile(failingLine: Int) throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        let c = batching(network, runner, store: store)
        let first = try c.apply(try builtIns().profile(named: "3G"), to: eth0)
        let before = network.snapshot.qdiscs
        let plan = PlanBuilder.switchPlan(from: try builtIns().profile(named: "3G"), to: try builtIns().profile(named: "Slow Net"),
                                          interface: eth0)
        let failing = plan[failingLine - 1]
        network.failWhen { $0 == failing }
        let error = #expect(throws: ConditionerError.self) { try c.apply(try builtIns().profile(named: "Slow Net"), to: eth0) }
        network.failWhen { _ in false }
        #expect(error?.description.contains(failing.joined(separator: " ")) == true, "\(String(describing: error))")
        #expect(error?.description.contains("rolled back") == true)
        let state = try #require(try store.load(eth0))
        #expect(state.profile.name == "3G" && state.token == first.state.token && state.complete)
        #expect(network.snapshot.qdiscs == before, "the kernel holds the old profile's tree again")
        #expect(network.snapshot.redirects["eth0"] == "tk-eth0")
    }

    @Test func aFailingFreshApplyBatchLeavesNothing() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        let c = batching(network, runner, store: store)
        network.failWhen { $0.contains("7ac0:10") && $0.contains("filter") }
        #expect(throws: ConditionerError.self) { try c.apply(try builtIns().profile(named: "3G"), to: eth0) }
        #expect(network.snapshot.links == ["eth0"])
        #expect(network.snapshot.qdiscs["eth0"]?.isEmpty ?? true)
        #expect(try store.load(eth0) == nil)
    }
}
