import Foundation
import Testing
import TestSupport

/// Tests/Fixtures/tunnels/manifest.json, written by Scripts/fixtures/make-tunnels.sh from the server's log.
struct TunnelManifest: Decodable, Sendable {
    struct Fixture: Decodable, Sendable {
        var file: String
        var description: String
        var packets: Int
        var exchanges: [FixtureManifest.Exchange]
    }
    var fixtures: [Fixture]

    static let folder = TestEnvironment.fixtures.appendingPathComponent("tunnels")

    static func load() throws -> TunnelManifest {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(TunnelManifest.self,
                                  from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }

    static let fileNames: [String] = (try? load().fixtures.map(\.file)) ?? []
}

private let haveCapture = FileManager.default.isExecutableFile(atPath: captureBinary)

/// Every tunnel capture (real kernel tunnels between namespaces; PPPoE wrapped by scapy) against tcpdump and against
/// what the fixture server logged.
@Suite("Tunnelled captures", .enabled(if: haveCapture, "needs the built capture binary (swift build)"))
struct TunnelConformanceTests {
    @Test("the manifest lists the tunnel kinds the issue asks for")
    func manifestCoversEveryKind() throws {
        let names = Set(try TunnelManifest.load().fixtures.map(\.file))
        for kind in ["pppoe", "pppoe-pfc", "ppp", "mpls", "gre", "erspan2", "erspan3", "vxlan", "geneve", "ipip", "sit"] {
            #expect(names.contains("tunnel-\(kind).pcap"), "no tunnel-\(kind).pcap; run Scripts/fixtures/make-tunnels.sh --vm")
        }
    }

    /// Every line, outer and inner layers, byte for byte as `tcpdump -n` prints it.
    @Test("packet lines equal tcpdump -n (and -nq, -ne) byte for byte", arguments: TunnelManifest.fileNames)
    func linesEqualTcpdump(name: String) throws {
        guard TestEnvironment.hasProgram("tcpdump") else {
            print("TunnelConformanceTests: tcpdump is not installed (Scripts/setup --test installs it); \(name) not compared")
            return
        }
        let path = TunnelManifest.folder.appendingPathComponent(name).path
        // Default, -q (tcpdump does not look inside UDP then) and -e (inner Ethernet headers, GRE/Geneve protocols).
        for flags in [[], ["-q"], ["-e"]] {
            let ours = try capture(flags + ["-r", path])
            let theirs = try tcpdump(["-n"] + flags + ["-r", path])
            #expect(ours.status == 0, "stderr: \(ours.stderrText)")
            let ourLines = lines(ours.stdoutText), theirLines = lines(theirs.stdoutText)
            #expect(ourLines.count == theirLines.count)
            for (index, (mine, reference)) in zip(ourLines, theirLines).enumerated() {
                #expect(mine == reference, "\(flags) line \(index + 1)")
            }
        }
    }

    /// `--http --json` finds each exchange the server logged, through the tunnel.
    @Test("--http --json finds the exchanges the server logged", arguments: TunnelManifest.fileNames)
    func exchangesMatchServerLog(name: String) throws {
        let fixture = try #require(try TunnelManifest.load().fixtures.first { $0.file == name })
        let path = TunnelManifest.folder.appendingPathComponent(name).path
        let result = try capture(["--http", "--json", "-r", path])
        #expect(result.status == 0, "stderr: \(result.stderrText)")
        let exchanges = try lines(result.stdoutText).map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(exchanges.count == fixture.exchanges.count)
        for (decoded, logged) in zip(exchanges, fixture.exchanges) {
            let request = try #require(decoded["request"] as? [String: Any])
            let response = try #require(decoded["response"] as? [String: Any])
            let requestBody = try #require(request["body"] as? [String: Any])
            let responseBody = try #require(response["body"] as? [String: Any])
            #expect(decoded["client"] as? String == logged.client)
            #expect(decoded["server"] as? String == logged.server)
            #expect(request["method"] as? String == logged.request.method)
            #expect(request["uri"] as? String == logged.request.uri)
            #expect(requestBody["sha256"] as? String == logged.request.body.sha256)
            #expect(response["status"] as? Int == logged.response.status)
            #expect(responseBody["sha256"] as? String == logged.response.body.sha256)
            #expect(decoded["complete"] as? Bool == true)
        }
    }

    /// The per-packet JSON names the outer layers; the packet's own fields are the inner ones.
    @Test("--json lists the outer layers in an encapsulation array",
          arguments: TunnelManifest.fileNames.filter { $0 != "tunnel-ppp.pcap" })  // PPP is the link there, not a tunnel
    func jsonHasEncapsulation(name: String) throws {
        let path = TunnelManifest.folder.appendingPathComponent(name).path
        let result = try capture(["--json", "-r", path])
        #expect(result.status == 0)
        var tunnelled = 0
        for line in lines(result.stdoutText) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["error"] == nil, "\(line)")
            guard object["transport"] as? String == "tcp" else { continue }
            let layers = try #require(object["encapsulation"] as? [[String: Any]], "\(line)")
            #expect(!layers.isEmpty)
            #expect(object["src_port"] as? Int == 80 || object["dst_port"] as? Int == 80)
            tunnelled += 1
        }
        #expect(tunnelled > 0)
    }

    /// GRE nested ten deep (built from the first packet of the real GRE capture): the line shows eight outer layers
    /// and says where it stopped; the JSON carries the error.
    @Test func nestingLimitIsVisible() throws {
        let original = try Data(contentsOf: TunnelManifest.folder.appendingPathComponent("tunnel-gre.pcap"))
        let bytes = [UInt8](original)
        let fileHeader = Array(bytes[0..<24])
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        let captured = u32(24 + 8)
        let frame = Array(bytes[40..<(40 + captured)])
        var packet = Array(frame[(14 + 24)...])
        for _ in 0..<10 {
            var outer = Array(frame[14..<(14 + 24)])
            let total = outer.count + packet.count
            outer[2] = UInt8(total >> 8)
            outer[3] = UInt8(total & 0xff)
            packet = outer + packet
        }
        let nested = Array(frame[0..<14]) + packet
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xff) } }
        let record = Array(bytes[24..<32]) + le32(nested.count) + le32(nested.count) + nested
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(fileHeader + record).write(to: URL(fileURLWithPath: path))

        let text = try capture(["-r", path])
        #expect(text.status == 0)
        let line = try #require(lines(text.stdoutText).first)
        #expect(line.hasSuffix("[|encapsulation: more than 8 nested layers, not decoded further]"), "\(line)")
        #expect(line.components(separatedBy: "GREv0").count - 1 == 4, "\(line)")  // 8 layers: 4 x (IP, GRE)
        let json = try capture(["--json", "-r", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutText.utf8)) as? [String: Any])
        #expect((object["encapsulation"] as? [Any])?.count == 8)
        #expect((object["error"] as? String)?.hasPrefix("encapsulation header malformed") == true)
    }
}
