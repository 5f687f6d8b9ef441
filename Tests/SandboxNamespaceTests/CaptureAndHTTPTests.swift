import Foundation
import LinkConditioner
import TestSupport
import Testing

/// `condition run --capture FILE --http` (issue 24): one capture process prints the exchanges and saves the
/// packets, so "listening on" and the closing counts appear once, not twice.
@Suite(.serialized) struct CaptureAndHTTPTests {
    @Test(.enabled(if: SandboxHarness.captureWrites, "needs the capture binary, built with -w (swift build)"))
    func captureAndHTTPPrintOnce() throws {
        let server = try LoopbackWebServer(randomFiles: ["one.bin": 20_000])
        defer { server.stop() }
        let profiles = try SandboxHarness.profileDirectory([("Once Rate", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let pcap = FileManager.default.temporaryDirectory.appendingPathComponent("w24-once-\(UUID().uuidString).pcap")
        defer { try? FileManager.default.removeItem(at: pcap) }
        let result = try SandboxHarness.RunningCondition([
            "run", "Once Rate", "--profiles", profiles.path, "--capture", pcap.path, "--http", "--",
            "sh", "-c", "curl -sS -o /dev/null http://$TAPKIT_SANDBOX_HOST:\(server.port)/one.bin",
        ]).finish(timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "listening on").count == 2, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "packets captured").count == 2, "\(result.stderr)")
        #expect(result.stdout.contains("/one.bin → 200 OK"), "\(result.stdout)")
        let saved = try run("tcpdump", ["-nn", "-r", pcap.path]).stdoutText
        #expect(saved.split(separator: "\n").count > 10, "the pcap holds the download: \(saved.prefix(300))")
    }
}
