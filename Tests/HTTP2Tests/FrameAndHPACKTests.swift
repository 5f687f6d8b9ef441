import FlowReassembly
@testable import HTTP2
import HTTPDecoding
import HTTPModel
import NIOCore
import NIOHPACK
import PacketDecoding
import Testing

@Suite("HTTP/2 frames, HPACK and streams")
struct FrameAndHPACKTests {
    @Test("frame splitter: any split of the input gives the same pieces; DATA padding removed", arguments: [1, 2, 7, 9, 10, 4096])
    func splitterSplits(pieceSize: Int) {
        let frames = H2Conversation.frame(FrameType.headers, flags: 4, stream: 1, [1, 2, 3])
            + H2Conversation.frame(FrameType.data, flags: FrameType.padded | FrameType.endStream, stream: 1, [3] + Array("hello".utf8) + [0, 0, 0])
            + H2Conversation.frame(FrameType.data, stream: 3, Array("world".utf8))
            + H2Conversation.frame(FrameType.ping, stream: 0, [UInt8](repeating: 7, count: 8))
        var splitter = FrameSplitter(maxBufferedFrameBytes: 1024)
        var types: [UInt8] = [], data: [UInt8] = [], lasts = 0
        var offset = 0
        while offset < frames.count {
            let end = min(frames.count, offset + pieceSize)
            frames[offset..<end].withUnsafeBytes { bytes in
                splitter.consume(bytes) { piece in
                    switch piece {
                    case .frame(let header, _): types.append(header.type)
                    case .data(_, let bytes, let last): data += bytes; if last { lasts += 1 }
                    case .skipped: types.append(0xff)
                    }
                }
            }
            offset = end
        }
        #expect(types == [FrameType.headers, FrameType.ping])
        #expect(String(decoding: data, as: UTF8.self) == "helloworld")
        #expect(lasts == 2)
    }

    @Test("a non-DATA frame over the buffer limit is skipped with a reason, and the next frame still parses")
    func splitterLimit() {
        let frames = H2Conversation.frame(FrameType.headers, stream: 1, [UInt8](repeating: 0, count: 100))
            + H2Conversation.frame(FrameType.ping, stream: 0, [UInt8](repeating: 1, count: 8))
        var splitter = FrameSplitter(maxBufferedFrameBytes: 50)
        var skipped: [HTTP2FrameTrouble] = [], parsed: [UInt8] = []
        frames.withUnsafeBytes { bytes in
            splitter.consume(bytes) { piece in
                switch piece {
                case .frame(let header, _): parsed.append(header.type)
                case .skipped(_, let reason): skipped.append(reason)
                case .data: Issue.record("no DATA was sent")
                }
            }
        }
        #expect(skipped == [.frameOverLimit(length: 100, limit: 50)])
        #expect(parsed == [FrameType.ping])
    }

    @Test("streams become exchanges with decoded headers, bodies and trailers, in any split", arguments: [1, 3, 64, Int.max])
    func streamsAsExchanges(pieceSize: Int) throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/one"))
        conversation.clientHeaders(stream: 3, H2Conversation.get("/two"))
        conversation.serverHeaders(stream: 3, [(":status", "404"), ("content-type", "text/plain")])
        conversation.serverHeaders(stream: 1, [(":status", "200"), ("content-type", "text/plain")])
        conversation.serverData(stream: 1, "first ", endStream: false, padding: 5)
        conversation.serverData(stream: 3, "missing", endStream: true)
        conversation.serverData(stream: 1, "body", endStream: false)
        conversation.serverHeaders(stream: 1, [("x-checksum", "abc")], endStream: true)
        let exchanges = conversation.exchanges(pieceSize: pieceSize)
        #expect(exchanges.map { $0.http2?.streamID } == [3, 1])
        let one = try #require(exchanges.first { $0.http2?.streamID == 1 })
        #expect(one.request?.method == "GET")
        #expect(one.request?.uri == "/one")
        #expect(one.request?.version == "HTTP/2.0")
        #expect(one.response?.status == 200)
        #expect(String(decoding: one.response?.body.kept ?? [], as: UTF8.self) == "first body")
        #expect(one.response?.headers["x-checksum"] == "abc")
        #expect(one.complete)
        #expect(exchanges.first { $0.http2?.streamID == 3 }?.response?.status == 404)
    }

    @Test("HPACK follows a dynamic table size change signalled after SETTINGS_HEADER_TABLE_SIZE")
    func tableSizeChange() throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/a") + [("x-custom", String(repeating: "v", count: 100))])
        conversation.serverHeaders(stream: 1, [(":status", "200"), ("x-server", "one")], endStream: true)
        // The client shrinks the server's table; the server's encoder must signal it before its next block.
        conversation.steps.append(.client(H2Conversation.settings([(0x1, 64)])))
        try conversation.serverEncoder.setDynamicTableSize(64)
        conversation.clientHeaders(stream: 3, H2Conversation.get("/b") + [("x-custom", String(repeating: "v", count: 100))])
        conversation.serverHeaders(stream: 3, [(":status", "200"), ("x-server", "two"), ("x-server", "one")], endStream: true)
        conversation.clientHeaders(stream: 5, H2Conversation.get("/c"))
        conversation.serverHeaders(stream: 5, [(":status", "204"), ("x-server", "two")], endStream: true)
        let exchanges = conversation.exchanges()
        #expect(exchanges.count == 3)
        #expect(exchanges.allSatisfy { $0.complete && $0.warnings.isEmpty })
        #expect(exchanges[1].response?.headers.values("x-server") == ["two", "one"])
        #expect(exchanges[1].request?.headers["x-custom"]?.count == 100)
        #expect(exchanges[2].response?.status == 204)
    }

    @Test("a header block split over HEADERS and CONTINUATION frames, in any split", arguments: [1, 5, Int.max])
    func continuation(pieceSize: Int) throws {
        var conversation = H2Conversation()
        let block = conversation.clientBlock(H2Conversation.get("/big") + [("x-large", String(repeating: "L", count: 3000))])
        let third = block.count / 3
        conversation.steps.append(.client(H2Conversation.frame(FrameType.headers, flags: FrameType.endStream, stream: 1, Array(block[..<third]))))
        conversation.steps.append(.client(H2Conversation.frame(FrameType.continuation, stream: 1, Array(block[third..<(2 * third)]))))
        conversation.steps.append(.client(H2Conversation.frame(FrameType.continuation, flags: FrameType.endHeaders, stream: 1, Array(block[(2 * third)...]))))
        conversation.serverHeaders(stream: 1, [(":status", "200")], endStream: true)
        let exchange = try #require(conversation.exchanges(pieceSize: pieceSize).first)
        #expect(exchange.request?.uri == "/big")
        #expect(exchange.request?.headers["x-large"]?.count == 3000)
        #expect(exchange.complete)
    }

    @Test("padded and prioritised HEADERS: padding and priority fields are skipped")
    func paddedHeaders() throws {
        var conversation = H2Conversation()
        let block = conversation.clientBlock(H2Conversation.get("/padded"))
        let payload = [UInt8(4)] + [0x80, 0, 0, 0, 15] + block + [0, 0, 0, 0]
        conversation.steps.append(.client(H2Conversation.frame(FrameType.headers,
            flags: FrameType.endHeaders | FrameType.endStream | FrameType.padded | FrameType.priorityFlag, stream: 1, payload)))
        conversation.serverHeaders(stream: 1, [(":status", "200")], endStream: true)
        let exchange = try #require(conversation.exchanges().first)
        #expect(exchange.request?.uri == "/padded")
        #expect(exchange.complete)
    }

    @Test("RST_STREAM and GOAWAY become the exchange's outcome")
    func resetAndGoaway() throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/cancelled"))
        conversation.steps.append(.client(H2Conversation.frame(FrameType.rstStream, stream: 1, [0, 0, 0, 8])))
        conversation.clientHeaders(stream: 3, H2Conversation.get("/never"))
        conversation.steps.append(.server(H2Conversation.frame(FrameType.goaway, stream: 0, [0, 0, 0, 1, 0, 0, 0, 2] + Array("overload".utf8))))
        let events = conversation.run()
        let exchanges = events.compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }
        #expect(exchanges.count == 2)
        #expect(exchanges[0].http2?.outcome == .reset(sender: .clientToServer, code: 8, codeName: "CANCEL"))
        #expect(exchanges[0].warnings == [.http2StreamEnded(.reset(sender: .clientToServer, code: 8, codeName: "CANCEL"))])
        #expect(exchanges[1].http2?.outcome == .goaway(sender: .serverToClient, code: 2, codeName: "INTERNAL_ERROR", lastStreamID: 1))
        #expect(connectionWarnings(events).contains(.goAway(from: .serverToClient, code: 2, lastStream: 1, debug: "overload")))
    }

    @Test("frames in flight after a reset belong to the closed stream and make no exchange of their own")
    func framesAfterReset() throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/slow"))
        conversation.serverHeaders(stream: 1, [(":status", "200")])
        conversation.steps.append(.client(H2Conversation.frame(FrameType.rstStream, stream: 1, [0, 0, 0, 8])))
        conversation.serverData(stream: 1, "late", endStream: false)
        conversation.serverData(stream: 1, "later", endStream: true)
        let exchanges = conversation.exchanges()
        #expect(exchanges.count == 1)
        #expect(exchanges.first?.http2?.outcome == .reset(sender: .clientToServer, code: 8, codeName: "CANCEL"))
    }

    @Test("PUSH_PROMISE: the promised request and the pushed response are one exchange, marked pushed")
    func push() throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/page"))
        let promised = conversation.serverBlock(H2Conversation.get("/style.css"))
        conversation.steps.append(.server(H2Conversation.frame(FrameType.pushPromise, flags: FrameType.endHeaders, stream: 1, [0, 0, 0, 2] + promised)))
        conversation.serverHeaders(stream: 2, [(":status", "200")])
        conversation.serverData(stream: 2, "body{}")
        conversation.serverHeaders(stream: 1, [(":status", "200")])
        conversation.serverData(stream: 1, "<html>")
        let exchanges = conversation.exchanges()
        let pushed = try #require(exchanges.first { $0.http2?.streamID == 2 })
        #expect(pushed.http2?.promisedOn == 1)
        #expect(pushed.request?.uri == "/style.css")
        #expect(pushed.complete)
    }

    @Test("picked up without the preface: literal fields decode, fields from the unknown table are counted")
    func midStreamPickup() throws {
        // The peer's table holds an entry sent before the capture; later blocks refer to it.
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: false)
        _ = H2Conversation.block(&encoder, [("x-before", "capture")])
        let block = H2Conversation.block(&encoder, [(":method", "GET"), (":path", "/later"), ("x-before", "capture"), ("x-new", "field")])
        var decoder = HeaderBlockDecoder(maxHeaderListBytes: 1 << 16, maxTableBytes: 1 << 16, tableUnknown: true)
        let decoded = decoder.decode(block)
        #expect(decoded.unknownFields == 1)
        #expect(decoded.fields.map(\.name) == [":method", ":path", "x-new"])
        // Entries added since the pickup are known: the next block's reference to x-new decodes.
        let next = H2Conversation.block(&encoder, [("x-new", "field")])
        #expect(decoder.decode(next).fields.map(\.value) == ["field"])
    }

    @Test("a connection picked up without its preface is recognised by its frames and decoded as far as possible")
    func pickupWithoutPreface() throws {
        var conversation = H2Conversation()
        // Header blocks sent before the capture began fill both tables.
        _ = conversation.clientBlock(H2Conversation.get("/before"))
        _ = conversation.serverBlock([(":status", "200"), ("x-before", "yes")])
        conversation.clientHeaders(stream: 7, H2Conversation.get("/after"))
        conversation.serverHeaders(stream: 7, [(":status", "200"), ("x-before", "yes"), ("x-fresh", "1")])
        conversation.serverData(stream: 7, "body")
        let events = conversation.run(prefaceFirst: false)
        #expect(connectionWarnings(events).contains(.pickedUpWithoutStart))
        let exchange = try #require(events.compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }.first)
        #expect(exchange.http2?.streamID == 7)
        #expect(exchange.http2?.headerTableUnknown == true)
        #expect(exchange.request?.method == "GET")
        #expect(exchange.response?.status == 200)
        #expect(exchange.response?.headers["x-fresh"] == "1")
        #expect(String(decoding: exchange.response?.body.kept ?? [], as: UTF8.self) == "body")
        #expect(!exchange.complete)
    }

    @Test("ALPN h2 told before the first bytes routes the connection to HTTP/2; another protocol does not")
    func alpn() throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/over-tls"))
        conversation.serverHeaders(stream: 1, [(":status", "200")], endStream: true)
        let exchanges = conversation.run(alpn: "h2").compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }
        #expect(exchanges.first?.request?.uri == "/over-tls")
        #expect(exchanges.first?.complete == true)
        var http1 = H2Conversation()
        http1.steps = [.client(Array("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
                       .server(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))]
        let other = http1.run(prefaceFirst: false, alpn: "http/1.1").compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }
        #expect(other.map { $0.request?.uri } == ["/plain"])
        #expect(other.allSatisfy { $0.http2 == nil && $0.response?.status == 200 })
    }

    @Test("bytes that are not HTTP/2 frames are left to HTTP/1.x handling")
    func notFramesNotTaken() {
        var conversation = H2Conversation()
        conversation.steps = [.client([0x00, 0x10, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 16))]
        let events = conversation.run(prefaceFirst: false)
        #expect(!connectionWarnings(events).contains(.pickedUpWithoutStart))
    }

    @Test("a connection whose HPACK table is lost mid-way keeps decoding what it can and says so")
    func corruptTable() throws {
        var conversation = H2Conversation()
        // Stream 1's request block references a table entry the decoder never saw (sent in a "lost" block).
        _ = conversation.clientBlock([("x-lost", "entry")])
        conversation.clientHeaders(stream: 1, H2Conversation.get("/after") + [("x-lost", "entry")])
        conversation.serverHeaders(stream: 1, [(":status", "200")], endStream: true)
        let exchange = try #require(conversation.exchanges().first)
        #expect(exchange.request?.uri == "/after")
        #expect(!exchange.complete)
        #expect(exchange.http2?.headerTableUnknown == true)
        #expect(exchange.warnings.contains(.hpackEntriesFromBeforeCapture(fields: 1)), "\(exchange.warnings)")
    }

    @Test("limits: streams per connection and header block size are bounded, each with a visible warning")
    func limits() throws {
        var limits = HTTP2Limits()
        limits.maxOpenStreams = 2
        limits.maxHeaderBlockBytes = 200
        var conversation = H2Conversation()
        for stream in stride(from: UInt32(1), through: 7, by: 2) { conversation.clientHeaders(stream: stream, H2Conversation.get("/s\(stream)")) }
        conversation.clientHeaders(stream: 9, H2Conversation.get("/huge") + [("x-big", String(repeating: "b", count: 500))])
        let events = conversation.run(limits: limits)
        let all = warnings(events)
        #expect(all.contains { $0.contains("more than 2 streams open on one connection") })
        #expect(all.contains { $0.contains("header block over the 200-byte limit") })
        let exchanges = events.compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }
        #expect(exchanges.count == 5)
        #expect(exchanges.contains { $0.warnings.contains(.http2TooManyStreams(limit: 2)) })
        #expect(exchanges.contains { $0.warnings.contains(.http2HeaderBlockOverLimit(limit: 200)) })
    }

    @Test("a gap stops the direction with a warning instead of misreading frames")
    func gap() throws {
        var conversation = H2Conversation()
        conversation.clientHeaders(stream: 1, H2Conversation.get("/x"), endStream: false)
        conversation.steps.append(.clientGap(100))
        conversation.serverHeaders(stream: 1, [(":status", "200")], endStream: true)
        let events = conversation.run()
        #expect(warnings(events).contains { $0.contains("HTTP/2 frame boundaries lost") })
        let exchange = try #require(events.compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }.first)
        #expect(!exchange.complete)
    }

    @Test("hostile input: random and mutated bytes never crash the HTTP/2 decoder")
    func hostile() {
        var seeded = SeededGenerator(seed: 0x2545_f491)
        var base = H2Conversation()
        base.clientHeaders(stream: 1, H2Conversation.get("/x"))
        base.serverHeaders(stream: 1, [(":status", "200")])
        base.serverData(stream: 1, "hello", padding: 3)
        let valid: [UInt8] = base.steps.flatMap { step -> [UInt8] in if case .client(let b) = step { return b }; if case .server(let b) = step { return b }; return [] }
        for round in 0..<300 {
            var conversation = H2Conversation()
            var bytes = valid
            if round % 3 == 0 {
                bytes = (0..<Int.random(in: 0...400, using: &seeded)).map { _ in UInt8.random(in: 0...255, using: &seeded) }
            } else {
                for _ in 0..<Int.random(in: 1...12, using: &seeded) {
                    bytes[Int.random(in: 0..<bytes.count, using: &seeded)] = UInt8.random(in: 0...255, using: &seeded)
                }
            }
            conversation.steps = [.client(bytes), .server(bytes.reversed())]
            _ = conversation.run(pieceSize: Int.random(in: 1...64, using: &seeded))
        }
    }
}

@Suite("WebSocket decoder")
struct WebSocketDecoderTests {
    /// Found by the http2-frames fuzz target: a compressed frame whose deflate data ends the stream (BFINAL)
    /// made zlib return Z_STREAM_END forever and the inflate loop spin.
    @Test("fuzz regression: deflate data that ends its stream mid-frame does not hang")
    func finalBlockDoesNotSpin() {
        let input: [UInt8] = [0xff, 0xff, 0xf3, 0x74, 0x8b, 0x0a, 0xff, 0x00, 0x01, 0x00, 0x00]
        var limits = HTTP2Limits()
        limits.maxWebSocketMessageBytes = 1 << 16
        for options: UInt8 in [0, 4, 12] {
            var decoder = DirectionDecoder(direction: .clientToServer, deflate: options & 4 != 0,
                                           contextTakeover: options & 8 != 0, keepBytes: 64, limits: limits)
            let time = Timestamp(seconds: 1, nanoseconds: 0)
            var messages = 0
            input.withUnsafeBytes { decoder.consume($0, at: time) { _ in messages += 1 } }
            decoder.flush(at: time) { _ in messages += 1 }
            #expect(messages <= 2)
        }
    }

    @Test("a compressed message sent with BFINAL set inflates, and the next message still decodes")
    func finalBlockMessage() throws {
        // Raw deflate of "hello" with BFINAL=1 (zlib's default), as a masked client frame with RSV1.
        let compressed: [UInt8] = [0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]
        func frame(_ payload: [UInt8]) -> [UInt8] {
            let mask: [UInt8] = [1, 2, 3, 4]
            return [0xc1, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        }
        var decoder = DirectionDecoder(direction: .clientToServer, deflate: true, contextTakeover: true, keepBytes: 64,
                                       limits: HTTP2Limits())
        var texts: [String] = []
        (frame(compressed) + frame(compressed)).withUnsafeBytes {
            decoder.consume($0, at: Timestamp(seconds: 1, nanoseconds: 0)) { texts.append(String(decoding: $0.kept, as: UTF8.self)) }
        }
        #expect(texts == ["hello", "hello"])
    }

    @Test("frame headers: 7-bit, 16-bit and 64-bit lengths, the mask key, and nil when cut short")
    func frameHeaders() {
        func header(_ bytes: [UInt8]) -> (first: UInt8, length: Int, mask: [UInt8]?)? {
            bytes.withUnsafeBytes { DirectionDecoder.frameHeader($0) }
        }
        #expect(header([0x81, 0x05])?.length == 5)
        #expect(header([0x81, 0x05])?.mask == nil)
        #expect(header([0x82, 0xfe, 0x01, 0x00, 9, 8, 7, 6])?.length == 256)
        #expect(header([0x82, 0xfe, 0x01, 0x00, 9, 8, 7, 6])?.mask == [9, 8, 7, 6])
        #expect(header([0x02, 0x7f, 0, 0, 0, 1, 0, 0, 0, 0])?.length == 1 << 32)
        // A 64-bit length with its top bit set (forbidden) is as long as can be, not negative.
        #expect(header([0x02, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0])?.length == Int.max)
        #expect(header([0x02, 0x7f, 0, 0, 0, 1]) == nil)
        #expect(header([0x82, 0x85, 1, 2]) == nil)
        #expect(header([0x81]) == nil)
    }
}

/// A small deterministic generator (xorshift64*) so hostile-input runs are repeatable.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 1 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}
