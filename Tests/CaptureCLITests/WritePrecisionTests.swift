import Foundation
import Testing
import TestSupport

/// `-w` keeps the input's timestamp precision (issue 36: a microsecond capture was written as a nanosecond pcap,
/// magic 4d3cb2a1): microseconds as tcpdump -w writes them, nanoseconds when the input has them or
/// `--time-stamp-precision nano` asks.
@Suite("-w keeps the timestamps' precision")
struct WritePrecisionTests {
    static func magic(_ path: String) throws -> String {
        try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    @Test("micro in, micro out, as tcpdump writes it; nano asked or read, nano out; the packets read back the same")
    func precisionKept() throws {
        let input = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        let (micro, nano, again, oracle) = (temporaryPath(".pcap"), temporaryPath(".pcap"), temporaryPath(".pcap"), temporaryPath(".pcap"))
        defer { for path in [micro, nano, again, oracle] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(try Self.magic(input) == "d4c3b2a1")

        #expect(try capture(["-r", input, "-w", micro]).status == 0)
        #expect(try tcpdump(["-r", input, "-w", oracle]).status == 0)
        #expect(try Self.magic(micro) == Self.magic(oracle))
        #expect(try tcpdump(["-tt", "-n", "-r", micro]).stdoutText == tcpdump(["-tt", "-n", "-r", input]).stdoutText)

        let asked = try capture(["-r", input, "--time-stamp-precision", "nano", "-w", nano])
        #expect(asked.status == 0, "\(asked.stderrText)")
        #expect(try Self.magic(nano) == "4d3cb2a1")
        #expect(try capture(["-r", nano, "-w", again]).status == 0)
        #expect(try Self.magic(again) == "4d3cb2a1")
        let nanoLines = { (path: String) in try tcpdump(["--time-stamp-precision", "nano", "-tt", "-n", "-r", path]).stdoutText }
        #expect(try nanoLines(again) == nanoLines(nano))
        #expect(try nanoLines(nano) == nanoLines(input))
        // pcapng's resolution is not known before reading: nanoseconds, so nothing read is lost.
        let pcapng = temporaryPath(".pcapng"), fromPcapng = temporaryPath(".pcap")
        defer { for path in [pcapng, fromPcapng] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(try capture(["-r", nano, "-w", pcapng]).status == 0)
        #expect(try capture(["-r", pcapng, "-w", fromPcapng]).status == 0)
        #expect(try Self.magic(fromPcapng) == "4d3cb2a1")
        #expect(try nanoLines(fromPcapng) == nanoLines(nano))
        // -w still refuses the flags that only shape printed lines.
        #expect(try capture(["-r", input, "-e", "-w", micro]).status != 0)
    }
}
