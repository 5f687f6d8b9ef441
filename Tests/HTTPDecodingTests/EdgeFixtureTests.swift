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
        // Bytes that made no exchange (the lines after a glued version) come as `not_http` records: not exchanges.
        let exchanges = try result.stdoutText.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }.filter { $0["not_http"] == nil }
        return (exchanges, result.stderrText)
    }

    /// Header fields as `[[name, value]]`, for comparing a decoded list with a logged one.
    static func fields(_ value: Any?) -> [[String]] { (value as? [[String]]) ?? [] }

    /// A variant that lost data says which exchanges cannot be whole: `incomplete` (a gap in the response body),
    /// `no_response` (the response lost whole), `no_request` (the request lost whole), `after_gap` (the exchange
    /// right after a lost request, whose request carries the note about the gap before it).
    @Test(arguments: files)
    func everyExchangeMatchesTheServersLog(file: String) throws {
        let capture = try #require(Self.captures[file])
        let logged = capture["exchanges"] as? [[String: Any]] ?? []
        let incomplete = Set(capture["incomplete"] as? [Int] ?? [])
        let unanswered = Set(capture["no_response"] as? [Int] ?? [])
        let unasked = Set(capture["no_request"] as? [Int] ?? [])
        let afterGap = Set(capture["after_gap"] as? [Int] ?? [])
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
            if unasked.contains(number) {
                // The request was never captured: the response stands alone, saying why.
                #expect(got["request"] is NSNull, "\(what): its request was never captured")
                #expect(got["complete"] as? Bool == false, "\(what): complete")
                #expect((got["warnings"] as? [String] ?? []).contains { $0.hasPrefix("response without a captured request: the server had not received") },
                        "\(what): \(got["warnings"] ?? "")")
                let response = try #require(got["response"] as? [String: Any], "\(what): no response")
                let body = response["body"] as? [String: Any] ?? [:]
                #expect(body["sha256"] as? String == (wantResponse["body"] as? [String: Any])?["sha256"] as? String,
                        "\(what): response body")
                continue
            }
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
                let warnings = got["warnings"] as? [String] ?? []
                #expect(warnings.contains { $0.hasPrefix("no response: lost in the gap of") }, "\(what): \(warnings)")
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
                if afterGap.contains(number) {
                    #expect(warnings.count == 1 && warnings[0].hasPrefix("gap of"), "\(what): \(warnings)")
                } else if !glued && file != "glued-version.pcap" {
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

    /// Which request each response answers, after a request or a response lost whole, against tshark's own
    /// pairing of the same capture (`http.request_in`: tshark pairs a response with the latest request, which is
    /// right for a client that waits for each response, as curl here does). Responses are taken in stream order
    /// (each shown with the target of the request it answers, or none); the requests left unanswered must be the
    /// same too. (Times cannot say it: bytes released by a gap carry the time they were released.)
    @Test(arguments: ["response-lost.pcap", "request-lost.pcap", "keepalive.pcap"])
    func pairingMatchesTshark(file: String) throws {
        guard TestEnvironment.hasProgram("tshark") else {
            print("skipped the tshark comparison: tshark is not installed (Scripts/setup --test)")
            return
        }
        let path = TestEnvironment.fixtures.appendingPathComponent("edges/\(file)").path
        let fields = try run("tshark", ["-r", path, "-Y", "http", "-T", "fields", "-E", "separator=|",
                                        "-e", "frame.number", "-e", "http.request.uri", "-e", "http.request_in"])
        #expect(fields.status == 0, "tshark: \(fields.stderrText)")
        var targets: [String: String] = [:]  // request frame -> its target
        var requestOrder: [String] = []
        var theirs: [String?] = []  // per response, in order: the target of the request it answers
        for line in fields.stdoutText.split(separator: "\n") {
            let part = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            try #require(part.count == 3, "tshark: \(line)")
            if !part[1].isEmpty {
                targets[part[0]] = part[1]
                requestOrder.append(part[1])
            } else {
                theirs.append(part[2].isEmpty ? nil : targets[part[2]])
            }
        }
        let theirUnanswered = requestOrder.filter { !theirs.contains($0) }
        let (decoded, _) = try Self.decode(file)
        var ours: [String?] = []
        var ourUnanswered: [String] = []
        for exchange in decoded {
            let target = (exchange["request"] as? [String: Any])?["uri"] as? String
            if exchange["response"] is NSNull {
                if let target { ourUnanswered.append(target) }
            } else {
                ours.append(target)
            }
        }
        #expect(ours == theirs, "\(file): responses answer \(ours); tshark: \(theirs)")
        #expect(ourUnanswered == theirUnanswered, "\(file): unanswered \(ourUnanswered); tshark: \(theirUnanswered)")
        #expect(!theirs.isEmpty)
    }
}
