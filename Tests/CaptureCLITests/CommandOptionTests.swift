import Foundation
import Testing
import TestSupport

/// `-- COMMAND` and its options, without running a command (no root needed).
@Suite struct CommandOptionTests {
    let fixture = TestEnvironment.fixtures.appendingPathComponent("http-keepalive.pcap").path

    @Test("with -r or -i before it, -- still introduces filter words, as before")
    func terminatorKeepsFilterMeaningWithASource() throws {
        let plain = try capture(["-r", fixture, "tcp", "port", "80"])
        let terminated = try capture(["-r", fixture, "--", "tcp", "port", "80"])
        #expect(plain.status == 0)
        #expect(terminated.status == 0, "\(terminated.stderrText)")
        #expect(terminated.stdoutText == plain.stdoutText)
    }

    @Test("command-only options without a command, and a command with -r, are refused with a reason", arguments: [
        (["--profile", "Edge", "-r", "F"], "--profile conditions a command"),
        (["--no-quic", "-r", "F"], "--no-quic applies to a command"),
        (["--profiles", "/tmp", "-r", "F"], "--profiles only applies"),
    ])
    func refused(arguments: [String], message: String) throws {
        let result = try capture(arguments.map { $0 == "F" ? fixture : $0 })
        #expect(result.status == 64)
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
    }

    @Test("--help names the command form and its flags")
    func help() throws {
        let help = try capture(["--help"]).stdoutText
        for flag in ["--profile", "--no-quic", "--profiles"] { #expect(help.contains(flag), "\(flag)") }
        #expect(help.contains("capture --http -- curl"), "the -- COMMAND form has an example")
        #expect(!help.contains("sandbox-watchdog"), "the watchdog option is internal")
    }
}
