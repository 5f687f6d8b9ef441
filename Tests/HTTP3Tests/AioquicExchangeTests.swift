import FlowReassembly
import HTTP3
import HTTPModel
import Testing

/// HTTP/3 exchanges decoded from the stream data aioquic's H3Connection sent (Scripts/fixtures/make-h3-streams.py),
/// checked field by field against the script's record of what it sent.
@Suite("HTTP/3 exchanges against aioquic's own record")
struct AioquicExchangeTests {
    /// Every exchange the script sent, matched by stream (or push ID), with headers, bodies, trailers and outcome.
    static func check(_ events: [HTTPEvent], against fixture: H3Fixture) {
        let exchanges = H3Fixture.exchanges(events)
        #expect(exchanges.count == fixture.manifest.exchanges.count)
        for record in fixture.manifest.exchanges {
            let found = exchanges.first { exchange in
                if let pushID = record.push_id { return exchange.http3?.pushID == pushID }
                return exchange.http3?.streamID == record.stream && exchange.http3?.pushID == nil
            }
            guard let exchange = found, let facts = exchange.http3 else {
                Issue.record("no exchange for \(record.stream.map { "stream \($0)" } ?? "push \(record.push_id ?? 0)")")
                continue
            }
            let request = exchange.request
            #expect(request.map { H3Fixture.pairs($0.headers) } == record.request.headers, "request headers, stream \(facts.streamID ?? 0)")
            #expect(request?.version == "HTTP/3")
            #expect(request?.body.size == record.request.body_bytes)
            if let digest = record.request.body_sha256, record.request.body_bytes ?? 0 > 0 { #expect(request?.body.sha256 == digest) }
            #expect(exchange.response?.interim.map { H3Fixture.pairs($0.headers) } ?? [] == (record.interim.map { [$0] } ?? []))
            if let push = record.push_id {
                #expect(facts.pushID == push && facts.streamID == record.push_stream && facts.promisedOn == record.promised_on)
            }
            if let reset = record.reset {
                #expect(facts.outcome == .reset(sender: reset.by == "client" ? .clientToServer : .serverToClient, code: reset.code,
                                                codeName: HTTP3ErrorCode.name(reset.code)))
                #expect(exchange.response?.body.transferSize == record.response?.body_bytes_before_reset)
                #expect(!exchange.complete)
                continue
            }
            if let goaway = record.goaway {
                #expect(facts.outcome == .goaway(sender: .serverToClient, id: goaway))
                #expect(exchange.response == nil && !exchange.complete)
                continue
            }
            guard let sent = record.response, let response = exchange.response else {
                Issue.record("no response on stream \(facts.streamID ?? 0)"); continue
            }
            #expect(H3Fixture.pairs(response.headers) == sent.headers + (sent.trailers ?? []), "response headers, stream \(facts.streamID ?? 0)")
            #expect(response.status == Int(sent.headers[0][1]))
            #expect(response.body.size == sent.body_bytes)
            if let digest = sent.body_sha256, sent.body_bytes ?? 0 > 0 { #expect(response.body.sha256 == digest) }
            #expect(facts.outcome == .complete && !facts.headerTableUnknown)
            #expect(exchange.complete, "stream \(facts.streamID ?? 0): \(exchange.warnings)")
        }
    }

    @Test("GET, gzip POST, 12 streams on the dynamic table (one blocked), trailers, 103, reset, push, GOAWAY", arguments: [Int.max, 1, 7])
    func basic(chunk: Int) throws {
        let fixture = try H3Fixture("basic")
        let events = fixture.run(chunk: chunk)
        Self.check(events, against: fixture)
        // Nothing worth a connection warning happened.
        #expect(events.allSatisfy { if case .warning = $0 { return false }; return true })
    }

    @Test("the dynamic table was used and a header block waited for the encoder stream")
    func dynamicTableAndBlocking() throws {
        let fixture = try H3Fixture("basic")
        // The client's encoder stream is stream 6: inserts exist, and one request piece came before the insert it needs.
        let encoder = fixture.pieces.filter { $0.stream == 6 && $0.client }
        #expect(encoder.map(\.bytes.count).reduce(0, +) > 50)
        let firstBatchRequest = fixture.pieces.firstIndex { $0.stream == 8 && $0.client }!
        #expect(fixture.pieces[firstBatchRequest...].contains { $0.stream == 6 })
    }

    @Test("a gap in a request stream: that exchange says so and is incomplete, the others decode")
    func gapInRequestStream() throws {
        let fixture = try H3Fixture("basic")
        // Drop the server's second piece of stream 4 (the POST's response DATA) as never captured.
        var seen = 0
        let events = fixture.run(skipping: { piece in
            guard piece.stream == 4, !piece.client else { return false }
            seen += 1
            return seen == 2
        }, gapInstead: true)
        let exchanges = H3Fixture.exchanges(events)
        let post = try #require(exchanges.first { $0.http3?.streamID == 4 })
        #expect(!post.complete)
        #expect(post.warnings.contains { if case .http3BytesNeverCaptured(_, .serverToClient) = $0 { return true }; return false })
        #expect(exchanges.filter(\.complete).count == fixture.manifest.exchanges.count - 3)
    }

    @Test("a gap in the encoder stream: blocks that needed the lost inserts say so; static and literal fields still decode")
    func gapInEncoderStream() throws {
        let fixture = try H3Fixture("basic")
        let events = fixture.run(skipping: { $0.stream == 6 && $0.client && $0.bytes.count > 8 }, gapInstead: true)
        let exchanges = H3Fixture.exchanges(events)
        #expect(exchanges.count == fixture.manifest.exchanges.count)
        let unknown = exchanges.filter { $0.http3?.headerTableUnknown == true }
        #expect(!unknown.isEmpty)
        #expect(unknown.allSatisfy { $0.warnings.contains(.qpackTableNotTracked) && !$0.complete })
        // The first GET was sent before any insert: whole.
        #expect(exchanges.first { $0.http3?.streamID == 0 }?.complete == true)
        #expect(events.contains { if case .warning(_, let warning, _) = $0 { return warning.description.contains("encoder stream") }; return false })
    }

    @Test("limits: a small frame buffer skips big frames and says so; open streams past the limit are reported early")
    func limits() throws {
        let fixture = try H3Fixture("basic")
        var small = HTTP3Limits()
        small.maxOpenStreams = 4
        let exchanges = H3Fixture.exchanges(fixture.run(limits: small))
        #expect(exchanges.count == fixture.manifest.exchanges.count)
        #expect(exchanges.contains { $0.warnings.contains(.http3TooManyStreams(limit: 4)) })
        var tiny = HTTP3Limits()
        tiny.maxBufferedFrameBytes = 8
        let skipped = H3Fixture.exchanges(fixture.run(limits: tiny))
        #expect(skipped.contains { $0.warnings.contains { if case .http3FrameOverLimit = $0 { return true }; return false } })
    }
}
