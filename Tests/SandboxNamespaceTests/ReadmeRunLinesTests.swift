import Foundation
import Testing
import TestSupport

/// Issue 36: the README's `condition run` start lines had drifted from what `run` prints. They are checked against a
/// real run: the same lines, in order, with the sandbox's name and addresses (chosen at run time) as placeholders.
/// On a kernel without netem, `run` first says the user-space engine does the work; the README shows a kernel
/// with netem and says so in words.
@Suite("README: condition run's start lines", .enabled(if: TestEnvironment.isRoot, "needs root: condition run makes a sandbox"))
struct ReadmeRunLinesTests {
    static func placeholders(_ line: String) -> String {
        line.replacingOccurrences(of: #"\b[0-9a-f]{6}\b"#, with: "ID", options: .regularExpression)
            .replacingOccurrences(of: #"\b\d+\.\d+\.\d+\.\d+\b"#, with: "ADDR", options: .regularExpression)
    }

    @Test func theReadmeRunLinesAreRunsOwn() throws {
        let root = TestEnvironment.packageRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8).split(separator: "\n").map(String.init)
        let sample = Array(readme.drop(while: { !$0.hasPrefix("$ sudo condition run \"Cable Modem\" -- ") }).dropFirst()
            .prefix(while: { $0.hasPrefix("condition: ") }))
        try #require(sample.count >= 2, "no `$ sudo condition run \"Cable Modem\"` sample in README.md")
        let result = try run(SandboxHarness.condition, ["run", "Cable Modem", "--", "true"])
        #expect(result.status == 0, "\(result.stderrText)")
        let printed = result.stderrText.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("condition: ") && !$0.hasPrefix("condition: delay and loss of \"Cable Modem\" by the user space") }
        #expect(printed.map(Self.placeholders) == sample.map(Self.placeholders), "run printed:\n\(result.stderrText)")
    }
}
