import FlowReassembly
import HTTPModel
@testable import HTTPDecoding
import PacketDecoding
import Testing

/// The router per connection (issue 22): handlers return what they found, the router swaps once after the call
/// returns and gives the next layer exactly the bytes that are its. Driven directly, without reassembly or the
/// executable, with a recording decoder plugged in for every next layer it is offered.
@Suite struct ConnectionRouterTests {
    /// One log for what the router reports and what the plugged-in handler is given, in the order it happened.
    final class Log: @unchecked Sendable {
        var entries: [String] = []
        var events: [HTTPEvent] = []
        var offered: [String] = []
        /// The direction of the last entry when it was the handler's bytes: more bytes that way join it, so the
        /// log does not depend on how the bytes were split.
        private var dataDirection: StreamDirection?

        func add(_ entry: String) {
            entries.append(entry)
            dataDirection = nil
        }

        func data(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer) {
            let text = String(decoding: bytes, as: UTF8.self)
            if dataDirection == direction { entries[entries.count - 1] += text; return }
            entries.append("\(direction == .clientToServer ? "client" : "server") \(text)")
            dataDirection = direction
        }
    }

    /// Records what it is given; optionally claims to have found a next layer of its own on its first bytes.
    final class RecordingHandler: ConnectionHandler {
        let log: Log
        let findsAnotherLayer: Bool
        init(log: Log, findsAnotherLayer: Bool) {
            self.log = log
            self.findsAnotherLayer = findsAnotherLayer
        }
        func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
            log.data(direction, bytes)
            return findsAnotherLayer ? Handover(next: .http2Preface, consumed: 0) : nil
        }
        func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
            log.add("gap \(length)")
            return nil
        }
        func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
            log.add("\(direction == .clientToServer ? "client" : "server") end")
            return nil
        }
        func close(at time: Timestamp) { log.add("close") }
    }

    enum Step {
        case client(String)
        case clientBytes([UInt8])
        case server(String)
        case negotiated(String)
    }

    static let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)

    /// Runs `steps` through one router, every data step split into pieces of `pieceSize` bytes. `claims`: the
    /// next layers the plugged-in decoder takes (by case name); `findsAnotherLayer`: its handler returns a
    /// handover of its own.
    static func run(_ steps: [Step], pieceSize: Int = .max, claims: Set<String>, findsAnotherLayer: Bool = false) -> Log {
        let log = Log()
        let sink = EventSink { event in
            log.events.append(event)
            log.add(describe(event))
        }
        let context = TakeoverContext(connection: ConnectionID(3), client: Conversation.client, server: Conversation.server,
                                      limits: HTTPDecoderLimits(), budget: nil, emit: sink.emit)
        let router = ConnectionRouter(context: context, sink: sink, decoders: { _, next in
            let name = caseName(next)
            log.offered.append(name)
            return claims.contains(name) ? RecordingHandler(log: log, findsAnotherLayer: findsAnotherLayer) : nil
        })
        for step in steps {
            switch step {
            case .negotiated(let name): router.negotiated(name, at: time)
            case .client(let text): feed(router, .clientToServer, Array(text.utf8), pieceSize)
            case .clientBytes(let bytes): feed(router, .clientToServer, bytes, pieceSize)
            case .server(let text): feed(router, .serverToClient, Array(text.utf8), pieceSize)
            }
        }
        router.end(.clientToServer, reason: .fin, at: time)
        router.end(.serverToClient, reason: .fin, at: time)
        router.close(at: time)
        return log
    }

    static func feed(_ router: ConnectionRouter, _ direction: StreamDirection, _ bytes: [UInt8], _ pieceSize: Int) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            bytes[offset..<end].withUnsafeBytes { router.consume(direction, $0, at: time, acknowledged: nil) }
            offset = end
        }
    }

    static func caseName(_ next: NextLayer) -> String {
        switch next {
        case .tls: "tls"
        case .unrecognizedStart: "unrecognizedStart"
        case .http2Preface: "http2Preface"
        case .negotiated(let name): "negotiated \(name)"
        case .h2c: "h2c"
        case .webSocket: "webSocket"
        case .upgrade(let exchange): "upgrade \(exchange.upgrade ?? "?")"
        case .tunnel: "tunnel"
        }
    }

    static func describe(_ event: HTTPEvent) -> String {
        switch event {
        case .exchange(let e):
            return "exchange \(e.request?.method ?? "-") \(e.request?.uri ?? "-") \(e.response?.statusText ?? "-")"
                + (e.upgrade.map { " upgrade \($0)\(e.upgradeDecoded ? " decoded" : "")" } ?? "")
        case .notice(let n):
            if case .tls(let name, _) = n.kind { return "notice tls \(name ?? "-")" }
            return "notice \(n.kind)"
        case .warning(_, let warning, _): return "warning \(warning)"
        case .webSocket: return "webSocket message"
        }
    }

    static func upgradeRequest(_ token: String) -> String {
        "GET /chat HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: \(token)\r\n\r\n"
    }
    static func switching(_ token: String) -> String {
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: \(token)\r\n\r\n"
    }

    // MARK: Each kind of next layer

    /// A 101 found mid-segment: the router reports the handshake (WebSocket) or leaves it to the next layer
    /// (h2c: stream 1's), then gives the handler the client's held bytes, then the rest of the 101's segment.
    @Test(arguments: [("websocket", "webSocket", true), ("h2c", "h2c", false)])
    func anAcceptedUpgradeHandsOverTheRestOfTheSegment(token: String, layer: String, routerReports: Bool) {
        let log = Self.run([.client(Self.upgradeRequest(token) + "held"), .server(Self.switching(token) + "after"),
                            .client("later")], claims: [layer])
        #expect(log.offered == [layer])
        let handshake = "exchange GET /chat 101 upgrade \(token) decoded"
        #expect(log.entries == (routerReports ? [handshake] : [])
                + ["client held", "server after", "client later", "client end", "server end", "close"])
    }

    /// An upgrade nothing decodes (no decoder, or a token nobody reads) is a tunnel: the handshake reported by the
    /// router, the bytes counted, a summary at the close.
    @Test(arguments: ["websocket", "h2c", "custom-proto"])
    func anUpgradeNobodyReadsIsCountedAsATunnel(token: String) {
        let log = Self.run([.client(Self.upgradeRequest(token) + "held"), .server(Self.switching(token) + "after")],
                           claims: [])
        #expect(log.entries == ["exchange GET /chat 101 upgrade \(token)",
                                "warning \(token) connection (not decoded) closed: 4 bytes client→server, 5 bytes server→client"])
    }

    /// An accepted CONNECT: the exchange is reported, then the tunnel's decoder gets the held and following bytes.
    @Test func anAcceptedConnectHandsTheTunnelToItsDecoder() {
        let log = Self.run([.client("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nhello"),
                            .server("HTTP/1.1 200 OK\r\n\r\nworld")], claims: ["tunnel"])
        #expect(log.offered == ["tunnel"])
        #expect(log.entries == ["exchange CONNECT example.com:443 200 upgrade tunnel decoded", "client hello", "server world",
                                "client end", "server end", "close",
                                "warning CONNECT tunnel closed: 5 bytes client→server, 5 bytes server→client"])
    }

    /// The HTTP/2 preface's request line in the same segment as the preface's rest and a frame: the decoder gets
    /// everything after the request line; without a decoder the connection is labelled and not read.
    @Test(arguments: [1, 5, 100])
    func thePrefaceHandsOverMidSegment(pieceSize: Int) {
        let bytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\nframes"
        let claimed = Self.run([.client(bytes)], pieceSize: pieceSize, claims: ["http2Preface"])
        #expect(claimed.entries == ["client SM\r\n\r\nframes", "client end", "server end", "close"])
        let unclaimed = Self.run([.client(bytes)], pieceSize: pieceSize, claims: [])
        #expect(unclaimed.entries == ["notice http2Preface"])
    }

    /// ALPN before any message hands the whole connection over; after a message it changes nothing.
    @Test func aNegotiatedProtocolAppliesBeforeAnyMessage() {
        let before = Self.run([.negotiated("h2"), .client("PRI"), .server("ok")], claims: ["negotiated h2"])
        #expect(before.entries == ["client PRI", "server ok", "client end", "server end", "close"])
        let after = Self.run([.client("GET / HTTP/1.1\r\n\r\n"), .server("HTTP/1.1 204 No Content\r\n\r\n"),
                              .negotiated("h2")], claims: ["negotiated h2"])
        #expect(after.offered.isEmpty)
        #expect(after.entries == ["exchange GET / 204"])
    }

    /// A ClientHello as the first bytes, split anywhere: labelled once, nothing read after it.
    @Test(arguments: [1, 3, 1000])
    func tlsFirstBytesAreLabelled(pieceSize: Int) {
        let log = Self.run([.clientBytes(TunnelTests.clientHello("tls.example.com")), .server("HTTP/1.1 200 OK\r\n\r\n")],
                           pieceSize: pieceSize, claims: [])
        #expect(log.offered == ["tls"])
        #expect(log.entries == ["notice tls tls.example.com"])
    }

    /// First bytes that are neither HTTP nor TLS: a decoder that claims them gets them all, from the first byte;
    /// when none does, HTTP/1.x reads them after all.
    @Test(arguments: [1, 4, 1000])
    func anUnrecognizedStartIsOfferedThenReadAsHTTP(pieceSize: Int) {
        let start = "\r\n\r\n\r\n\r\n\r\nGET /x HTTP/1.1\r\n\r\n"
        let claimed = Self.run([.client(start)], pieceSize: pieceSize, claims: ["unrecognizedStart"])
        #expect(claimed.offered == ["unrecognizedStart"])
        #expect(claimed.entries == ["client " + start, "client end", "server end", "close"])
        let declined = Self.run([.client(start), .server("HTTP/1.1 204 No Content\r\n\r\n")], pieceSize: pieceSize,
                                claims: [])
        #expect(declined.offered == ["unrecognizedStart"])
        #expect(declined.entries == ["exchange GET /x 204"])
    }

    // MARK: Once

    /// A handler that reports a next layer of its own after the swap is ignored: one swap per connection, and
    /// it keeps reading.
    @Test func aSecondHandoverIsIgnored() {
        let log = Self.run([.client(Self.upgradeRequest("websocket")), .server(Self.switching("websocket") + "one"),
                            .client("two"), .server("PRI * HTTP/2.0\r\n\r\n")],
                           claims: ["webSocket", "http2Preface"], findsAnotherLayer: true)
        #expect(log.offered == ["webSocket"])
        #expect(log.entries == ["exchange GET /chat 101 upgrade websocket decoded", "server one", "client two",
                                "server PRI * HTTP/2.0\r\n\r\n", "client end", "server end", "close"])
    }

    /// An upgrade refused, with requests pipelined behind it (held until the answer), answered in one segment:
    /// the held requests are read before the responses after the refusal, whatever the split, so each response
    /// finds its request. Then an accepted upgrade on the same connection. Every split gives the same events.
    @Test func eventOrderDoesNotDependOnHowTheBytesWereSplit() {
        let client = Self.upgradeRequest("websocket") + "GET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\n\r\n"
            + Self.upgradeRequest("websocket") + "held"
        let server = "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb" + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nc"
            + Self.switching("websocket") + "after"
        let whole = Self.run([.client(client), .server(server)], claims: ["webSocket"])
        #expect(whole.entries == ["exchange GET /chat 426", "exchange GET /b 200", "exchange GET /c 200",
                                  "exchange GET /chat 101 upgrade websocket decoded", "client held", "server after",
                                  "client end", "server end", "close"])
        for pieceSize in [1, 2, 3, 7, 16, 50] {
            let split = Self.run([.client(client), .server(server)], pieceSize: pieceSize, claims: ["webSocket"])
            #expect(split.events == whole.events, "piece size \(pieceSize)")
            #expect(split.entries == whole.entries, "piece size \(pieceSize)")
        }
    }
}
