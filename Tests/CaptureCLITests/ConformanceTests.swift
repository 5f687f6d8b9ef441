import Foundation
import Testing
import TestSupport

/// `capture` against tcpdump on every public fixture: no crash, same packet count, and for TCP and UDP over
/// IPv4/IPv6 the same addresses, ports and lengths as `tcpdump -nq`.
@Suite(.enabled(if: haveFixtures, "needs the built capture binary, tcpdump and ../shared/fixtures/public"))
struct ConformanceTests {
    @Test(arguments: conformanceFixturePaths)
    func quietLinesAgreeWithTcpdump(path: String) throws {
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
    @Test(arguments: conformanceFixturePaths)
    func tcpLinesMatchTcpdumpExactly(path: String) throws {
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

/// Packets cut by the snap length (made from real fixtures with editcap -s) print as tcpdump prints them:
/// every line kept, truncation marked with tcpdump's `[|proto]` markers, -v -x dumps included.
@Suite(.enabled(if: haveFixtures && TestEnvironment.hasProgram("editcap"), "needs fixtures, tcpdump and editcap"))
struct SnapLengthConformanceTests {
    static let cases: [(String, Int)] = ["zeek_http_get.pcap", "zeek_http_post.pcap", "pcap2har_fhs.pcap",
                                         "httpflow_100continue.pcap", "zeek_http-qinq-0.pcap"]
        .flatMap { name in [30, 34, 36, 40, 54, 60, 70, 90, 200].map { (name, $0) } }

    @Test(arguments: cases)
    func cutPacketsMatchTcpdump(name: String, snapLength: Int) throws {
        let cut = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: cut) }
        let edit = try run("editcap", ["-s", "\(snapLength)", publicFixture(name), cut])
        try #require(edit.status == 0, "editcap: \(edit.stderrText)")
        let ours = try capture(["-r", cut])
        #expect(ours.status == 0)
        let theirs = try tcpdump(["-n", "-r", cut])
        #expect(lines(ours.stdoutText) == lines(theirs.stdoutText))
        // Where tcpdump's printer runs out of captured bytes, its -x dump shows the whole frame, link header too.
        #expect(try capture(["-v", "-x", "-r", cut]).stdoutText == (try tcpdump(["-n", "-v", "-x", "-r", cut])).stdoutText)
        let json = try capture(["--json", "-r", cut])
        var truncated = 0
        for line in lines(json.stdoutText) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let captured = try #require(object["captured_length"] as? Int)
            let original = try #require(object["original_length"] as? Int)
            #expect(captured <= snapLength)
            #expect(object["truncated"] as? Bool == (captured < original))
            if captured < original { truncated += 1 }
        }
        #expect(truncated > 0)
    }
}

/// Frames cut inside or right after the link header, on every link type the public fixtures have (Ethernet with
/// 802.1Q and QinQ tags, Linux cooked v1 and v2, NFLOG, Ethernet loopback) and cut IPv6 extension headers and
/// ICMPv6 messages: tcpdump's marker (`[|ether]`, `[|vlan]`, `[|sll]`, `[|nflog]`, `[|arp]`, `[|ip]`,
/// `[|dstopt]`, `[|icmp6]`...), what -e prints of a cut link header, and where -x starts its dump.
@Suite(.enabled(if: haveFixtures && TestEnvironment.hasProgram("editcap"), "needs fixtures, tcpdump and editcap"))
struct CutLinkHeaderConformanceTests {
    static let cases: [(String, Int)] = ["zeek_http_get.pcap", "zeek_http-qinq-0.pcap", "zeek_http-vlan-0.pcap",
                                         "zeek_linuxsll-arp.pcap", "zeek_linux_dlt_sll2.pcap", "zeek_nflog-http.pcap",
                                         "tcpdump_loopback.pcap"]
        .flatMap { name in [2, 6, 10, 14, 15, 16, 18, 20, 24, 30, 40, 62, 100].map { (name, $0) } }
        + [("zeek_ipv6-http-atomic-frag.pcap", 54)]

    @Test(arguments: cases)
    func cutFramesMatchTcpdump(name: String, snapLength: Int) throws {
        let cut = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: cut) }
        let edit = try run("editcap", ["-s", "\(snapLength)", publicFixture(name), cut])
        try #require(edit.status == 0, "editcap: \(edit.stderrText)")
        for flags in [[], ["-v"], ["-e"], ["-x"], ["-e", "-x"]] {
            let ours = try capture(flags + ["-r", cut])
            #expect(ours.status == 0)
            #expect(ours.stdoutText == (try tcpdump(["-n"] + flags + ["-r", cut])).stdoutText, "\(name) -s \(snapLength) \(flags)")
        }
    }
}
