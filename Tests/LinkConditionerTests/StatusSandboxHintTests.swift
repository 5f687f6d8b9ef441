import Foundation
import Sandbox
import Testing
import TestSupport

/// `condition status` lists interfaces only; with sandboxes running it points at `condition sandboxes`.
@Suite struct StatusSandboxHintTests {
    @Test func statusPointsAtSandboxes() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        var environment = ProcessInfo.processInfo.environment
        environment["TAPKIT_RUN_DIR"] = base.path
        environment["TAPKIT_STATE_DIR"] = base.appendingPathComponent("state").path
        let condition = TestEnvironment.executable("condition").path

        let none = try run(condition, ["status"], environment: environment)
        #expect(none.status == 0)
        #expect(!none.stdoutText.contains("condition sandboxes"), "\(none.stdoutText)")

        // A record owned by this (living) test process stands for a running `condition run`.
        let registry = SandboxRegistry(runDirectory: base)
        let record = SandboxRecord(identity: try SandboxIdentity(id: "abc123", slot: 7), profile: "Edge", command: ["true"],
                                   ownerPID: getpid(), ownerStartTime: nil)
        try registry.save(record)
        let one = try run(condition, ["status"], environment: environment)
        #expect(one.status == 0)
        #expect(one.stdoutText.contains("1 sandbox is running (condition run); `condition sandboxes` lists them"),
                "\(one.stdoutText)")
    }
}
