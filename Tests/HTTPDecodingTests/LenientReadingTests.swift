import FlowReassembly
@testable import HTTPDecoding
import HTTPModel
import Testing

/// Whole conversations with odd messages (issue 9): none vanishes, pairing stays right, each oddity is a named
/// warning on its exchange.
@Suite struct LenientReadingTests {
    @Test func oddStartLinesKeepThePairing() throws {
        var c = Conversation()
        c.client("GET /a http/1.1\r\n\r\nGET /b HTTP/1.\r\n\r\nGET /c HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 2XX Odd\r\nContent-Length: 1\r\n\r\nAHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nB")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nC")
        let exchanges = c.exchanges()
        #expect(exchanges.map { $0.request?.uri ?? "-" } == ["/a", "/b", "/c"])
        #expect(exchanges.map { String(decoding: $0.response?.body.kept ?? [], as: UTF8.self) } == ["A", "B", "C"])
        #expect(exchanges[0].warnings == [.versionNotUpperCase("http/1.1"), .nonNumericStatusCode("2XX")])
        #expect(exchanges[1].warnings == [.truncatedVersion("HTTP/1.")])
        #expect(exchanges[2].warnings.isEmpty)
    }

    @Test func http09RequestAndResponse() throws {
        var c = Conversation()
        c.client("GET /old\r\n")
        c.server("<html>old</html>")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.request?.version == "HTTP/0.9")
        #expect(exchange.response?.body.kept == Array("<html>old</html>".utf8))
        #expect(exchange.warnings == [.http09Request, .http09Response])
    }

    /// An answer to an HTTP/0.9 request whose first piece could start a status line ("HT") but whose first line is
    /// not one: all of it is the body, each byte once, whatever the pieces.
    @Test(arguments: [1, 2, 3, Int.max])
    func http09ResponseThatCouldStartAStatusLine(pieceSize: Int) throws {
        let answer = "HTML first lines\nsecond line\n\nafter a blank line\n"
        var c = Conversation()
        c.client("GET /old\r\n")
        c.server(answer)
        let exchange = try #require(c.exchanges(pieceSize: pieceSize).first)
        #expect(exchange.response?.body.kept == Array(answer.utf8))
        #expect(exchange.response?.body.size == answer.utf8.count)
    }

    @Test(arguments: [
        ("Transfer-Encoding: chunked\r\nContent-Length: 3", HTTPWarning.transferEncodingWithContentLength),
        ("Content-Length: 3\r\nContent-Length: 3", .duplicateContentLength(["3", "3"])),
        ("Content-Length: 3\r\nContent-Length: 4", .conflictingContentLength(["3", "4"])),
        ("Content-Length: -3", .negativeContentLength("-3")),
        ("Content-Length: +3", .invalidContentLength(["+3"])),
        ("Content-Length: 003", .contentLengthWithLeadingZeros("003")),
        ("Content-Length: 99999999999999999999999", .contentLengthTooLarge("99999999999999999999999")),
    ])
    func framingOdditiesAreNamed(headers: String, warning: HTTPWarning) throws {
        var c = Conversation()
        c.client("POST /x HTTP/1.1\r\n\(headers)\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.warnings.contains(warning), "\(exchange.warnings)")
    }

    @Test func chunkSizesThatOverflowAreNamed() throws {
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\nx")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.warnings.contains(.chunkSizeOverflows("fffffffffffffffff")), "\(exchange.warnings)")
        // Leading zeros are fine.
        var ok = Conversation()
        ok.client("GET / HTTP/1.1\r\n\r\n")
        ok.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000003\r\nabc\r\n0\r\n\r\n")
        let fine = try #require(ok.exchanges().first)
        #expect(fine.response?.body.kept == Array("abc".utf8), "\(fine.warnings)")
    }

    /// Chunk-size lines read in place and across pieces (one byte at a time makes every line buffered first):
    /// the same sizes, extensions, trailers and named refusals.
    @Test(arguments: [1, 3, Int.max])
    func chunkLinesReadTheSameWhateverThePieces(pieceSize: Int) throws {
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 3 ; name=value\r\nabc\r\nA\r\n0123456789\r\n"
                 + "0\r\nX-Sum: 7\r\n\r\n")
        let exchange = try #require(c.exchanges(pieceSize: pieceSize).first)
        #expect(exchange.response?.body.kept == Array("abc0123456789".utf8), "\(exchange.warnings)")
        #expect(exchange.response?.headers["X-Sum"] == "7")
        #expect(exchange.complete && exchange.warnings.isEmpty, "\(exchange.warnings)")
        for (line, warning) in [("-5", HTTPWarning.negativeChunkSize("-5")), ("zz", .invalidChunkSizeLine("zz")),
                                ("; x", .invalidChunkSizeLine("; x")),
                                ("1000000000000000", .chunkSizeOverflows("1000000000000000"))] {
            var bad = Conversation()
            bad.client("GET / HTTP/1.1\r\n\r\n")
            bad.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(line)\r\nabc\r\n0\r\n\r\n")
            let refused = try #require(bad.exchanges(pieceSize: pieceSize).first)
            #expect(refused.warnings.contains(warning), "\(line): \(refused.warnings)")
        }
    }
}

/// Anything cut short is shown incomplete with what was seen (issue 9).
@Suite struct CutShortTests {
    @Test func aCaptureEndingInsideRequestHeadersShowsTheRequest() throws {
        var c = Conversation()
        c.client("GET /page HTTP/1.1\r\nHost: example.com\r\nAccept: te")
        c.steps.append(.clientEnd(.captureEnded))
        c.steps.append(.serverEnd(.captureEnded))
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.request?.uri == "/page")
        #expect(exchange.request?.headers["Host"] == "example.com")
        #expect(!exchange.complete)
        #expect(exchange.warnings.contains(.headCutShort(.request, bytes: 49, .captureEnded)), "\(exchange.warnings)")
    }

    @Test func aGapInsideAHeadKeepsWhatWasSeen() throws {
        var c = Conversation()
        c.client("GET /a HTTP/1.1\r\nHost: x\r\nUser-Ag")
        c.steps.append(.clientGap(40))
        c.client("GET /b HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        let exchanges = c.exchanges()
        #expect(exchanges.map { $0.request?.uri ?? "-" } == ["/a", "/b"])
        #expect(exchanges.map { $0.response?.status ?? 0 } == [200, 204])
        #expect(exchanges[0].warnings.contains(.gapInsideHead(.request, length: 40)), "\(exchanges[0].warnings)")
    }
}
