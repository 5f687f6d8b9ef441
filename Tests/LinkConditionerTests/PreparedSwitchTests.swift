import Foundation
import LinkConditioner
import TestSupport
import Testing

private let eth0 = try! InterfaceName("eth0")

/// A schedule prepares a switch ahead of its time (checks, queries, plan) and runs only the change at it.
@Suite struct PreparedSwitchTests {
    private func setUp() throws -> (FakeNetwork, RecordingRunner, Conditioner) {
        let network = FakeNetwork()
        let runner = network.runner()
        let conditioner = Conditioner(runner: runner, store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                                      inInitialNamespace: false)
        return (network, runner, conditioner)
    }

    @Test func preparingChangesNothingAndCommittingRunsOnlyTheChange() throws {
        let (network, runner, c) = try setUp()
        _ = try c.apply(try builtIns().profile(named: "Slow Net"), to: eth0)
        let before = network.snapshot.qdiscs
        let changes = runner.changingCommands.count
        let prepared = try #require(try c.prepareSwitch(to: try builtIns().profile(named: "3G"), on: eth0))
        #expect(runner.changingCommands.count == changes, "preparing runs queries only")
        #expect(network.snapshot.qdiscs == before)
        #expect(prepared.plan == PlanBuilder.switchPlan(from: try builtIns().profile(named: "Slow Net"),
                                                        to: try builtIns().profile(named: "3G"), interface: eth0))
        let queries = runner.commands.count
        let outcome = try c.commit(prepared)
        #expect(outcome.kind == .switched && outcome.state.profile.name == "3G")
        #expect(Array(runner.commands.dropFirst(queries)).map { $0.prefix(2) } == [["tc", "-batch"]],
                "committing is the batch alone: no query before it")
        #expect(try c.store.load(eth0)?.profile.name == "3G")
    }

    @Test func nothingActiveMeansNothingToPrepare() throws {
        let (_, _, c) = try setUp()
        #expect(try c.prepareSwitch(to: try builtIns().profile(named: "3G"), on: eth0) == nil)
    }

    @Test func aSwitchPreparedBeforeAnotherChangeIsNotRun() throws {
        let (network, runner, c) = try setUp()
        _ = try c.apply(try builtIns().profile(named: "Slow Net"), to: eth0)
        let prepared = try #require(try c.prepareSwitch(to: try builtIns().profile(named: "3G"), on: eth0))
        _ = try c.apply(try builtIns().profile(named: "Edge"), to: eth0)
        let after = network.snapshot.qdiscs
        let changes = runner.changingCommands.count
        let error = #expect(throws: ConditionerError.self) { try c.commit(prepared) }
        #expect(error?.description.contains("nothing was run") == true)
        #expect(runner.changingCommands.count == changes)
        #expect(network.snapshot.qdiscs == after)
        #expect(try c.store.load(eth0)?.profile.name == "Edge")
    }
}
