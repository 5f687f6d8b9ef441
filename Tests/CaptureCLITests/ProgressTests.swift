import Foundation
import Testing
import TestSupport

/// Long offline reads show `NN% read, N packets` on standard error when it is a terminal, and nothing otherwise.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "needs the built capture binary"),
       .enabled(if: TestEnvironment.hasProgram("script"), "needs script(1) from util-linux for a pseudo-terminal"))
struct ProgressTests {
    /// The bundled sample's packets repeated past the 16 MiB threshold (about 90,000 packets); removed afterwards.
    func withBigCapture(_ body: (String) throws -> Void) throws {
        let sample = try Data(contentsOf: TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap"))
        let header = sample.prefix(24), records = sample.dropFirst(24)
        var big = Data(header)
        while big.count <= 17 << 20 { big.append(records) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tk-progress-\(UUID().uuidString).pcap").path
        try big.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    /// Runs capture with standard error on a pseudo-terminal; what the terminal showed.
    func terminalOutput(file: String, _ arguments: String) throws -> ProcessResult {
        try run("script", ["-qec", "'\(captureBinary)' -r '\(file)' \(arguments) > /dev/null", "/dev/null"])
    }

    @Test(arguments: ["-q", "--http --json"])
    func progressOnATerminal(arguments: String) throws {
        try withBigCapture { file in
            let result = try terminalOutput(file: file, arguments)
            #expect(result.status == 0, "\(result.stderrText)")
            let shown = result.stdoutText
            #expect(shown.contains("% read, 16384 packets"), "terminal showed: \(shown.prefix(300))")
            // The progress line is erased before exit, so it never stays mixed with what follows.
            #expect(shown.hasSuffix("\r\u{1b}[K") || shown.hasSuffix("\r\u{1b}[K\r\n"), "ends with: \(shown.suffix(40).debugDescription)")
        }
    }

    @Test func noProgressWhenStandardErrorIsNotATerminal() throws {
        try withBigCapture { file in
            let result = try run(captureBinary, ["-r", file, "-q"])
            #expect(result.status == 0)
            #expect(!result.stderrText.contains("% read"))
        }
    }
}
