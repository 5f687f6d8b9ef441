import Foundation
import TestSupport
import Testing

/// `capture -r F --http --json` over the captures of issue 21 (Tests/Fixtures/edges, made by
/// Scripts/fixtures/make-edges.sh from a real server and curl in two namespaces, and scapy variants that move
/// segments across the connection's boundaries). Every exchange is compared field by field with the server's own
/// log: client, method, target, version, request headers and body, status as sent, reason, response version,
/// headers and decoded body.
private let edgesManifestURL = TestEnvironment.fixtures.appendingPathComponent("edges/manifest.json")

@Suite(.enabled(if: FileManager.default.fileExists(atPath: edgesManifestURL.path),
                "needs Tests/Fixtures/edges/manifest.json (Scripts/fixtures/make-edges.sh)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: TestEnvironment.executable("capture").path),
                "needs the capture binary: run swift build first"))
struct EdgeFixtureTests {
    static var captures: [String: [String: Any]] {
        guard let data = try? Data(contentsOf: edgesManifestURL),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let captures = object["captures"] as? [String: [String: Any]] else { return [:] }
        return captures
    }

    static let files: [String] = captures.keys.sorted()

    static func decode(_ file: String) throws -> (exchanges: [[String: Any]], stderr: String) {
        let path = TestEnvironment.fixtures.appendingPathComponent("edges/\(file)").path
        let result = try run(TestEnvironment.executable("capture").path, ["-r", path, "--http", "--json"])
        #expect(result.status == 0, "\(file): \(result.stderrText)")
        let exchanges = try result.stdoutText.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        return (exchanges, result.stderrText)
    }

    /// Header fields as `[[name, value]]`, for comparing a decoded list with a logged one.
    static func fields(_ value: Any?) -> [[String]] { (value as? [[String]]) ?? [] }

    @Test(arguments: files)
    func everyExchangeMatchesTheServersLog(file: String) throws {
        if file == "response-lost.pcap" {
            // Pairing by ACK numbers after a response head lost in a gap is not built yet: FIFO pairs the third
            // response with the second request.
            withKnownIssue("a response lost whole in a gap shifts the pairing of the next one") {
                try compareWithTheServersLog(file: file)
            }
        } else {
            try compareWithTheServersLog(file: file)
        }
    }

    func compareWithTheServersLog(file: String) throws {
        let capture = try #require(Self.captures[file])
        let logged = capture["exchanges"] as? [[String: Any]] ?? []
        let incomplete = Set(capture["incomplete"] as? [Int] ?? [])
        let unanswered = Set(capture["no_response"] as? [Int] ?? [])
        let (decoded, stderr) = try Self.decode(file)
        #expect(decoded.count == logged.count, "\(file): \(decoded.count) exchanges, the server logged \(logged.count)")
        #expect(!stderr.contains("mid-stream"), "\(file): \(stderr)")
        for (index, (got, want)) in zip(decoded, logged).enumerated() {
            let number = index + 1
            let request = got["request"] as? [String: Any] ?? [:]
            let wantRequest = want["request"] as? [String: Any] ?? [:]
            let wantResponse = want["response"] as? [String: Any] ?? [:]
            let what = "\(file) #\(number): \(wantRequest["start_line"] as? String ?? "?")"
            #expect(got["client"] as? String == want["client"] as? String, "\(what): client")
            #expect(got["server"] as? String == want["server"] as? String, "\(what): server")
            #expect(request["method"] as? String == wantRequest["method"] as? String, "\(what): method")
            #expect(request["uri"] as? String == wantRequest["uri"] as? String, "\(what): target")
            #expect(request["version"] as? String == wantRequest["version"] as? String, "\(what): version")
            let requestBody = request["body"] as? [String: Any] ?? [:]
            let wantRequestBody = wantRequest["body"] as? [String: Any] ?? [:]
            #expect(requestBody["sha256"] as? String == wantRequestBody["sha256"] as? String, "\(what): request body")
            if wantRequest["version"] as? String != "HTTP/0.9" {
                #expect(Self.fields(request["headers"]) == Self.fields(wantRequest["headers"]), "\(what): request headers")
            }
            if unanswered.contains(number) {
                #expect(got["response"] is NSNull, "\(what): its response was never captured")
                #expect(got["complete"] as? Bool == false, "\(what): complete")
                continue
            }
            let response = try #require(got["response"] as? [String: Any], "\(what): no response")
            if wantResponse["version"] as? String == "HTTP/0.9" {
                // No status line: no status, no reason, no header fields; the version says why.
                #expect(response["status"] is NSNull, "\(what): HTTP/0.9 status")
                #expect(response["status_text"] as? String == "", "\(what): HTTP/0.9 status text")
                #expect(response["reason"] as? String == "", "\(what): HTTP/0.9 reason")
                #expect(response["version"] as? String == "HTTP/0.9", "\(what): HTTP/0.9 version")
                #expect(Self.fields(response["headers"]).isEmpty, "\(what): HTTP/0.9 headers")
            } else {
                let status = "\(wantResponse["status"] ?? "?")"
                #expect(response["status_text"] as? String == status, "\(what): status as sent")
                #expect(response["status"] as? Int == Int(status), "\(what): status as a number")
                #expect(response["reason"] as? String == wantResponse["reason"] as? String, "\(what): reason")
                #expect(response["version"] as? String == wantResponse["version"] as? String, "\(what): version")
                #expect(Self.fields(response["headers"]) == Self.fields(wantResponse["headers"]), "\(what): headers")
            }
            let body = response["body"] as? [String: Any] ?? [:]
            let wantBody = wantResponse["body"] as? [String: Any] ?? [:]
            let warnings = got["warnings"] as? [String] ?? []
            if incomplete.contains(number) {
                let gap = capture["gap_bytes"] as? Int ?? -1
                #expect(got["complete"] as? Bool == false, "\(what): complete")
                #expect(warnings.contains("gap of \(gap) bytes in response body"), "\(what): \(warnings)")
            } else {
                #expect(body["sha256"] as? String == wantBody["sha256"] as? String, "\(what): response body")
                #expect(body["size"] as? Int == wantBody["size"] as? Int, "\(what): response body size")
                let glued = wantRequest["version"] as? String == "HTTP/0.9"
                #expect(got["complete"] as? Bool == true || glued, "\(what): incomplete: \(warnings)")
                if !glued && file != "glued-version.pcap" {
                    #expect(warnings.isEmpty, "\(what): \(warnings)")
                }
            }
        }
    }

    /// `GET /HTTP/1.1` (no space before the version) is an HTTP/0.9 request for `/HTTP/1.1`, as browsers, Zeek
    /// and the server read it; the warning says what it probably was, and the request before it keeps its pairing.
    @Test func requestLineWithoutASpaceBeforeTheVersionIsHTTP09() throws {
        let (decoded, _) = try Self.decode("glued-version.pcap")
        let glued = try #require(decoded.last)
        let request = try #require(glued["request"] as? [String: Any])
        #expect(request["uri"] as? String == "/HTTP/1.1")
        #expect(request["version"] as? String == "HTTP/0.9")
        let warnings = glued["warnings"] as? [String] ?? []
        #expect(warnings.contains { $0.hasPrefix("HTTP/0.9 request (no version)") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("no space before \"HTTP/1.1\"") }, "\(warnings)")
    }

    /// The four-tuple reused at once: after a SYN answered by RST, and after a close. Each SYN with a new ISN is
    /// a connection of its own.
    @Test(arguments: ["reuse-rst.pcap", "reuse-rst-late-rst.pcap", "reuse-fin.pcap", "reuse-fin-late-ack.pcap"])
    func reusedFourTupleStartsNewConnections(file: String) throws {
        let (decoded, stderr) = try Self.decode(file)
        let logged = try #require(Self.captures[file]?["exchanges"] as? [[String: Any]])
        #expect(decoded.count == logged.count)
        #expect(decoded.allSatisfy { $0["complete"] as? Bool == true }, "\(file): \(stderr)")
        #expect(Set(decoded.compactMap { $0["client"] as? String }).count == 1, "one four-tuple")
    }
}
