import Foundation
import Testing
import TestSupport

/// `capture` against tcpdump on every public fixture: no crash, same packet count, and for TCP and UDP over
/// IPv4/IPv6 the same addresses, ports and lengths as `tcpdump -nq`.
@Suite(.enabled(if: haveFixtures, "needs the built capture binary, tcpdump and ../shared/fixtures/public"))
struct ConformanceTests {
    @Test(arguments: publicFixtureNames)
    func quietLinesAgreeWithTcpdump(name: String) throws {
        let path = publicFixture(name)
        let ours = try capture(["-q", "-r", path])
        let theirs = try tcpdump(["-nq", "-r", path])
        let broken = theirs.stderrText.contains("truncated")
        #expect(ours.status == (broken ? 1 : 0), "stderr: \(ours.stderrText)")
        let ourLines = lines(ours.stdoutText)
        let theirLines = lines(theirs.stdoutText)
        #expect(ourLines.count == theirLines.count)
        var compared = 0
        for (mine, reference) in zip(ourLines, theirLines) {
            guard let expected = TransportSummary(line: reference) else { continue }
            compared += 1
            #expect(TransportSummary(line: mine) == expected, "tcpdump: \(reference)\ncapture: \(mine)")
        }
        #expect(compared > 0 || !theirLines.contains { $0.contains(" tcp ") })
    }

    /// The default lines, timestamps included, match `tcpdump -n` exactly for every TCP packet.
    @Test(arguments: publicFixtureNames)
    func tcpLinesMatchTcpdumpExactly(name: String) throws {
        let path = publicFixture(name)
        let ourLines = lines(try capture(["-r", path]).stdoutText)
        let theirLines = lines(try tcpdump(["-n", "-r", path]).stdoutText)
        #expect(ourLines.count == theirLines.count)
        for (mine, reference) in zip(ourLines, theirLines) where reference.contains(": Flags [") {
            #expect(mine == reference)
        }
    }

    @Test func icmpAndInterfaceLinesMatchTcpdump() throws {
        let path = publicFixture("zeek_linux_dlt_sll2.pcap")
        let ours = lines(try capture(["-r", path]).stdoutText)
        let theirs = lines(try tcpdump(["-n", "-r", path]).stdoutText)
        #expect(Array(ours.prefix(4)) == Array(theirs.prefix(4)))
    }
}
