import Foundation
import Testing
import TestSupport

/// The part of `Tests/Fixtures/manifest.json` these tests check (schema: docs/fixtures.md).
struct FixtureManifest: Decodable, Sendable {
    struct Fixture: Decodable, Sendable {
        var file: String
        var derivedFrom: String?
        var linkType: Int
        var packets: Int
        var bytes: Int
        var sha256: String
        var exchanges: [Exchange]
    }
    struct Exchange: Decodable, Sendable {
        var client: String
        var server: String
        var request: Request
        var interim: [Interim]
        var response: Response
    }
    struct Request: Decodable, Sendable {
        var method: String
        var uri: String
        var version: String
        var headers: [[String]]
        var body: Body
    }
    struct Response: Decodable, Sendable {
        var version: String
        var status: Int
        var reason: String
        var headers: [[String]]
        var framing: String
        var body: Body
    }
    struct Interim: Decodable, Sendable {
        var status: Int
    }
    struct Body: Decodable, Sendable {
        var size: Int
        var sha256: String
        var encoding: [String]?
    }

    var schemaVersion: Int
    var fixtures: [Fixture]

    static let url = TestEnvironment.fixtures.appendingPathComponent("manifest.json")

    static func load() throws -> FixtureManifest {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(FixtureManifest.self, from: Data(contentsOf: url))
    }

    /// Fixture file names, for `@Test(arguments:)`; empty when the manifest does not load (its own test fails then).
    static let fileNames: [String] = (try? load().fixtures.map(\.file)) ?? []

    static func fixture(_ name: String) throws -> Fixture {
        try #require(try load().fixtures.first { $0.file == name }, "\(name) is not in manifest.json")
    }
}

/// Reads a classic pcap file's header and walks its records: link type and packet count, without libpcap.
private func pcapSummary(_ data: Data) throws -> (linkType: Int, packets: Int) {
    let bytes = [UInt8](data)
    try #require(bytes.count >= 24, "shorter than a pcap file header (\(bytes.count) of 24 bytes)")
    let magic = Array(bytes[0..<4])
    let littleEndian: Bool
    switch magic {
    case [0xd4, 0xc3, 0xb2, 0xa1], [0x4d, 0x3c, 0xb2, 0xa1]: littleEndian = true
    case [0xa1, 0xb2, 0xc3, 0xd4], [0xa1, 0xb2, 0x3c, 0x4d]: littleEndian = false
    default:
        Issue.record("not a classic pcap file: magic \(magic)")
        return (-1, -1)
    }
    func word(_ offset: Int) -> Int {
        let b = bytes[offset..<offset + 4].map(UInt32.init)
        let value = littleEndian ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24
                                 : b[3] | b[2] << 8 | b[1] << 16 | b[0] << 24
        return Int(value)
    }
    var offset = 24, packets = 0
    while offset < bytes.count {
        try #require(offset + 16 <= bytes.count, "record \(packets + 1) header cut at byte \(offset)")
        let captured = word(offset + 8)
        try #require(offset + 16 + captured <= bytes.count,
                     "record \(packets + 1) at byte \(offset) needs \(captured) bytes, file ends first")
        offset += 16 + captured
        packets += 1
    }
    return (word(20) & 0x0fff_ffff, packets)
}

@Suite("Committed fixtures agree with their manifest")
struct FixtureManifestTests {
    static let required = [
        "http-sample.pcap", "http-keepalive.pcap", "http-pipelined.pcap", "http-chunked-gzip.pcap",
        "http-deflate.pcap", "http-brotli.pcap", "http-zstd.pcap", "http-head-204-304.pcap",
        "http-100-continue.pcap", "http-close-delimited.pcap", "http-ipv6.pcap", "http-binary-300k.pcap",
        "http-reordered.pcap", "http-duplicated.pcap", "http-sll2.pcap", "http-rawip.pcap", "http-vlan.pcap",
    ]

    @Test("manifest.json parses and lists every required fixture")
    func manifestParses() throws {
        let manifest = try FixtureManifest.load()
        #expect(manifest.schemaVersion == 1)
        let listed = Set(manifest.fixtures.map(\.file))
        for name in Self.required {
            #expect(listed.contains(name), "manifest.json does not list \(name); run Scripts/make-fixtures")
        }
        #expect(listed.count == manifest.fixtures.count, "a fixture is listed twice")
    }

    @Test("file exists with the recorded size, link type and packet count", arguments: FixtureManifest.fileNames)
    func fileMatches(name: String) throws {
        let fixture = try FixtureManifest.fixture(name)
        let url = TestEnvironment.fixtures.appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path), "\(name) is listed but missing")
        let data = try Data(contentsOf: url)
        #expect(data.count == fixture.bytes)
        let summary = try pcapSummary(data)
        #expect(summary.linkType == fixture.linkType)
        #expect(summary.packets == fixture.packets)
        #expect(fixture.packets > 0)
    }

    @Test("tcpdump -r counts the recorded packets", .enabled(if: TestEnvironment.hasProgram("tcpdump"),
          "needs tcpdump (Scripts/setup --test installs it)"), arguments: FixtureManifest.fileNames)
    func tcpdumpCount(name: String) throws {
        let fixture = try FixtureManifest.fixture(name)
        let path = TestEnvironment.fixtures.appendingPathComponent(name).path
        let result = try run("tcpdump", ["-nq", "-r", path])
        #expect(result.status == 0, "tcpdump -r \(name): \(result.stderrText)")
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count == fixture.packets)
    }

    @Test("exchanges are well formed and obey the no-body rules", arguments: FixtureManifest.fileNames)
    func exchangesAreConsistent(name: String) throws {
        let fixture = try FixtureManifest.fixture(name)
        try #require(!fixture.exchanges.isEmpty)
        let hex = Set("0123456789abcdef")
        for exchange in fixture.exchanges {
            for body in [exchange.request.body, exchange.response.body] {
                #expect(body.sha256.count == 64 && body.sha256.allSatisfy(hex.contains))
                #expect(body.size >= 0)
                if body.size == 0 {  // sha256 of nothing
                    #expect(body.sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
                }
            }
            let status = exchange.response.status
            if exchange.request.method == "HEAD" || status == 204 || status == 304 {
                #expect(exchange.response.body.size == 0, "\(name): \(status) for \(exchange.request.method) has a body")
                #expect(exchange.response.framing == "none")
            }
            #expect(exchange.interim.allSatisfy { (100..<200).contains($0.status) })
            #expect(exchange.client.contains(":") && exchange.server.contains(":"))
        }
        if let source = fixture.derivedFrom {
            let original = try FixtureManifest.fixture(source)
            #expect(fixture.exchanges.map(\.response.body.sha256) == original.exchanges.map(\.response.body.sha256))
        }
    }
}
