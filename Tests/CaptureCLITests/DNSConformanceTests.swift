import Foundation
import Testing
import TestSupport

let dnsFixture = TestEnvironment.fixtures.appendingPathComponent("dns/dns.pcap").path

/// DNS lines byte for byte against tcpdump: the project's own capture of real dnsmasq traffic (UDP and TCP,
/// IPv4 and IPv6, A/AAAA/CNAME/MX/TXT/SRV/NS/SOA/HTTPS/SVCB, EDNS, NXDOMAIN, REFUSED, a truncated answer) and
/// the public captures' DNS, whole and cut at many snap lengths.
@Suite(.enabled(if: haveBinaryAndTcpdump, "needs the built capture binary and tcpdump"))
struct DNSConformanceTests {
    @Test func dnsFixtureMatchesTcpdump() throws {
        let ours = lines(try capture(["-r", dnsFixture]).stdoutText)
        let theirs = lines(try tcpdump(["-n", "-r", dnsFixture]).stdoutText)
        #expect(ours == theirs)
        #expect(theirs.filter { $0.contains("? ") }.count >= 20)
    }

    @Test(.enabled(if: TestEnvironment.hasProgram("editcap"), "needs editcap"),
          arguments: [40, 50, 54, 58, 62, 66, 70, 80, 90, 100, 110, 120, 150])
    func cutDNSMatchesTcpdump(snapLength: Int) throws {
        var sources = [dnsFixture]
        if TestEnvironment.publicFixtures != nil { sources += [publicFixture("pcap2har_github.pcap"), publicFixture("pcap2har_http.pcap")] }
        for source in sources {
            let cut = temporaryPath(".pcap")
            defer { try? FileManager.default.removeItem(atPath: cut) }
            let edit = try run("editcap", ["-s", "\(snapLength)", source, cut])
            try #require(edit.status == 0, "editcap: \(edit.stderrText)")
            for flags in [[], ["-x"]] {
                #expect(lines(try capture(flags + ["-r", cut]).stdoutText) == lines(try tcpdump(["-n"] + flags + ["-r", cut]).stdoutText),
                        "\(source) -s \(snapLength) \(flags)")
            }
        }
    }

    /// Every line of every capture, not just TCP ones; the only lines allowed to differ are named here.
    @Test(.enabled(if: haveFixtures, "needs ../shared/fixtures/public"))
    func everyLineMatchesTcpdumpButKnownGaps() throws {
        var compared = 0, differing: [String] = []
        for path in conformanceFixturePaths {
            let ours = lines(try capture(["-r", path]).stdoutText)
            let theirs = lines(try tcpdump(["-n", "-r", path]).stdoutText)
            #expect(ours.count == theirs.count, "\(path)")
            for (mine, reference) in zip(ours, theirs) {
                compared += 1
                if mine != reference { differing.append(reference) }
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(5))")
        print("tcpdump -n: \(compared - differing.count) of \(compared) lines identical over \(conformanceFixturePaths.count) captures")
    }
}

/// `--json` DNS fields against tshark's dissector on the same capture: id, question name, A and AAAA answers.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary) && TestEnvironment.hasProgram("tshark"),
                "needs the built capture binary and tshark"))
struct DNSJSONTests {
    @Test func fieldsAgreeWithTshark() throws {
        let fields = try run("/usr/bin/env", ["tshark", "-r", dnsFixture, "-T", "fields", "-e", "frame.number", "-e", "dns.qry.name",
                                              "-e", "dns.a", "-e", "dns.aaaa", "-e", "dns.id"])
        var expected: [Int: (name: String, addresses: [String], id: Int)] = [:]
        for line in lines(fields.stdoutText) {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 5, let number = Int(columns[0]), !columns[1].isEmpty,
                  let id = Int(columns[4].dropFirst(2), radix: 16) else { continue }
            let addresses = (columns[2].split(separator: ",") + columns[3].split(separator: ",")).map(String.init)
            expected[number] = (columns[1], addresses, id)
        }
        #expect(expected.count >= 30)
        var compared = 0
        for line in lines(try capture(["--json", "-r", dnsFixture]).stdoutText) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard let index = object["index"] as? Int, let reference = expected[index] else { continue }
            let dns = try #require(object["dns"] as? [String: Any], "packet \(index) has no dns object")
            #expect(dns["id"] as? Int == reference.id)
            let questions = try #require(dns["questions"] as? [[String: Any]])
            #expect(questions.first?["name"] as? String == reference.name + ".")
            let answers = (dns["answers"] as? [[String: Any]]) ?? []
            let addresses = answers.filter { ["A", "AAAA"].contains($0["type"] as? String ?? "") }.compactMap { $0["data"] as? String }
            #expect(Set(addresses) == Set(reference.addresses), "packet \(index)")
            compared += 1
        }
        #expect(compared == expected.count)
    }
}
