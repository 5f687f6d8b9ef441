import FlowReassembly
@testable import HTTP3
import HTTPModel
import PacketDecoding
import Testing

/// Hand-made streams for what aioquic does not send: grease stream types and frame types, HTTP/2-only frame types,
/// a FIN inside a frame, a push stream before its PUSH_PROMISE, STOP_SENDING and CONNECTION_CLOSE.
@Suite("HTTP/3 framing, stream types and odd orders")
struct HTTP3FramingTests {
    /// Header blocks with static-table references only (Required Insert Count 0): `:method GET`, `:scheme https`,
    /// `:path /`; and `:status 200`.
    static let getBlock: [UInt8] = [0x00, 0x00, 0xd1, 0xd7, 0xc1]
    static let okBlock: [UInt8] = [0x00, 0x00, 0xd9]

    static func frame(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] { [type, UInt8(payload.count)] + payload }

    final class Run {
        var events: [HTTPEvent] = []
        lazy var connection = HTTP3Connection(connection: ConnectionID(9), client: H3Fixture.client, server: H3Fixture.server,
                                              limits: HTTPDecoderLimits(), budget: nil) { [unowned self] in self.events.append($0) }
        var clock: Int32 = 0

        func send(_ stream: UInt64, client: Bool, _ bytes: [UInt8], fin: Bool = false) {
            clock += 1
            bytes.withUnsafeBytes {
                connection.streamData(stream, fromClient: client, bytes: $0, fin: fin, at: Timestamp(seconds: 1, nanoseconds: clock))
            }
        }

        func end() -> [HTTPExchange] {
            connection.end(at: Timestamp(seconds: 2, nanoseconds: 0))
            return H3Fixture.exchanges(events)
        }

        var warnings: [String] { events.compactMap { if case .warning(_, let warning, _) = $0 { return warning.description }; return nil } }
    }

    @Test("frame reader: any split of the input gives the same frames; DATA streams through", arguments: [1, 2, 3, 5, 64])
    func readerSplits(pieceSize: Int) {
        let bytes = Self.frame(0x01, Self.getBlock) + Self.frame(0x00, Array("hello".utf8)) + [0x21, 0x03, 1, 2, 3]
            + [0x40, 0x21, 0x00] + Self.frame(0x00, [])
        var reader = HTTP3FrameReader(maxBufferedFrameBytes: 64)
        var frames: [UInt64] = [], data: [UInt8] = [], lasts = 0
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            let read = bytes[offset..<end].withUnsafeBytes { piece in
                reader.consume(piece) { item in
                    switch item {
                    case .frame(let type, _): frames.append(type)
                    case .data(let bytes, let last): data += bytes; if last { lasts += 1 }
                    case .skipped: frames.append(.max)
                    }
                    return true
                }
            }
            #expect(read == end - offset)
            offset = end
        }
        // HEADERS, a grease frame (0x21), the same type as a two-byte varint with an empty payload.
        #expect(frames == [0x01, 0x21, 0x21])
        #expect(data == Array("hello".utf8) && lasts == 2)
        #expect(reader.atFrameBoundary)
    }

    @Test("grease and unknown stream types and frames are skipped silently; an HTTP/2-only frame type is named")
    func greaseAndReserved() throws {
        let run = Run()
        run.send(2, client: true, [0x21, 0xde, 0xad])  // a reserved unidirectional stream type with junk after it
        run.send(6, client: true, [0x40, 0x54, 0xff])  // an unknown type (0x54) as a two-byte varint
        run.send(0, client: true, Self.frame(0x01, Self.getBlock) + [0x21, 0x02, 9, 9] + Self.frame(0x02, [0]), fin: true)
        run.send(0, client: false, Self.frame(0x01, Self.okBlock) + Self.frame(0x00, Array("hi".utf8)), fin: true)
        let exchanges = run.end()
        try #require(exchanges.count == 1)
        let exchange = exchanges[0]
        #expect(exchange.request?.method == "GET" && exchange.request?.uri == "/" && exchange.response?.status == 200)
        #expect(exchange.response?.body.size == 2)
        #expect(exchange.warnings == [.http3FrameUnexpected(type: 0x02)])
        #expect(exchange.complete && run.warnings.isEmpty)
    }

    @Test("a FIN inside a frame, DATA before HEADERS, and a stream left open are each said")
    func cutShort() throws {
        let run = Run()
        run.send(0, client: true, Self.frame(0x00, [1, 2]) + Self.frame(0x01, Self.getBlock), fin: true)
        run.send(0, client: false, Self.frame(0x01, Self.okBlock) + [0x00, 0x10, 1, 2], fin: true)
        run.send(4, client: true, Self.frame(0x01, Self.getBlock), fin: true)
        let exchanges = run.end()
        let first = try #require(exchanges.first { $0.http3?.streamID == 0 })
        #expect(first.warnings.contains(.http3FrameUnexpected(type: 0x00)))
        #expect(first.warnings.contains(.http3FrameCutByFIN(from: .serverToClient)))
        let open = try #require(exchanges.first { $0.http3?.streamID == 4 })
        #expect(open.http3?.outcome == .unfinished && open.response == nil && !open.complete)
        #expect(open.warnings == [.http3StreamEnded(.unfinished)])
    }

    @Test("a push stream that comes before its PUSH_PROMISE is still one exchange with the promised request")
    func pushBeforePromise() throws {
        let run = Run()
        run.send(0, client: true, Self.frame(0x01, Self.getBlock), fin: true)
        run.send(3, client: false, [0x01, 0x05] + Self.frame(0x01, Self.okBlock) + Self.frame(0x00, [7]), fin: true)
        run.send(0, client: false, Self.frame(0x05, [0x05] + Self.getBlock) + Self.frame(0x01, Self.okBlock), fin: true)
        let exchanges = run.end()
        #expect(exchanges.count == 2)
        let push = try #require(exchanges.first { $0.http3?.pushID == 5 })
        #expect(push.http3?.streamID == 3 && push.http3?.promisedOn == 0)
        #expect(push.request?.uri == "/" && push.response?.body.size == 1 && push.complete)
    }

    @Test("STOP_SENDING is an exchange warning; CONNECTION_CLOSE with an error is a connection warning")
    func stopAndClose() throws {
        let run = Run()
        run.send(0, client: true, Self.frame(0x01, Self.getBlock), fin: true)
        run.connection.stopSending(0, fromClient: true, errorCode: 0x10c, at: Timestamp(seconds: 1, nanoseconds: 9))
        run.connection.streamReset(0, fromClient: false, errorCode: 0x10c, at: Timestamp(seconds: 1, nanoseconds: 10))
        run.connection.connectionClosed(fromClient: false, errorCode: 0x100, application: true, reason: "", at: Timestamp(seconds: 1, nanoseconds: 11))
        run.connection.connectionClosed(fromClient: false, errorCode: 0x101, application: true, reason: "bye", at: Timestamp(seconds: 1, nanoseconds: 12))
        let exchanges = run.end()
        let exchange = try #require(exchanges.first)
        #expect(exchange.warnings.first == .http3StopSending(sender: .clientToServer, code: 0x10c, codeName: "H3_REQUEST_CANCELLED"))
        #expect(exchange.http3?.outcome == .reset(sender: .serverToClient, code: 0x10c, codeName: "H3_REQUEST_CANCELLED"))
        #expect(run.warnings.count == 1)
        #expect(run.warnings.first?.hasSuffix("CONNECTION_CLOSE from the server: H3_GENERAL_PROTOCOL_ERROR (0x101): bye") == true)
    }
}
