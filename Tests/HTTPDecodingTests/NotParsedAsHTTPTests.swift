import FlowReassembly
import Foundation
@testable import HTTPDecoding
import HTTPModel
import TestSupport
import Testing

/// Issue 36: bytes that reach the HTTP/1.x decoder but make no exchange are never dropped unmentioned: a request
/// line cut short is shown as an incomplete exchange, other bytes in one notice per connection with the counts.
@Suite struct NotParsedAsHTTPTests {
    static func notices(_ events: [HTTPEvent]) -> [ConnectionNotice.Kind] {
        events.compactMap { if case .notice(let notice) = $0 { notice.kind } else { nil } }
    }

    static func exchanges(_ events: [HTTPEvent]) -> [HTTPExchange] {
        events.compactMap { if case .exchange(let exchange) = $0 { exchange } else { nil } }
    }

    @Test(arguments: [1, 2, 3, 7, Int.max])
    func aRequestLineCutShortByAResetIsAnIncompleteExchange(pieceSize: Int) throws {
        var c = Conversation()
        c.client("GET /")
        c.server("<html>hi</html>")
        c.steps.append(.clientEnd(.reset))
        c.steps.append(.serverEnd(.reset))
        let events = c.run(pieceSize: pieceSize)
        let exchange = try #require(Self.exchanges(events).first)
        #expect(Self.exchanges(events).count == 1)
        #expect(exchange.request?.method == "GET")
        #expect(exchange.request?.uri == "/")
        #expect(exchange.request?.version == "")
        #expect(exchange.response == nil)
        #expect(!exchange.complete)
        #expect(exchange.warnings.contains(.requestLineCutShort(bytes: 5, .reset)), "\(exchange.warnings)")
        #expect(exchange.warnings.contains(.bytesNotParsed(.response, bytes: 15)), "\(exchange.warnings)")
        #expect(Self.notices(events).isEmpty, "the server's bytes are counted on the exchange, not again")
    }

    @Test func theVersionIsKeptAsFarAsItCame() throws {
        var c = Conversation()
        c.client("POST /form HTT")
        c.steps.append(.clientEnd(.captureEnded))
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.request?.method == "POST")
        #expect(exchange.request?.uri == "/form")
        #expect(exchange.request?.version == "HTT")
        #expect(exchange.warnings.contains(.requestLineCutShort(bytes: 14, .captureEnded)))
    }

    @Test func bytesThatAreNotHTTPGetANoticeWithTheCounts() {
        var c = Conversation()
        c.client([0x00, 0x01] + Array("junk 1234\n".utf8))
        c.server("not http either\n")
        let events = c.run()
        #expect(Self.exchanges(events).isEmpty)
        #expect(Self.notices(events) == [.notParsedAsHTTP(clientBytes: 12, serverBytes: 16)])
    }

    @Test func aWordWithoutASpaceIsNotARequestLine() {
        var c = Conversation()
        c.client("SSH-2.0-OpenSSH_9.2")
        let events = c.run()
        #expect(Self.exchanges(events).isEmpty)
        #expect(Self.notices(events) == [.notParsedAsHTTP(clientBytes: 19, serverBytes: 0)])
    }

    @Test(arguments: [1, 3, Int.max])
    func junkAfterAWholeExchangeIsCounted(pieceSize: Int) {
        var c = Conversation()
        c.client("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        c.client([0x00] + Array("junk 12\r\n".utf8))
        let events = c.run(pieceSize: pieceSize)
        #expect(Self.exchanges(events).map(\.complete) == [true])
        #expect(Self.notices(events) == [.notParsedAsHTTP(clientBytes: 10, serverBytes: 0)])
    }

    @Test func aResyncFindingTheNextRequestCountsOnlyWhatItSkipped() {
        var c = Conversation()
        c.client("\u{1}junk\r\nGET /b HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 204 No Content\r\n\r\n")
        let events = c.run()
        #expect(Self.exchanges(events).map { $0.request?.uri } == ["/b"])
        #expect(Self.notices(events) == [.notParsedAsHTTP(clientBytes: 7, serverBytes: 0)])
    }

    @Test func wholeExchangesAloneGiveNoNotice() {
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(Self.notices(c.run()).isEmpty)
    }
}

/// The same through the real binary, over captures made by Scripts/fixtures/make-not-http.py: the text view and
/// `--json` both show them.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: TestEnvironment.executable("capture").path),
                "needs the capture binary: run swift build first"))
struct NotParsedAsHTTPFixtureTests {
    static func capture(_ file: String, _ arguments: [String]) throws -> String {
        let path = TestEnvironment.fixtures.appendingPathComponent("not-http/\(file)").path
        let result = try run(TestEnvironment.executable("capture").path, ["-r", path, "--http"] + arguments)
        #expect(result.status == 0, "\(file): \(result.stderrText)")
        return result.stdoutText
    }

    @Test func theCutRequestLineIsShownInTextAndJSON() throws {
        let text = try Self.capture("request-line-reset.pcap", [])
        #expect(text.contains("10.213.0.2:40001 → 10.213.0.1:80  GET 10.213.0.1:80/ → no response"), "\(text)")
        #expect(text.contains("! request line cut short (5 bytes, no line end) when the connection was reset"))
        #expect(text.contains("! 15 bytes from the server not parsed as HTTP"))
        let json = try Self.capture("request-line-reset.pcap", ["--json"])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let request = try #require(record["request"] as? [String: Any])
        #expect(request["method"] as? String == "GET" && request["uri"] as? String == "/")
        #expect(record["complete"] as? Bool == false)
    }

    @Test func notHTTPIsANoticeInTextAndARecordInJSON() throws {
        let text = try Self.capture("not-http.pcap", [])
        #expect(text.contains("10.213.0.2:40002 → 10.213.0.1:80  12 bytes not parsed as HTTP (12 from the client, 0 from the server)"), "\(text)")
        let json = try Self.capture("not-http.pcap", ["--json"])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let counts = try #require(record["not_http"] as? [String: Int])
        #expect(counts == ["client_bytes": 12, "server_bytes": 0])
        let after = try Self.capture("junk-after-exchange.pcap", ["--json"]).split(separator: "\n")
        #expect(after.count == 2)
        #expect(after.last?.contains("\"not_http\":{\"client_bytes\":10,\"server_bytes\":0}") == true)
    }
}
