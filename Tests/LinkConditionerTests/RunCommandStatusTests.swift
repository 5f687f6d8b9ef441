import Foundation
import Testing
import TestSupport

/// `condition run` answers as a shell for a command that cannot run, before it builds anything (no root needed).
@Suite struct RunCommandStatusTests {
    @Test func missingCommandIs127AndNotExecutableIs126() throws {
        let condition = TestEnvironment.executable("condition").path
        let missing = try run(condition, ["run", "Edge", "--", "tkx-no-such-command"])
        #expect(missing.status == 127)
        #expect(missing.stderrText.contains("tkx-no-such-command: command not found"), "\(missing.stderrText)")

        let plain = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-plain-\(UUID().uuidString)")
        try Data("echo hi\n".utf8).write(to: plain)
        defer { try? FileManager.default.removeItem(at: plain) }
        let notExecutable = try run(condition, ["run", "Edge", "--", plain.path])
        #expect(notExecutable.status == 126)
        #expect(notExecutable.stderrText.contains("\(plain.path): Permission denied"), "\(notExecutable.stderrText)")

        let directory = try run(condition, ["run", "Edge", "--", "/tmp"])
        #expect(directory.status == 126)
        #expect(directory.stderrText.contains("/tmp: Is a directory"), "\(directory.stderrText)")
    }

    /// `run NAME --ui [ADDR:PORT] -- COMMAND` hands over to `capture --profile NAME --ui`; what that cannot do is
    /// refused before anything is built, with what to do instead. `--ui` takes an address only when one follows.
    @Test func liveViewArgumentsAreCheckedFirst() throws {
        let condition = TestEnvironment.executable("condition").path
        for (arguments, expected) in [
            (["run", "--ui", "--refuse", "reset", "--", "true"], "--ui needs a profile"),
            (["run", "Edge", "--ui", "--refuse", "reset", "--", "true"], "put the faults in a profile file"),
            (["run", "Edge", "--ui", "127.0.0.1:0", "--reset-after-bytes", "10", "--", "true"], "put the faults in a profile file"),
            (["run", "--ui", "[::1]:9000", "Edge", "--refuse", "reset", "--", "true"], "put the faults in a profile file"),
            (["run", "--ui", "9000", "--", "true"], "name a profile"),
        ] {
            let result = try run(condition, arguments)
            #expect(result.status == 64, "\(arguments): \(result.status)")
            #expect(result.stderrText.contains(expected), "\(arguments): \(result.stderrText)")
        }
        let help = try run(condition, ["run", "--help"])
        #expect(help.stdoutText.contains("--ui <[addr:port]>"), "\(help.stdoutText)")
    }
}
