import Foundation
@testable import LinkConditioner
import TestSupport
import Testing

/// `--engine auto|netem|userspace`: which engine carries delay and loss, refused before anything changes when it
/// cannot, and kept by a switch.
@Suite struct EngineRequestTests {
    let eth0 = try! InterfaceName("eth0")
    let slow = Profile(name: "Slow", downlink: LinkSettings(bitsPerSecond: 32_000, delayMicroseconds: 100_000))
    let rate = Profile(name: "Rate", downlink: LinkSettings(bitsPerSecond: 32_000))

    /// The choice, with the probes the kernel would answer and a count of those asked.
    final class Probes: @unchecked Sendable {
        let netem: Bool, userspace: Bool
        var asked: [String] = []
        init(netem: Bool, userspace: Bool) { self.netem = netem; self.userspace = userspace }
        func choose(_ request: EngineRequest, _ profile: Profile, active: ConditioningEngine? = nil) throws -> ConditioningEngine? {
            try request.engine(for: profile, active: active, remedy: "Turn it off first",
                               netemAvailable: { self.asked.append("netem"); return self.netem },
                               userspaceAvailable: { self.asked.append("userspace"); return self.userspace })
        }
    }

    @Test("auto: netem where the kernel has it, else the user-space engine, else refused")
    func auto() throws {
        #expect(try Probes(netem: true, userspace: true).choose(.auto, slow) == .netem)
        #expect(try Probes(netem: false, userspace: true).choose(.auto, slow) == .userspace)
        let neither = #expect(throws: ConditionerError.self) { try Probes(netem: false, userspace: false).choose(.auto, slow) }
        guard case .netemUnavailable = neither else { Issue.record("\(String(describing: neither))"); return }
    }

    @Test("--engine userspace where netem exists: the engine, without probing netem; refused when it cannot run or carry the profile")
    func userspace() throws {
        let probes = Probes(netem: true, userspace: true)
        #expect(try probes.choose(.userspace, slow) == .userspace)
        #expect(probes.asked == ["userspace"])
        let missing = #expect(throws: ConditionerError.self) { try Probes(netem: true, userspace: false).choose(.userspace, slow) }
        guard case .requestedEngineMissing(.userspace, "Slow") = missing else { Issue.record("\(String(describing: missing))"); return }
        #expect(missing?.description.contains("nothing was changed") == true)
        var duplicating = slow
        duplicating.uplink.duplicatePercent = 1
        let cannot = #expect(throws: ConditionerError.self) { try Probes(netem: true, userspace: true).choose(.userspace, duplicating) }
        guard case .engineCannot(_, ["duplication"], chosen: true) = cannot else { Issue.record("\(String(describing: cannot))"); return }
        // Not "this kernel has no sch_netem": it has; the user chose the engine.
        #expect(cannot?.description.contains("no sch_netem") == false)
        #expect(cannot?.description.contains("--engine netem") == true)
    }

    @Test("--engine netem: refused where the kernel has none, even when the user-space engine could run")
    func netem() throws {
        #expect(try Probes(netem: true, userspace: false).choose(.netem, slow) == .netem)
        let probes = Probes(netem: false, userspace: true)
        let error = #expect(throws: ConditionerError.self) { try probes.choose(.netem, slow) }
        guard case .requestedEngineMissing(.netem, "Slow") = error else { Issue.record("\(String(describing: error))"); return }
        #expect(probes.asked == ["netem"])
        #expect(error?.description.contains("--engine netem") == true)
    }

    @Test("bandwidth alone needs neither engine, whatever is asked, and probes nothing")
    func bandwidthOnly() throws {
        for request in EngineRequest.allCases {
            let probes = Probes(netem: false, userspace: false)
            #expect(try probes.choose(request, rate) == nil)
            #expect(probes.asked.isEmpty)
        }
    }

    @Test("a switch keeps the engine in force: another one asked for is refused, the same or auto goes on without probes")
    func switchesKeepTheirEngine() throws {
        let probes = Probes(netem: true, userspace: true)
        #expect(try probes.choose(.auto, slow, active: .userspace) == .userspace)
        #expect(try probes.choose(.userspace, slow, active: .userspace) == .userspace)
        #expect(try probes.choose(.auto, rate, active: .userspace) == .userspace, "the engine stays for bandwidth alone")
        #expect(try probes.choose(.auto, slow, active: .netem) == .netem)
        #expect(try probes.choose(.netem, slow, active: .netem) == .netem)
        #expect(probes.asked.isEmpty)
        for (active, request) in [(ConditioningEngine.netem, EngineRequest.userspace), (.userspace, .netem)] {
            let error = #expect(throws: ConditionerError.self) { try probes.choose(request, slow, active: active) }
            guard case .engineInUse(active, request.engine!, _) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(error?.description.contains("Turn it off first") == true)
        }
        // From the user-space engine even to bandwidth alone: it would stay running, so --engine netem is refused.
        #expect(throws: ConditionerError.self) { try probes.choose(.netem, rate, active: .userspace) }
    }

    @Test("apply --engine userspace on a kernel with netem: no netem anywhere, and the record keeps the engine for switches")
    func applyForcesTheEngineAndASwitchKeepsIt() throws {
        let network = FakeNetwork()
        let runner = network.runner()
        let store = temporaryStore()
        let conditioner = Conditioner(runner: runner, store: store, kernel: FixedKernelSupport(netem: true, userspace: true),
                                      inInitialNamespace: false, batchesTC: false, engineExecutable: "/usr/bin/condition")
        let applied = try conditioner.apply(try builtIns().profile(named: "3G"), to: eth0, options: ApplyOptions(engine: .userspace))
        #expect(applied.state.engine == .userspace)
        #expect(!runner.changingCommands.joined().contains("netem"))
        #expect(runner.changingCommands.contains { $0.starts(with: ["/usr/bin/condition", "__engine", "-i", "eth0"]) })
        // Another apply without --engine stays on the engine in force (here the fake engine never reported, so it is
        // a fresh apply rather than a switch in place; ConditionerNamespaceTests switch a running one).
        let switched = try conditioner.apply(try builtIns().profile(named: "Edge"), to: eth0)
        #expect(switched.state.engine == .userspace)
        #expect(!runner.changingCommands.joined().contains("netem"))
        // Asking for netem over it is refused before anything runs; the record is as it was.
        let before = runner.changingCommands.count
        let record = store.recordBytes(eth0)
        let error = #expect(throws: ConditionerError.self) {
            try conditioner.apply(try builtIns().profile(named: "3G"), to: eth0, options: ApplyOptions(engine: .netem))
        }
        #expect(error?.description.contains("condition off -i eth0") == true, "\(String(describing: error))")
        #expect(runner.changingCommands.count == before)
        #expect(store.recordBytes(eth0) == record)
    }

    @Test("apply --engine netem on a kernel without it changes nothing")
    func applyRefusesAMissingEngineBeforeAnyChange() throws {
        let runner = FakeNetwork().runner()
        let store = temporaryStore()
        let conditioner = Conditioner(runner: runner, store: store, kernel: FixedKernelSupport(netem: false, userspace: true),
                                      inInitialNamespace: false, batchesTC: false)
        #expect(throws: ConditionerError.self) {
            try conditioner.apply(try builtIns().profile(named: "3G"), to: eth0, options: ApplyOptions(engine: .netem))
        }
        #expect(runner.changingCommands.isEmpty)
        #expect(try store.load(eth0) == nil)
    }
}
