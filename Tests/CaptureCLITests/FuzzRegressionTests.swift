import Foundation
import Testing
import TestSupport

/// Whole capture files that fuzzing (Scripts/fuzz capture-file) found to crash or hang, kept in
/// Tests/Fixtures/fuzz-regressions (`.bin`, so the tcpdump conformance suites do not take them for captures).
/// Each runs through `capture --http --json` under a deadline.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "needs the built capture binary"))
struct FuzzRegressionTests {
    static func input(_ name: String) -> String {
        TestEnvironment.fixtures.appendingPathComponent("fuzz-regressions/\(name)").path
    }

    /// An HTTP/2 stream whose in-order bytes reached a buffered chunk held by its cross-direction gate: the
    /// delivery loop made no progress and never ended (HalfStream.accept). Now the rest of the segment queues
    /// behind the chunk and the broken file is reported.
    @Test func inOrderBytesBehindAGatedChunkDoNotHang() throws {
        let started = Date()
        let result = try run("timeout", ["-s", "KILL", "30", captureBinary, "--http", "--json", "-r",
                                         Self.input("capture-file-gated-chunk-hang.bin")])
        #expect(result.status == 1, "killed by the deadline (137) means it hangs again: \(result.stderrText)")
        #expect(result.stderrText.contains("capture file broken at packet 9"), "\(result.stderrText)")
        #expect(result.stdoutText.contains("\"status\":200"), "\(result.stdoutText)")
        #expect(Date().timeIntervalSince(started) < 10)
    }
}
