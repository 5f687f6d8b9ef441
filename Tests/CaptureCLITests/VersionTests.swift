import Foundation
import Testing
import TestSupport

/// One version everywhere (issue 36): HAR's `creator.version` once said 0.1 while `--version` said 0.2.0.
@Suite("one version in every output")
struct VersionTests {
    @Test("capture --version, condition --version and HAR's creator name the same release")
    func sameVersion() throws {
        let captureVersion = try #require(lines(try capture(["--version"]).stdoutText).first)
        let conditionResult = try run(TestEnvironment.executable("condition").path, ["--version"])
        let conditionVersion = try #require(lines(conditionResult.stdoutText).first)
        let number = try #require(captureVersion.split(separator: " ").last.map(String.init))
        #expect(captureVersion == "capture (TapKit) \(number)")
        #expect(conditionVersion == "condition (TapKit) \(number)")

        let har = temporaryPath(".har")
        defer { try? FileManager.default.removeItem(atPath: har) }
        let fixture = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        let result = try capture(["-r", fixture, "--http", "--har", har])
        #expect(result.status == 0, "\(result.stderrText)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any])
        let creator = (document["log"] as? [String: Any])?["creator"] as? [String: Any]
        #expect(creator?["name"] as? String == "TapKit capture")
        #expect(creator?["version"] as? String == number)
    }
}
