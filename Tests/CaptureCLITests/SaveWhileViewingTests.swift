import Foundation
import Testing
import TestSupport

/// `--http -w FILE`: every packet is saved while the exchanges are shown, and the file reads back to the same
/// exchanges; a file that cannot be written says "cannot write FILE: reason".
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "needs the built capture binary"))
struct SaveWhileViewingTests {
    static let fixtures = ["http-keepalive.pcap", "http-pipelined.pcap", "http-reordered.pcap", "http-chunked-gzip.pcap"]

    @Test(arguments: fixtures)
    func savedFileReadsBackToTheSameExchanges(name: String) throws {
        let source = TestEnvironment.fixtures.appendingPathComponent(name).path
        let saved = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: saved) }
        let shown = try capture(["-r", source, "--http", "--json", "-w", saved])
        #expect(shown.status == 0, "\(shown.stderrText)")
        let reread = try capture(["-r", saved, "--http", "--json"])
        #expect(reread.status == 0)
        #expect(!lines(shown.stdoutText).isEmpty)
        #expect(shown.stdoutText == reread.stdoutText)
        // Every packet was saved, not only those in exchanges.
        #expect(lines(try capture(["-r", saved]).stdoutText) == lines(try capture(["-r", source]).stdoutText))
    }

    @Test func unwritableFileIsNamedWithTheReason() throws {
        let source = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        for arguments in [["-w", "/nonexistent-dir/out.pcap"], ["--http", "-w", "/nonexistent-dir/out.pcap"]] {
            let result = try capture(["-r", source] + arguments)
            #expect(result.status == 1)
            #expect(result.stderrText.contains("cannot write /nonexistent-dir/out.pcap: No such file or directory"), "\(result.stderrText)")
            #expect(!result.stderrText.contains("NSCocoaErrorDomain"))
        }
    }

    @Test func packetLimitSaysTheCaptureStopped() throws {
        let source = TestEnvironment.fixtures.appendingPathComponent("http-keepalive.pcap").path
        let result = try capture(["-r", source, "--http", "-c", "8"])
        #expect(result.status == 0)
        #expect(result.stderrText.contains("stopped after 8 packets (-c 8)"), "\(result.stderrText)")
        #expect(!(try capture(["-r", source, "--http"])).stderrText.contains("stopped after"))
    }
}
