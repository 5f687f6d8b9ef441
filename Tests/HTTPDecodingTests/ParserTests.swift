import FlowReassembly
@testable import HTTPDecoding
import HTTPModel
import Testing

@Suite struct ParserTests {
    static func keepAlivePipelined() -> Conversation {
        var c = Conversation()
        c.client("GET /a HTTP/1.1\r\nHost: example.com\r\n\r\nGET /b?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello")
        c.server("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        c.client("POST /c HTTP/1.1\r\nHost: example.com\r\nContent-Length: 7\r\n\r\npayload")
        c.server("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nX-Checksum: 9\r\n\r\n")
        return c
    }

    @Test func pipelinedRequestsPairInOrder() throws {
        let exchanges = Self.keepAlivePipelined().exchanges()
        try #require(exchanges.count == 3)
        #expect(exchanges.map { $0.request?.uri } == ["/a", "/b?x=1", "/c"])
        #expect(exchanges.map { $0.response?.status } == [200, 404, 201])
        #expect(exchanges.allSatisfy { $0.complete && $0.warnings.isEmpty })
        #expect(exchanges[0].response?.body.sha256 == sha256Hex("hello"))
        #expect(exchanges[2].request?.body.sha256 == sha256Hex("payload"))
        #expect(exchanges[2].response?.body.sha256 == sha256Hex("abcdefg"))
        #expect(exchanges[2].response?.body.transferSize == 7)
        #expect(exchanges[2].response?.headers.fields.last?.name == "X-Checksum")
        #expect(exchanges[1].response?.body.sha256 == sha256Hex(""))
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func byteAtATimeEqualsAllAtOnce(pieceSize: Int) {
        for conversation in [Self.keepAlivePipelined(), Self.noBodyRules(), Self.continueThenUpload()] {
            #expect(conversation.exchanges(pieceSize: pieceSize) == conversation.exchanges())
        }
    }

    static func noBodyRules() -> Conversation {
        var c = Conversation()
        c.client("HEAD /h HTTP/1.1\r\nHost: a\r\n\r\nGET /n HTTP/1.1\r\nHost: a\r\n\r\nGET /m HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\n\r\n")
        // HEAD carries a Content-Length of what GET would return, but no body; 204 and 304 have none either.
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n")
        c.client("GET /close HTTP/1.0\r\n\r\n")
        c.server("HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>till close</p>")
        c.steps.append(.serverEnd(.fin))
        return c
    }

    @Test func headNoContentNotModifiedAndCloseDelimited() throws {
        let exchanges = Self.noBodyRules().exchanges()
        try #require(exchanges.count == 4)
        #expect(exchanges.map { $0.response?.status } == [200, 204, 304, 200])
        #expect(exchanges[0].response?.body.size == 0)
        #expect(exchanges[3].response?.body.sha256 == sha256Hex("<p>till close</p>"))
        #expect(exchanges.allSatisfy { $0.complete })
    }

    @Test func closeDelimitedBodyCutByCaptureEndIsIncomplete() throws {
        var c = Conversation()
        c.client("GET / HTTP/1.0\r\n\r\n")
        c.server("HTTP/1.0 200 OK\r\n\r\npartial")
        c.steps.append(.serverEnd(.captureEnded))
        let exchanges = c.exchanges()
        try #require(exchanges.count == 1)
        #expect(!exchanges[0].complete)
        #expect(exchanges[0].warnings == [.bodyEndsWithConnection(.response, .captureEnded)])
    }

    static func continueThenUpload() -> Conversation {
        var c = Conversation()
        c.client("PUT /up HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n")
        c.server("HTTP/1.1 100 Continue\r\n\r\n")
        c.client("0123456789")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return c
    }

    @Test func hundredContinueThenRealResponse() throws {
        let exchanges = Self.continueThenUpload().exchanges()
        try #require(exchanges.count == 1)
        let exchange = exchanges[0]
        #expect(exchange.response?.status == 200)
        #expect(exchange.response?.interim.map(\.status) == [100])
        #expect(exchange.request?.body.size == 10)
        #expect(exchange.complete)
    }

    /// Issue 36 (Zeek names it HTTP_content_length_0_and_expect_100_cont): RFC 9110 section 10.1.1 forbids a client
    /// to expect 100-continue on a request without content. Named on such requests (Content-Length 0 or none),
    /// never on one with content or chunked.
    @Test func continueExpectedWithoutContentIsNamed() throws {
        var c = Conversation()
        c.client("POST /a HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 0\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        c.client("GET /b HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        c.client("POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n0\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let exchanges = c.exchanges()
        try #require(exchanges.count == 3)
        #expect(exchanges.map { $0.warnings.contains(.continueExpectedWithoutContent) } == [true, true, false])
        #expect(!Self.continueThenUpload().exchanges()[0].warnings.contains(.continueExpectedWithoutContent))
    }

    @Test func websocketUpgradeIsLabelledAndNotParsed() throws {
        var c = Conversation()
        c.client("GET /chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        c.client([0x81, 0x85, 1, 2, 3, 4, 5, 6, 7, 8, 9])
        c.server("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        c.server([0x81, 0x03, 0x61, 0x62, 0x63])
        let events = c.run()
        let exchanges = events.compactMap(\.exchange)
        try #require(exchanges.count == 1)
        #expect(exchanges[0].upgrade == "websocket")
        #expect(exchanges[0].response?.status == 101)
        #expect(exchanges[0].warnings.isEmpty)
    }

    @Test func refusedUpgradeKeepsParsing() throws {
        var c = Conversation()
        c.client("GET /x HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n")
        c.client("GET /y HTTP/1.1\r\nHost: a\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny")
        let exchanges = c.exchanges()
        #expect(exchanges.map { $0.request?.uri } == ["/x", "/y"])
        #expect(exchanges.allSatisfy { $0.upgrade == nil })
    }

    @Test func connectTunnel() throws {
        var c = Conversation()
        c.client("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        c.server("HTTP/1.1 200 Connection established\r\n\r\n")
        c.client([0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5])
        c.server([0x16, 0x03, 0x03, 0x00, 0x01, 9])
        let exchanges = c.exchanges()
        try #require(exchanges.count == 1)
        #expect(exchanges[0].request?.method == "CONNECT")
        #expect(exchanges[0].upgrade == "tunnel")
    }

    @Test func requestWithoutResponseAppearsWithNilResponse() throws {
        var c = Conversation()
        c.client("GET /lost HTTP/1.1\r\nHost: a\r\n\r\n")
        let exchanges = c.exchanges()
        try #require(exchanges.count == 1)
        #expect(exchanges[0].response == nil)
        #expect(!exchanges[0].complete)
    }

    @Test func gapInsideKnownLengthBodyKeepsPairing() throws {
        var c = Conversation()
        c.client("GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01")
        c.steps.append(.serverGap(5))
        c.server("789HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let exchanges = c.exchanges()
        try #require(exchanges.count == 2)
        #expect(!exchanges[0].complete)
        #expect(exchanges[0].warnings == [.gapInBody(.response, length: 5)])
        #expect(exchanges[1].complete)
        #expect(exchanges[1].response?.body.sha256 == sha256Hex("ok"))
    }

    @Test func gapInHeadResyncsOnNextMessage() throws {
        var c = Conversation()
        c.client("GET /1 HTTP/1.1\r\n\r\n")
        c.steps.append(.clientGap(30))
        c.client("ost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb")
        let exchanges = c.exchanges()
        #expect(exchanges.compactMap { $0.request?.uri } == ["/1", "/3"])
        #expect(exchanges[1].warnings.contains(.gapBeforeMessage(.request, length: 30)), "\(exchanges[1].warnings)")
    }

    @Test func midStreamPickupFindsTheNextResponse() throws {
        var c = Conversation()
        c.server("tail of an earlier body\r\nmore\n")
        c.client("GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        let exchanges = c.exchanges()
        #expect(exchanges.compactMap { $0.request?.uri } == ["/next"])
        #expect(exchanges.last?.response?.status == 200)
    }

    @Test func oversizedHeadIsSkippedWithAWarning() throws {
        var limits = HTTPDecoderLimits()
        limits.maxHeadBytes = 100
        var c = Conversation()
        c.client("GET /big HTTP/1.1\r\nX-Pad: \(String(repeating: "p", count: 300))\r\n\r\nGET /ok HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let exchanges = c.exchanges(limits: limits)
        #expect(exchanges.compactMap { $0.request?.uri } == ["/ok"])
        #expect(exchanges.first?.warnings.contains(.headOverLimit(.request, limit: 100)) == true)
    }

    @Test func tlsClientHelloGivesServerName() throws {
        // A minimal ClientHello carrying SNI "api.example.org" and ALPN h2, http/1.1.
        let name = Array("api.example.org".utf8)
        var sni: [UInt8] = [0x00, 0x00]
        let list: [UInt8] = [0x00] + be16(name.count) + name
        sni += be16(list.count + 2) + be16(list.count) + list
        let protocols: [UInt8] = [2] + Array("h2".utf8) + [8] + Array("http/1.1".utf8)
        let alpn: [UInt8] = [0x00, 0x10] + be16(protocols.count + 2) + be16(protocols.count) + protocols
        let extensions = sni + alpn
        var hello: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 7, count: 32) + [0] + [0x00, 0x02, 0x13, 0x01] + [1, 0]
        hello += be16(extensions.count) + extensions
        let handshake: [UInt8] = [1, 0] + be16(hello.count) + hello
        let record: [UInt8] = [0x16, 0x03, 0x01] + be16(handshake.count) + handshake
        for pieceSize in [1, 5, 1000] {
            var c = Conversation()
            c.client(record)
            c.server([0x16, 0x03, 0x03, 0x00, 0x02, 0x02, 0x00])
            let events = c.run(pieceSize: pieceSize)
            #expect(events.count == 1)
            guard case .notice(let notice) = events.first else { Issue.record("no notice"); continue }
            #expect(notice.kind == .tls(serverName: "api.example.org", alpn: ["h2", "http/1.1"]))
        }
    }

    @Test func http2PrefaceIsLabelled() {
        var c = Conversation()
        c.client("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        c.client([0, 0, 0, 4, 0, 0, 0, 0, 0])
        let events = c.run(pieceSize: 3)
        #expect(events.count == 1)
        guard case .notice(let notice) = events.first else { Issue.record("no notice"); return }
        #expect(notice.kind == .http2Preface)
    }

    /// Not HTTP: no exchange, one notice with what each side sent (issue 36: nothing dropped unmentioned).
    @Test func notHTTPGetsOneNoticeWithTheCounts() {
        var c = Conversation()
        c.client("SSH-2.0-OpenSSH_9.2\r\n")
        c.server("SSH-2.0-OpenSSH_9.2\r\n")
        let kinds = c.run().map { event -> ConnectionNotice.Kind? in
            if case .notice(let notice) = event { notice.kind } else { nil }
        }
        #expect(kinds == [.notParsedAsHTTP(clientBytes: 21, serverBytes: 21)])
    }
}

func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xff)] }
