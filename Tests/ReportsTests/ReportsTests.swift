import BodyDecoding
import FlowReassembly
import Foundation
import HTTPModel
import PacketDecoding
@testable import Reports
import Testing

/// The exchange from the issue's example line.
func exampleExchange(request requestBody: [UInt8] = [], responseBody: [UInt8] = Array("{\"items\":[1,2],\"next\":null}".utf8),
                     contentType: String = "application/json", client: Endpoint? = nil) -> HTTPExchange {
    let start = Timestamp(seconds: 1_700_000_000 + 14 * 3600 + 2 * 60 + 3 - 1_700_000_000 % 86400, nanoseconds: 123_000_000)
    func at(_ ms: Int) -> Timestamp {
        var t = start
        t.nanoseconds += Int32(ms * 1_000_000)
        return t
    }
    let requestHeaders = HTTPHeaders([("Host", "example.com"), ("Accept-Encoding", "gzip"), ("User-Agent", "curl/8.5.0")])
    let request = HTTPRequest(method: "GET", uri: "/v1/items?page=2&q=a%20b", version: "HTTP/1.1", headers: requestHeaders,
                              body: HTTPBody(size: requestBody.count, digest: SHA256.digest(of: requestBody), encoding: [],
                                             transferSize: requestBody.count, kept: requestBody, keptIsPartial: false,
                                             contentType: requestBody.isEmpty ? nil : "application/x-www-form-urlencoded"),
                              headSize: 312 - requestBody.count, start: start, end: at(1))
    let responseHeaders = HTTPHeaders([("Content-Type", contentType), ("Content-Encoding", "gzip")])
    let response = HTTPResponse(status: 200, reason: "OK", version: "HTTP/1.1", headers: responseHeaders,
                                body: HTTPBody(size: responseBody.count, digest: SHA256.digest(of: responseBody),
                                               encoding: ["gzip"], transferSize: 4000, kept: responseBody,
                                               keptIsPartial: false, contentType: contentType),
                                headSize: 100, interim: [], start: at(150), end: at(183))
    return HTTPExchange(connection: ConnectionID(3),
                        client: client ?? Endpoint(address: .v4(0x0a00_0005), port: 51234),
                        server: Endpoint(address: .v4(0x5db8_d822), port: 80),
                        request: request, response: response, complete: true, warnings: [], upgrade: nil)
}

@Suite struct TextViewTests {
    func renderer(color: Bool = false, verbose: Bool = false) -> HTTPTextRenderer {
        var options = HTTPTextRenderer.Options()
        options.utc = true
        options.color = color
        options.verbose = verbose
        return HTTPTextRenderer(options: options)
    }

    @Test func defaultLineMatchesTheIssueExample() {
        let line = renderer().render(exampleExchange())
        #expect(line == "14:02:03.123 10.0.0.5:51234 → 93.184.216.34:80  GET example.com/v1/items?page=2&q=a%20b → 200 OK  183 ms  312 B → 4.1 KB (gzip)\n")
    }

    @Test func colourOnlyWhenAsked() {
        #expect(!renderer().render(exampleExchange()).contains("\u{1B}["))
        #expect(renderer(color: true).render(exampleExchange()).contains("\u{1B}[32m200 OK"))
    }

    @Test func colorChoiceHonoursNoColor() {
        #expect(ColorChoice.auto.resolve(isTerminal: true, environment: [:]))
        #expect(!ColorChoice.auto.resolve(isTerminal: true, environment: ["NO_COLOR": "1"]))
        #expect(!ColorChoice.auto.resolve(isTerminal: false, environment: [:]))
        #expect(ColorChoice.always.resolve(isTerminal: false, environment: ["NO_COLOR": "1"]))
        #expect(!ColorChoice.never.resolve(isTerminal: true, environment: [:]))
    }

    @Test func verboseShowsHeadersAndPrettyJSON() {
        let text = renderer(verbose: true).render(exampleExchange())
        #expect(text.contains("  > Host: example.com\n"))
        #expect(text.contains("  < Content-Type: application/json\n"))
        #expect(text.contains("    {\n      \"items\": [\n        1,\n        2\n      ],\n      \"next\": null\n    }\n"))
    }

    @Test func binaryBodiesAreSummarisedNeverDumped() {
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x1b, 0x5b, 0x32, 0x4a]
        let text = renderer(verbose: true).render(exampleExchange(responseBody: png, contentType: "image/png"))
        #expect(text.contains("[binary body: image/png, 16 B; not shown]"))
        #expect(!text.contains("\u{1B}"))
    }

    @Test func longBodiesAreCutWithANote() {
        let body = Array(String(repeating: "line of text\n", count: 1000).utf8)
        var options = HTTPTextRenderer.Options()
        options.verbose = true
        options.bodyLimit = 100
        let text = HTTPTextRenderer(options: options).render(exampleExchange(responseBody: body, contentType: "text/plain"))
        #expect(text.contains("[\(body.count - 100) more bytes not shown; --body-limit shows more]"))
    }

    @Test func textInItsCharset() {
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xe9]  // "café" in ISO-8859-1
        let body = HTTPBody(size: 4, digest: nil, encoding: [], transferSize: 4, kept: latin1, keptIsPartial: false,
                            contentType: "text/plain; charset=ISO-8859-1")
        #expect(BodyPresentation.of(body, limit: 100) == .text("café", isJSON: false))
    }

    @Test func noResponseAndWarningsAreShown() {
        var exchange = exampleExchange()
        exchange.response = nil
        exchange.complete = false
        exchange.warnings = [.noResponseBeforeEnd]
        let text = renderer().render(exchange)
        #expect(text.contains("→ no response"))
        #expect(text.contains("[incomplete]"))
        #expect(text.contains("    ! no response before the connection ended\n"))
    }

    @Test func sizesAndDurations() {
        #expect(ExchangeText.size(312) == "312 B")
        #expect(ExchangeText.size(4100) == "4.1 KB")
        #expect(ExchangeText.size(300_000) == "300.0 KB")
        #expect(ExchangeText.size(2_500_000) == "2.5 MB")
        #expect(ExchangeText.duration(0.183) == "183 ms")
        #expect(ExchangeText.duration(0.0034) == "3.4 ms")
        #expect(ExchangeText.duration(12.34) == "12.3 s")
    }
}

@Suite struct JSONOutputTests {
    @Test func fieldNamesAreTheContract() throws {
        let line = HTTPJSONRenderer.line(for: exampleExchange())
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["ts", "client", "server", "request", "response", "timing", "complete", "warnings"])
        let request = try #require(object["request"] as? [String: Any])
        #expect(Set(request.keys) == ["method", "uri", "version", "headers", "body"])
        #expect(Set((request["body"] as? [String: Any])?.keys ?? [:].keys) == ["size", "sha256"])
        let response = try #require(object["response"] as? [String: Any])
        #expect(Set(response.keys) == ["status", "status_text", "reason", "version", "headers", "body"])
        #expect(Set((response["body"] as? [String: Any])?.keys ?? [:].keys) == ["size", "sha256", "encoding"])
        let timing = try #require(object["timing"] as? [String: Any])
        #expect(Set(timing.keys) == ["request_start", "response_start", "response_end"])
        #expect(object["client"] as? String == "10.0.0.5:51234")
        #expect(request["headers"] as? [[String]] == [["Host", "example.com"], ["Accept-Encoding", "gzip"], ["User-Agent", "curl/8.5.0"]])
        #expect((response["body"] as? [String: Any])?["encoding"] as? [String] == ["gzip"])
        let ts = try #require(object["ts"] as? Double)
        #expect(abs(ts - exampleExchange().time.secondsSinceEpoch) < 1e-6)
    }

    @Test func requestWithoutResponseHasNullResponse() throws {
        var exchange = exampleExchange(client: Endpoint(address: .v6(high: 0x2001_0db8_0000_0000, low: 1), port: 443))
        exchange.response = nil
        exchange.complete = false
        exchange.warnings = [.invalidHeaderName("quote \" and \u{1} control")]
        let line = HTTPJSONRenderer.line(for: exchange)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["response"] is NSNull)
        #expect(object["client"] as? String == "[2001:db8::1]:443")
        #expect(object["complete"] as? Bool == false)
        #expect(object["warnings"] as? [String] == ["invalid header name \"quote \" and \u{1} control\""])
        #expect((object["timing"] as? [String: Any])?["response_end"] is NSNull)
    }
}

@Suite struct FilterTests {
    @Test(arguments: [("404", 404...404), ("4xx", 400...499), ("200-299", 200...299), ("5XX", 500...599)])
    func statusPatterns(text: String, range: ClosedRange<Int>) throws {
        #expect(try ExchangeFilter.StatusPattern(parsing: text).range == range)
    }

    @Test(arguments: ["abc", "6xx", "299-200", "99", ""])
    func badStatusPatternsSayWhatIsExpected(text: String) {
        #expect(throws: ExchangeFilter.FilterError.self) { try ExchangeFilter.statusPatterns(text) }
    }

    @Test func filtersCombine() throws {
        let exchange = exampleExchange()
        var filter = ExchangeFilter()
        #expect(filter.matches(exchange))
        filter.hosts = ["*.com"]
        filter.paths = ["/v1/*"]
        filter.methods = ["get"]
        filter.statuses = try ExchangeFilter.statusPatterns("200-299,404")
        #expect(filter.matches(exchange))
        filter.paths = ["/v2/*"]
        #expect(!filter.matches(exchange))
        filter.paths = ["/v1/items"]  // the query string is not part of the path
        #expect(filter.matches(exchange))
        filter.statuses = try ExchangeFilter.statusPatterns("4xx")
        #expect(!filter.matches(exchange))
        var byAddress = ExchangeFilter()
        byAddress.hosts = ["93.184.216.*"]
        #expect(byAddress.matches(exchange))
    }
}

@Suite struct HARTests {
    @Test func aHARFileThatCannotBeWrittenSaysSo() throws {
        let writer = try HARWriter(path: "/dev/full", creatorVersion: "test")
        writer.add(exampleExchange())
        let error = #expect(throws: HARWriter.WriteError.self) { try writer.finish() }
        #expect(error?.description == "cannot write /dev/full: No space left on device")
    }

    @Test func harIsValidAndComplete() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try HARWriter(path: path, creatorVersion: "test")
        writer.add(exampleExchange())
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]
        writer.add(exampleExchange(request: Array("a=1&b=two+words".utf8), responseBody: png, contentType: "image/png"))
        var unanswered = exampleExchange()
        unanswered.response = nil
        unanswered.complete = false
        writer.add(unanswered)
        var unasked = exampleExchange()
        unasked.request = nil
        writer.add(unasked)
        try writer.finish()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let entries = try #require(log["entries"] as? [[String: Any]])
        try #require(entries.count == 4)
        let first = entries[0]
        #expect(first["startedDateTime"] as? String == ExchangeText.iso8601(exampleExchange().time))
        #expect(first["serverIPAddress"] as? String == "93.184.216.34")
        #expect(first["connection"] as? String == "3")
        let request = try #require(first["request"] as? [String: Any])
        #expect(request["url"] as? String == "http://example.com/v1/items?page=2&q=a%20b")
        let query = try #require(request["queryString"] as? [[String: String]])
        #expect(query == [["name": "page", "value": "2"], ["name": "q", "value": "a b"]])
        let timings = try #require(first["timings"] as? [String: Any])
        #expect(timings["send"] as? Double == 1 && timings["wait"] as? Double == 149 && timings["receive"] as? Double == 33)
        #expect(first["time"] as? Double == 183)
        let content = try #require((first["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect(content["mimeType"] as? String == "application/json")
        #expect(content["text"] as? String == "{\"items\":[1,2],\"next\":null}")
        let binary = try #require((entries[1]["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect(binary["encoding"] as? String == "base64")
        #expect(binary["text"] as? String == Data(png).base64EncodedString())
        let postData = try #require((entries[1]["request"] as? [String: Any])?["postData"] as? [String: Any])
        #expect(postData["params"] as? [[String: String]] == [["name": "a", "value": "1"], ["name": "b", "value": "two words"]])
        #expect((entries[2]["response"] as? [String: Any])?["status"] as? Int == 0)
        // A response whose request was not seen: nothing invented for the request HAR requires.
        let unseen = try #require(entries[3]["request"] as? [String: Any])
        #expect(unseen["method"] as? String == "" && unseen["httpVersion"] as? String == "")
        #expect(unseen["comment"] as? String == "no request captured")
        #expect((entries[3]["response"] as? [String: Any])?["status"] as? Int == 200)
    }
}

/// Time printing at the edges of what a capture file can hold (issue 9).
@Suite struct ExtremeTimePrintingTests {
    @Test func packetTimesPrintExactlyIncludingBefore1970() {
        var output = TextOutput()
        output.append(seconds: Timestamp(seconds: -1, nanoseconds: 750_000_000))
        output.append(" ")
        output.append(seconds: Timestamp(seconds: .min, nanoseconds: 0))
        output.append(" ")
        output.append(seconds: Timestamp(seconds: .max, nanoseconds: 999_999_999))
        output.append(" ")
        output.append(seconds: Timestamp(seconds: 1_700_000_000, nanoseconds: 5))
        #expect(String(decoding: output.bytes, as: UTF8.self)
                == "-0.250000000 -9223372036854775808.000000000 9223372036854775807.999999999 1700000000.000000005")
    }

    @Test func jsonSecondsNeverTrap() {
        var json = TextOutput(fileDescriptor: -1)
        json.seconds(9.2e18)
        json.append(" ")
        json.seconds(-9.3e18)
        json.append(" ")
        json.seconds(.nan)
        json.append(" ")
        json.milliseconds(.infinity)
        json.append(" ")
        json.seconds(-0.25)
        #expect(json.text == "9200000000000000000.000000 -9200000000000000000.000000 null null -0.250000")
    }
}

/// Issue 21: every output shows the status as sent, and nothing that was not on the wire: a code that is not a
/// number (`2XX`) has no number, and an HTTP/0.9 answer (no status line) has no status and no reason.
@Suite struct StatusAsSentTests {
    static func withStatus(_ status: Int?, text: String, reason: String, version: String = "HTTP/1.1") -> HTTPExchange {
        var exchange = exampleExchange()
        exchange.response?.status = status
        exchange.response?.statusText = text
        exchange.response?.reason = reason
        exchange.response?.version = version
        return exchange
    }

    static let nonNumeric = withStatus(nil, text: "2XX", reason: "Odd Status")
    static let http09 = withStatus(nil, text: "", reason: "", version: "HTTP/0.9")

    @Test func jsonHasANumberOnlyWhenOneWasSent() throws {
        for (exchange, text, version) in [(Self.nonNumeric, "2XX", "HTTP/1.1"), (Self.http09, "", "HTTP/0.9")] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(HTTPJSONRenderer.line(for: exchange).utf8))
                                      as? [String: Any])
            let response = try #require(object["response"] as? [String: Any])
            #expect(response["status"] is NSNull)
            #expect(response["status_text"] as? String == text)
            #expect(response["version"] as? String == version)
            #expect(response["reason"] as? String == exchange.response?.reason)
        }
        let plain = try #require(try JSONSerialization.jsonObject(with: Data(HTTPJSONRenderer.line(for: exampleExchange()).utf8))
                                 as? [String: Any])
        #expect((plain["response"] as? [String: Any])?["status"] as? Int == 200)
        #expect((plain["response"] as? [String: Any])?["status_text"] as? String == "200")
    }

    @Test func textShowsTheCodeAsSentOrSaysThereWasNone() {
        var options = HTTPTextRenderer.Options()
        options.utc = true
        options.verbose = true
        let renderer = HTTPTextRenderer(options: options)
        let odd = renderer.render(Self.nonNumeric)
        #expect(odd.contains("→ 2XX Odd Status"))
        #expect(odd.contains("< HTTP/1.1 2XX Odd Status"))
        let old = renderer.render(Self.http09)
        #expect(old.contains("→ HTTP/0.9 (no status line)"))
        #expect(old.contains("< (HTTP/0.9: no status line, no header fields)"))
        #expect(!old.contains("200") && !odd.contains("200"))
    }

    @Test func harWritesZeroAndSaysWhy() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try HARWriter(path: path, creatorVersion: "test")
        writer.add(Self.nonNumeric)
        writer.add(Self.http09)
        try writer.finish()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
                                  as? [String: Any])
        let entries = try #require((object["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let responses = entries.compactMap { $0["response"] as? [String: Any] }
        try #require(responses.count == 2)
        #expect(responses.allSatisfy { $0["status"] as? Int == 0 })
        #expect(responses[0]["statusText"] as? String == "Odd Status")
        #expect((responses[0]["comment"] as? String)?.contains("\"2XX\" is not a number") == true)
        #expect(responses[1]["statusText"] as? String == "")
        #expect(responses[1]["httpVersion"] as? String == "HTTP/0.9")
        #expect((responses[1]["comment"] as? String)?.contains("no status line") == true)
    }

    @Test func statisticsCountThemApartFromNumericCodes() {
        var stats = HTTPStatistics()
        stats.add(exampleExchange())
        stats.add(Self.nonNumeric)
        stats.add(Self.http09)
        #expect(stats.http1StatusCodes == [200: 1])
        #expect(stats.http1NonNumericStatuses == ["2XX": 1, "(none: HTTP/0.9)": 1])
    }

    @Test func statusFiltersNeverMatchAMissingNumber() throws {
        var filter = ExchangeFilter()
        filter.statuses = [try ExchangeFilter.StatusPattern(parsing: "2xx")]
        #expect(filter.matches(exampleExchange()))
        #expect(!filter.matches(Self.nonNumeric))
        #expect(!filter.matches(Self.http09))
    }
}
