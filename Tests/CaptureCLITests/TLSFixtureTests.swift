import Foundation
import Testing
import TestSupport

/// `Tests/Fixtures/tls/manifest.json`, written by Scripts/fixtures/make-tls.sh from nginx's access log.
struct TLSFixtureManifest: Decodable, Sendable {
    struct Scenario: Decodable, Sendable {
        var name: String
        var pcap: String
        var keys: String
        var exchanges: [Exchange]
    }
    struct Exchange: Decodable, Sendable, Hashable {
        var method: String
        var uri: String
        var status: Int
        var bodySize: Int
        var bodySha256: String
        var serverProtocol: String
        var tlsVersion: String
        var opensslCipher: String
        var sessionReused: Bool
    }
    var scenarios: [Scenario]

    static let folder = TestEnvironment.fixtures.appendingPathComponent("tls")

    static func load() throws -> TLSFixtureManifest {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(TLSFixtureManifest.self,
                                  from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }

    static let names: [String] = (try? load().scenarios.map(\.name)) ?? []
    static func scenario(_ name: String) throws -> Scenario {
        try #require(try load().scenarios.first { $0.name == name })
    }
}

/// What `capture --http --json --keylog` printed for one capture: TLS records and exchanges.
struct DecryptedOutput {
    struct TLSLine {
        var version: String?; var suite: String?; var alpn: String?; var resumed: Bool; var hrr: Bool; var decrypted: Bool
        var earlyData: Bool
    }
    struct ExchangeLine: Hashable { var method: String; var uri: String; var status: Int; var sha256: String }
    var sessions: [TLSLine] = []
    var exchanges: [ExchangeLine] = []
    var stderr: String

    init(_ result: ProcessResult) throws {
        stderr = result.stderrText
        for line in lines(result.stdoutText) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if let tls = object["tls"] as? [String: Any] {
                sessions.append(TLSLine(version: tls["version"] as? String, suite: tls["cipher_suite"] as? String,
                                        alpn: tls["alpn"] as? String, resumed: tls["resumed"] as? Bool ?? false,
                                        hrr: tls["hello_retry_request"] as? Bool ?? false,
                                        decrypted: tls["decrypted"] as? Bool ?? false,
                                        earlyData: tls["early_data_offered"] as? Bool ?? false))
            } else if let request = object["request"] as? [String: Any], let response = object["response"] as? [String: Any],
                      let body = response["body"] as? [String: Any] {
                exchanges.append(ExchangeLine(method: request["method"] as? String ?? "", uri: request["uri"] as? String ?? "",
                                              status: response["status"] as? Int ?? 0, sha256: body["sha256"] as? String ?? ""))
            }
        }
    }
}

@Suite struct TLSFixtureTests {
    static func decrypt(_ scenario: TLSFixtureManifest.Scenario, extra: [String] = []) throws -> DecryptedOutput {
        let folder = TLSFixtureManifest.folder
        let result = try capture(["-r", folder.appendingPathComponent(scenario.pcap).path, "--http", "--json",
                                  "--keylog", folder.appendingPathComponent(scenario.keys).path] + extra)
        #expect(result.status == 0, "\(result.stderrText)")
        return try DecryptedOutput(result)
    }

    @Test func manifestLoads() throws {
        #expect(try TLSFixtureManifest.load().scenarios.count >= 19)
    }

    /// The decrypted exchanges equal what nginx logged (method, path, status, body sha256), and the TLS lines
    /// say what the handshake negotiated.
    @Test(arguments: TLSFixtureManifest.names)
    func decryptedExchangesMatchTheServerLog(name: String) throws {
        let scenario = try TLSFixtureManifest.scenario(name)
        let output = try Self.decrypt(scenario)
        #expect(!output.stderr.contains("failed authentication"), "\(output.stderr)")
        #expect(!output.sessions.isEmpty)
        #expect(output.sessions.allSatisfy { $0.decrypted }, "\(output.sessions)")
        let expectedVersion = scenario.exchanges.first?.tlsVersion == "TLSv1.3" ? "TLS 1.3" : "TLS 1.2"
        #expect(output.sessions.allSatisfy { $0.version == expectedVersion })
        let expected = scenario.exchanges.map {
            DecryptedOutput.ExchangeLine(method: $0.method, uri: $0.uri, status: $0.status, sha256: $0.bodySha256)
        }
        if scenario.exchanges.first?.serverProtocol == "HTTP/2.0" {
            #expect(output.sessions.allSatisfy { $0.alpn == "h2" })
            if output.exchanges.isEmpty {
                print("note: \(name): HTTP/2 exchanges are not decoded by this build (the h2 branch adds that); TLS facts checked only")
            } else {
                #expect(Set(output.exchanges) == Set(expected))
            }
        } else {
            #expect(output.exchanges == expected)
        }
        if name.hasSuffix("-resumed") || name == "tls13-early-data" {
            #expect(output.sessions.map(\.resumed) == [false, true])
        }
        if name == "tls13-early-data" {
            // The second connection's request travelled as 0-RTT early data.
            #expect(output.sessions.map(\.earlyData) == [false, true])
        }
        if name == "tls13-hrr" { #expect(output.sessions.first?.hrr == true) }
    }

    /// tshark decrypting with the same key log sees the same requests and statuses.
    @Test(.enabled(if: TestEnvironment.hasProgram("tshark"), "needs tshark (Scripts/setup --test installs it)"),
          arguments: TLSFixtureManifest.names)
    func tsharkSeesTheSameExchanges(name: String) throws {
        let scenario = try TLSFixtureManifest.scenario(name)
        let folder = TLSFixtureManifest.folder
        let isH2 = scenario.exchanges.first?.serverProtocol == "HTTP/2.0"
        let fields = isH2 ? ["-e", "http2.headers.path", "-e", "http2.headers.status"]
            : ["-e", "http.request.method", "-e", "http.request.uri", "-e", "http.response.code"]
        let tshark = try run("tshark", ["-n", "-r", folder.appendingPathComponent(scenario.pcap).path,
                                        "-o", "tls.keylog_file:" + folder.appendingPathComponent(scenario.keys).path,
                                        "-Y", isH2 ? "http2.type == 1" : "http", "-T", "fields", "-E", "occurrence=a",
                                        "-E", "aggregator=,"] + fields)
        #expect(tshark.status == 0, "\(tshark.stderrText)")
        let rows = lines(tshark.stdoutText).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        if isH2 {
            let paths = rows.flatMap { $0[0].split(separator: ",").map(String.init) }
            let statuses = rows.flatMap { $0.count > 1 ? $0[1].split(separator: ",").compactMap { Int($0) } : [] }
            #expect(Set(paths) == Set(scenario.exchanges.map(\.uri)))
            #expect(statuses.sorted() == scenario.exchanges.map(\.status).sorted())
            return
        }
        let ours = try Self.decrypt(scenario)
        let requests = rows.filter { !$0[0].isEmpty }.map { "\($0[0]) \($0[1])" }
        let statuses = rows.compactMap { $0.count > 2 ? Int($0[2]) : nil }
        #expect(requests == ours.exchanges.map { "\($0.method) \($0.uri)" })
        #expect(statuses == ours.exchanges.map(\.status))
    }

    /// Without the key log the TLS line still says what it can, and that no key was logged.
    @Test func withoutKeysTheTLSLineSaysSo() throws {
        let scenario = try TLSFixtureManifest.scenario("tls13-aes128gcm")
        let empty = temporaryPath(".keys")
        try Data().write(to: URL(fileURLWithPath: empty))
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let result = try capture(["-r", TLSFixtureManifest.folder.appendingPathComponent(scenario.pcap).path, "--http",
                                  "--keylog", empty])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("TLS 1.3 TLS_AES_128_GCM_SHA256 tls.test"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("(no key logged for this session)"))
        #expect(!result.stdoutText.contains("GET /"))
    }

    /// A key log with the wrong secrets: warnings with offsets, no exchanges made of garbage.
    @Test func wrongKeysWarnAndShowNoGarbage() throws {
        let scenario = try TLSFixtureManifest.scenario("tls12-aes128gcm")
        let keys = try String(contentsOf: TLSFixtureManifest.folder.appendingPathComponent(scenario.keys), encoding: .utf8)
        let wrong = keys.split(separator: "\n").map { line -> String in
            var fields = line.split(separator: " ").map(String.init)
            fields[2] = String(repeating: "5a", count: fields[2].count / 2)
            return fields.joined(separator: " ")
        }.joined(separator: "\n") + "\n"
        let path = temporaryPath(".keys")
        try wrong.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try capture(["-r", TLSFixtureManifest.folder.appendingPathComponent(scenario.pcap).path, "--http",
                                  "--json", "--keylog", path])
        #expect(result.status == 0)
        #expect(result.stderrText.contains("failed authentication"))
        #expect(result.stderrText.contains("stream offset"))
        #expect(try DecryptedOutput(result).exchanges.isEmpty)
    }

    /// A key log that does not exist is an error that names it.
    @Test func missingKeyLogIsAnError() throws {
        let result = try capture(["-r", TLSFixtureManifest.folder.appendingPathComponent("tls13-aes128gcm.pcap").path,
                                  "--http", "--keylog", "/nonexistent/keys"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("/nonexistent/keys"))
    }
}

/// pcapng Decryption Secrets Blocks: read from files editcap made, written with -w FILE.pcapng.
@Suite struct PcapngSecretsTests {
    let scenario = "tls12-cbc-sha256-mte"

    @Test(.enabled(if: TestEnvironment.hasProgram("editcap") && TestEnvironment.hasProgram("tshark"),
                   "needs editcap and tshark (Scripts/setup --test installs them)"))
    func secretsInjectedByEditcapAreUsed() throws {
        let fixture = try TLSFixtureManifest.scenario(scenario)
        let folder = TLSFixtureManifest.folder
        let injected = temporaryPath(".pcapng")
        defer { try? FileManager.default.removeItem(atPath: injected) }
        let editcap = try run("editcap", ["--inject-secrets", "tls," + folder.appendingPathComponent(fixture.keys).path,
                                          folder.appendingPathComponent(fixture.pcap).path, injected])
        try #require(editcap.status == 0, "\(editcap.stderrText)")
        let output = try DecryptedOutput(try capture(["-r", injected, "--http", "--json"]))
        #expect(output.exchanges.map(\.uri) == fixture.exchanges.map(\.uri))
        #expect(output.exchanges.map(\.sha256) == fixture.exchanges.map(\.bodySha256))
    }

    @Test func writtenPcapngOpensDecryptedInTshark() throws {
        let fixture = try TLSFixtureManifest.scenario(scenario)
        let folder = TLSFixtureManifest.folder
        let written = temporaryPath(".pcapng")
        defer { try? FileManager.default.removeItem(atPath: written) }
        let result = try capture(["-r", folder.appendingPathComponent(fixture.pcap).path, "-w", written,
                                  "--keylog", folder.appendingPathComponent(fixture.keys).path])
        try #require(result.status == 0, "\(result.stderrText)")
        // Our own reader gets the keys back without --keylog.
        let ours = try DecryptedOutput(try capture(["-r", written, "--http", "--json"]))
        #expect(ours.exchanges.map(\.uri) == fixture.exchanges.map(\.uri))
        // tshark with no -o option: the keys come from the file.
        let tshark = try run("tshark", ["-n", "-r", written, "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"])
        #expect(lines(tshark.stdoutText) == fixture.exchanges.map(\.uri), "\(tshark.stderrText)")
    }

    /// --http -w FILE.pcapng: the packets as read, the key log in one block ahead of them.
    @Test func httpViewWritesTheSameFileWithItsKeys() throws {
        let fixture = try TLSFixtureManifest.scenario(scenario)
        let folder = TLSFixtureManifest.folder
        let written = temporaryPath(".pcapng")
        defer { try? FileManager.default.removeItem(atPath: written) }
        let keys = folder.appendingPathComponent(fixture.keys).path
        let result = try capture(["-r", folder.appendingPathComponent(fixture.pcap).path, "--http", "-w", written, "--keylog", keys])
        try #require(result.status == 0, "\(result.stderrText)")
        let ours = try DecryptedOutput(try capture(["-r", written, "--http", "--json"]))
        #expect(ours.exchanges.map(\.uri) == fixture.exchanges.map(\.uri))
        let original = try capture(["-r", folder.appendingPathComponent(fixture.pcap).path, "-tt", "-n"])
        #expect(try capture(["-r", written, "-tt", "-n"]).stdoutText == original.stdoutText)
    }

    /// -C with a name ending in .pcapng: every file is pcapng and holds the keys known when it opened (a
    /// connection's keys must be in the file that has its packets, not only in the first).
    @Test(.enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public beside the checkout"))
    func rotatedFilesEachHoldTheKeys() throws {
        let fixture = try TLSFixtureManifest.scenario(scenario)
        let keys = TLSFixtureManifest.folder.appendingPathComponent(fixture.keys).path
        let folder = temporaryPath("-rotated")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A 2.2 MB capture ending in a cut record (exit 1, as tcpdump), in 1 MB files.
        _ = try capture(["-r", publicFixture("pcap2har_out-of-order.pcap"), "-w", folder + "/f.pcapng", "-C", "1", "--keylog", keys])
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == ["f.pcapng", "f.pcapng1", "f.pcapng2"])
        let keyText = try String(contentsOfFile: keys, encoding: .utf8)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            #expect(bytes.prefix(4) == [0x0A, 0x0D, 0x0D, 0x0A], "\(name) is not pcapng")
            // Section header (28 bytes), interface (32), then the secrets block before any packet.
            try #require(bytes.count > 80 && bytes[60] == 0x0A, "\(name): no secrets block before the packets")
            let secretsLength = Int(bytes[72]) | Int(bytes[73]) << 8 | Int(bytes[74]) << 16
            let text = String(decoding: bytes[76..<min(bytes.count, 76 + secretsLength)], as: UTF8.self)
            #expect(text.split(separator: "\n").allSatisfy { keyText.contains($0) } && !text.isEmpty, "\(name)")
        }
    }
}
