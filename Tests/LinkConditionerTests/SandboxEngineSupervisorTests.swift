import Foundation
@testable import LinkConditioner
import Testing

/// The sandbox engine supervisor's restart budget and what `condition sandboxes` says about a supervised engine,
/// without root (SandboxEngineTests kill real engines).
@Suite struct SandboxEngineSupervisorTests {
    @Test("restarts wait 0.1 s doubling each time; the sixth death within a minute gives up")
    func budgetDoublesThenGivesUp() {
        var budget = SandboxEngineSupervisor.RestartBudget()
        let start = Date()
        let pauses = (0..<6).map { budget.pause(at: start.addingTimeInterval(Double($0))) }
        #expect(pauses == [0.1, 0.2, 0.4, 0.8, 1.6, nil])
    }

    @Test("deaths more than a minute apart never use the budget up, and old ones stop lengthening the pause")
    func budgetForgetsAfterAMinute() {
        var budget = SandboxEngineSupervisor.RestartBudget()
        let start = Date()
        #expect((0..<20).map { budget.pause(at: start.addingTimeInterval(61 * Double($0))) } == Array(repeating: 0.1, count: 20))
        var burst = SandboxEngineSupervisor.RestartBudget()
        for second in 0..<5 { _ = burst.pause(at: start.addingTimeInterval(Double(second))) }
        // At 60.5 s the deaths at 0 s is a minute old: 4 remain within the window.
        #expect(burst.pause(at: start.addingTimeInterval(60.5)) == 1.6)
        #expect(burst.pause(at: start.addingTimeInterval(60.6)) == nil)
    }

    @Test("sandboxes names the engine's pid, its restarts, a killed supervisor, and why it is not running")
    func summaries() {
        func summary(_ report: EngineReport, running: Bool = true) -> String {
            SandboxEngine.Status(engine: .userspace, report: report, running: running).summary
        }
        let engine = ConditioningEngine.userspace.summary
        #expect(summary(EngineReport(pid: 10, worker: 11, delayed: 4)) == engine + ", pid 11: 4 delayed, 0 let through, 0 dropped by it")
        #expect(summary(EngineReport(pid: 10, worker: 12, restarts: 1))
                == engine + ", pid 12, started again 1 time after it died: 0 delayed, 0 let through, 0 dropped by it")
        #expect(summary(EngineReport(pid: 12, worker: 12, restarts: 2)).hasPrefix(
            engine + ", pid 12 (its supervisor was killed: if it dies, the next switch starts it again), started again 2 times"))
        #expect(summary(EngineReport(pid: 10, restarts: 5, error: "it stopped 6 times"), running: false)
                == engine + ": NOT RUNNING (delay and loss are not applied until the next switch starts it again; the sandbox "
                + "still goes when its command ends): it stopped 6 times")
    }
}
