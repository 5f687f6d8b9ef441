import Foundation
import Testing
import TestSupport

/// DHCP and NTP from real traffic (Tests/Fixtures/udp-services, Scripts/fixtures/make-udp-services.sh) and variants
/// derived from it (every option format and malformed option): lines, plain and -v to -vvv, equal tcpdump's whole
/// and cut at every snap length that ends inside a message; the JSON's DHCP message types
/// equal what dnsmasq logged it received and sent.
@Suite(.enabled(if: haveBinaryAndTcpdump && TestEnvironment.hasProgram("editcap"), "needs the built capture binary, tcpdump and editcap"))
struct UDPServiceConformanceTests {
    static func fixture(_ name: String) -> String {
        TestEnvironment.fixtures.appendingPathComponent("udp-services/\(name)").path
    }

    /// Ethernet + IPv4 + UDP is 42 bytes; the cuts land on the headers, inside BOOTP's fixed part, its server name
    /// and file, its options (from byte 282), inside NTP's timestamps and its key and digest.
    @Test(arguments: ["dhcp.pcap", "dhcp-variants.pcap", "ntp.pcap", "ntp-variants.pcap"])
    func cutLinesMatchTcpdump(name: String) throws {
        for snapLength in [42, 43, 44, 46, 50, 60, 62, 70, 75, 76, 80, 90, 100, 110, 120, 150, 282, 290, 300, 330, 400] {
            let cut = temporaryPath(".pcap")
            defer { try? FileManager.default.removeItem(atPath: cut) }
            let edit = try run("editcap", ["-s", "\(snapLength)", Self.fixture(name), cut])
            try #require(edit.status == 0, "editcap: \(edit.stderrText)")
            for flag in [[], ["-v"], ["-vv"], ["-vvv"], ["-v", "-x"]] {
                let ours = try capture(flag + ["-r", cut])
                #expect(ours.status == 0)
                #expect(ours.stdoutText == (try tcpdump(["-n"] + flag + ["-r", cut])).stdoutText, "\(name) -s \(snapLength) \(flag)")
            }
        }
    }

    @Test func dhcpMessageTypesAreWhatDnsmasqLogged() throws {
        // dnsmasq logs "XID DHCPTYPE(interface) ..." for every message it received or sent.
        let log = try String(contentsOfFile: Self.fixture("dnsmasq.log"), encoding: .utf8)
        let logged = log.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard words.count > 2, let type = words[2].split(separator: "(").first, type.hasPrefix("DHCP") else { return nil }
            return "\(words[1]) \(type.dropFirst(4))"
        }
        let result = try capture(["--json", "-r", Self.fixture("dhcp.pcap")])
        #expect(result.status == 0)
        var seen: [String] = []
        for line in lines(result.stdoutText) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let dhcp = try #require(object["dhcp"] as? [String: Any], "\(line)")
            let xid = try #require(dhcp["xid"] as? Int)
            let type = try #require(dhcp["message_type"] as? String)
            seen.append("\(xid) \(type)")
            if dhcp["op"] as? String == "request" { #expect(dhcp["client_mac"] is String) }
        }
        #expect(logged.count >= 10)
        #expect(seen.sorted() == logged.sorted())
    }
}
