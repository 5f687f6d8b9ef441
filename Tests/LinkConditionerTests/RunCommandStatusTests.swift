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
}
