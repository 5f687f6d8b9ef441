import Foundation
import Testing
import TestSupport

/// The page's pure modules under Node's own test runner (`node --test`, no npm): curl.test.js checks the shape of
/// copy as curl's command, curl-shell.test.js runs it through bash and dash with the real curl against a loopback
/// server that records what it received, for hostile bodies, header values and targets.
@Suite("Live view page modules in node",
       .enabled(if: ["node", "curl", "bash", "dash"].allSatisfy(TestEnvironment.hasProgram),
                "needs node (20 or later), curl, bash and dash"))
struct LiveViewPageTests {
    /// Every test file beside this one; each must report its tests, and every test pass.
    static let files = ["curl.test.js", "curl-shell.test.js"]

    @Test("curl.js writes commands that send exactly what was captured and run nothing", arguments: files)
    func nodeTests(file: String) throws {
        let path = TestEnvironment.packageRoot.appendingPathComponent("Tests/LiveViewPageTests/\(file)").path
        let result = try TestSupport.run("node", ["--experimental-default-type=module", "--test", "--test-reporter=tap", path])
        let lines = result.stdoutText.split(separator: "\n")
        // Top-level results only: "ok 3 - name" or "not ok 3 - name".
        let passed = lines.filter { $0.hasPrefix("ok ") }, failed = lines.filter { $0.hasPrefix("not ok ") }
        for line in failed { Issue.record("\(file): \(line)") }
        #expect(!passed.isEmpty, "\(file) ran no test: \(result.stderrText.suffix(2000))")
        #expect(result.status == 0, "\(file): node exited \(result.status): \(result.stdoutText.suffix(3000))")
    }
}
