import Foundation
import LinkConditioner
import Sandbox
import TestSupport
import Testing

/// DNS faults without root: the query reader and the answers made from it (bytes written out by hand from RFC 1035
/// §4.1), the fault syntax of flags and profiles, and the resolver file and nft rules a sandbox gets. What real
/// resolvers see is SandboxDNSFaultTests'.
@Suite struct DNSFaultTests {
    /// A query as glibc sends it: id 0xbeef, RD, one question `Api.Example.com` type A class IN; with EDNS, an OPT record.
    static func query(_ name: String = "Api.Example.com", edns: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [0xBE, 0xEF, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, edns ? 1 : 0]
        for label in name.split(separator: ".") { bytes += [UInt8(label.utf8.count)] + Array(label.utf8) }
        bytes += [0, 0, 1, 0, 1]
        if edns { bytes += [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0] }
        return bytes
    }

    func question(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSQuestion {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(DNSMessageError) in try DNSMessage.question(in: raw) } }
        return try result.get()
    }

    @Test func aQueryIsReadAndAnsweredWithItsQuestion() throws {
        let bytes = Self.query(edns: true)
        let parsed = try question(bytes)
        #expect(parsed.id == 0xBEEF && parsed.flags == 0x0100 && parsed.name == "api.example.com")
        #expect(parsed.type == 1 && parsed.questionClass == 1 && parsed.end == 12 + 17 + 4 && parsed.edns)
        let answer = bytes.withUnsafeBytes { DNSMessage.answer(to: $0, question: parsed, code: .nameError) }
        // QR, RD copied, RA; NXDOMAIN; one question, one OPT (payload 1232); the question byte for byte.
        #expect(Array(answer[0..<12]) == [0xBE, 0xEF, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 1])
        #expect(Array(answer[12..<parsed.end]) == Array(bytes[12..<parsed.end]))
        #expect(Array(answer[parsed.end...]) == [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0])
        let plain = try question(Self.query("x.test"))
        let servfail = Self.query("x.test").withUnsafeBytes { DNSMessage.answer(to: $0, question: plain, code: .serverFailure) }
        #expect(servfail.count == plain.end && servfail[3] == 0x82 && servfail[11] == 0)
        #expect(servfail.withUnsafeBytes { DNSMessage.isAnswer($0, to: 0xBEEF) && DNSMessage.responseCode($0) == 2 })
        #expect(!Self.query().withUnsafeBytes { DNSMessage.isAnswer($0, to: 0xBEEF) })
    }

    @Test func whatIsNotAPlainQuerySaysWhereAndWhy() {
        var pointer = Self.query()
        pointer[12] = 0xC0 // a compression pointer where the name starts
        var twoQuestions = Self.query()
        twoQuestions[5] = 2
        var answer = Self.query()
        answer[2] |= 0x80
        var odd = Self.query()
        odd[13] = UInt8(ascii: ".") // ".pi.Example.com": a dot inside the first label
        let cases: [([UInt8], DNSMessageError)] = [
            (Array(Self.query()[0..<11]), .truncated(part: .header, offset: 0, needed: 12, available: 11)),
            (Array(Self.query()[0..<20]), .truncated(part: .name, offset: 16, needed: 8, available: 4)),
            (Array(Self.query()[0..<31]), .truncated(part: .question, offset: 29, needed: 4, available: 2)),
            (pointer, .labelTooLong(offset: 12, length: 0xC0)),
            (twoQuestions, .questionCount(2)),
            (answer, .notAQuery),
            ([0, 1, 0x28, 0, 0, 1, 0, 0, 0, 0, 0, 0], .unsupportedOpcode(5)),
            ([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0] + Array(repeating: [63] + Array(repeating: UInt8(97), count: 63), count: 5).joined(),
             .nameTooLong(offset: 12 + 3 * 64)),
        ]
        for (bytes, expected) in cases {
            #expect(throws: expected) { try question(bytes) }
        }
        #expect((try? question(odd))?.name == "\\046pi.example.com", "a dot inside a label is no label boundary")
    }

    @Test func faultsAreWrittenAsFlagsAndMatchNamesAndTheNamesUnderThem() throws {
        let parse = { (text: String) throws(DNSFaultError) in try DNSFault.parse(text, seconds: DurationParser.seconds) }
        let nx = try parse("NXDOMAIN:Example.com.,ads.test")
        #expect(nx == DNSFault(action: .nxdomain, names: ["example.com", "ads.test"]))
        #expect(nx.matches("example.com") && nx.matches("api.example.com") && !nx.matches("badexample.com") && !nx.matches("com"))
        #expect(try parse("delay=1.5s:cdn.test") == DNSFault(action: .delay(milliseconds: 1500), names: ["cdn.test"]))
        #expect(try parse("timeout").matches("anything.at.all"))
        #expect(try parse("servfail:a.test").description == "servfail:a.test")
        let rules = [try parse("nxdomain:a.test"), try parse("timeout")]
        #expect(rules.fault(for: "x.a.test")?.action == .nxdomain && rules.fault(for: "b.test")?.action == .timeout)
        for (text, expected) in [("maybe", DNSFaultError.badAction("maybe")), ("delay=0s", .badDelay("delay=0s")),
                                 ("delay=2m", .badDelay("delay=2m")), ("nxdomain:", .badName("nxdomain:", name: "")),
                                 ("nxdomain:a..b", .badName("nxdomain:a..b", name: "a..b")),
                                 ("nxdomain:*.x.test", .badName("nxdomain:*.x.test", name: "*.x.test"))] {
            #expect(throws: expected) { try parse(text) }
        }
        #expect(DNSFaultError.badAction("x").description.contains("nxdomain, servfail, refused, timeout or delay=DURATION"))
    }

    @Test func profilesTakeDNSFaultsAndOnlyRunUsesThem() throws {
        let profile = try ProfileFile.parse(Data(#"{"name": "Bad DNS", "faults": {"dns": ["nxdomain:ads.test", "delay=300ms"]}}"#.utf8),
                                            file: "bad-dns.json")
        let faults = try #require(profile.faults)
        #expect(faults.dns == [DNSFault(action: .nxdomain, names: ["ads.test"]), DNSFault(action: .delay(milliseconds: 300))])
        #expect(!faults.needsTable && profile.problems == [])
        #expect(ProfileDescription.faults(faults) == "DNS NXDOMAIN for ads.test and names under it, 300 ms delay for every name")
        for json in [#"{"dns": "nxdomain"}"#, #"{"dns": []}"#, #"{"dns": [1]}"#, #"{"dns": ["nope"]}"#] {
            #expect(throws: ProfileFileError.self, "\(json)") {
                do { _ = try ProfileFile.parse(Data(#"{"name": "x", "faults": \#(json)}"#.utf8), file: "x.json") } catch let error as ProfileFileError {
                    #expect(error.field == "faults.dns", "\(error)")
                    throw error
                }
            }
        }
        // DNS faults alone make no nft table, for an interface or a sandbox.
        let identity = try SandboxIdentity(id: "0d0f0a", slot: 3)
        #expect(try SandboxConditioning.applyPlan(Profile(name: "x", faults: ConnectionFaults(dns: [DNSFault(action: .timeout)])),
                                                  to: identity) == [])
    }

    /// A switch (`apply --sandbox`, the live view's panel) to DNS faults is refused, not left out, where TapKit does not
    /// answer the sandbox's DNS; where it does, the forwarder reads the new faults at the next query.
    @Test func aSwitchToDNSFaultsNeedsASandboxWhoseDNSTapKitAnswers() throws {
        let faulty = Profile(name: "Faulty", faults: ConnectionFaults(dns: [DNSFault(action: .servfail)]))
        for answers in [nil, false] as [Bool?] {
            #expect(throws: SandboxDNSFaultsUnanswerableError.self) { try SandboxDNSAnswering.checkSwitch(to: faulty, answersDNS: answers) }
        }
        try SandboxDNSAnswering.checkSwitch(to: faulty, answersDNS: true)
        try SandboxDNSAnswering.checkSwitch(to: Profile(name: "Plain"), answersDNS: nil)
        #expect(SandboxDNSAnswering.isNeeded(for: faulty) && !SandboxDNSAnswering.isNeeded(for: Profile(name: "Plain")))
        #expect(SandboxDNSAnswering.isNeeded(for: Profile(name: "Slow DNS", dnsDelayMicroseconds: 200_000)))
    }

    @Test func flagsAreCheckedAndRefusedOutsideRun() throws {
        let binary = TestEnvironment.executable("condition").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build first: swift build")
        let bad = try run(binary, ["plan", "-i", "eth0", "--dns-fault", "nxdomain:a..b"])
        #expect(bad.status != 0 && bad.stderrText.contains("--dns-fault: invalid DNS fault \"nxdomain:a..b\""), "\(bad.stderrText)")
        for command in [["plan", "-i", "eth0"], ["apply", "-i", "eth0"]] {
            let result = try run(binary, command + ["--dns-fault", "servfail:api.test"])
            #expect(result.status != 0, "\(command)")
            #expect(result.stderrText.contains("DNS faults (servfail:api.test, from --dns-fault) work in sandboxes only (`condition run`, `apply --sandbox`)"),
                    "\(command): \(result.stderrText)")
        }
        let help = try run(binary, ["run", "--help"])
        #expect(help.stdoutText.contains("--dns-fault <nxdomain|servfail|refused|timeout|delay=DURATION[:NAME,...]>"), "\(help.stdoutText)")
    }

    @Test func theSandboxResolverFileNamesTheHostEndAloneAndTheForwarderIsReachedByDNAT() throws {
        let host = "nameserver 127.0.0.53\nnameserver 192.0.2.53\noptions edns0 trust-ad\nsearch example.internal\n"
        let file = SandboxResolverConfiguration(hostResolvConf: host, hostAddress: "10.213.0.1", forwarder: true)
        #expect(file.contents == "nameserver 10.213.0.1 # tapkit sandbox DNS faults, then the host's name servers\n"
                + "options edns0 trust-ad\nsearch example.internal\n")
        #expect(SandboxResolverConfiguration.nameServers(in: host) == ["127.0.0.53", "192.0.2.53"])
        #expect(SandboxResolverConfiguration.nameServers(in: "search x\n") == ["127.0.0.1"], "glibc's default")
        let identity = try SandboxIdentity(id: "0d0f0a", slot: 3)
        #expect(SandboxNetworkPlan.dnsForwarderCommands(identity, port: 40000).first
                == ["nft", "insert", "rule", "inet", identity.nftTable, "prerouting", "iifname", "\"\(identity.hostInterface)\"",
                    "ip", "daddr", identity.hostIPv4, "udp", "dport", "53", "dnat", "ip", "to", "\(identity.hostIPv4):40000"])
    }
}
