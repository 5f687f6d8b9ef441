import FlowReassembly
@testable import BodyDecoding
@testable import HTTPDecoding
import HTTPModel
import PacketDecoding
import Testing

/// Connections' head buffers go back to their decoder's pool when the connection closes and are taken by the next
/// connections: what one connection left in its buffer (a head cut short, sniffed first bytes, a long head) must
/// never reach the next.
@Suite struct HeadBufferPoolTests {
    static let conversations: [[(StreamDirection, String)]] = [
        // A request head cut short by the close: its bytes were in the buffer when it went back.
        [(.clientToServer, "GET /cut HTTP/1.1\r\nHost: one.example\r\nX-Half: abc")],
        [(.clientToServer, "GET /a HTTP/1.1\r\nHost: two.example\r\n\r\n"),
         (.serverToClient, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")],
        // A response head cut short.
        [(.clientToServer, "GET /b HTTP/1.1\r\nHost: three.example\r\n\r\n"),
         (.serverToClient, "HTTP/1.1 204 No Content\r\nX-Cut: yes")],
        // A head longer than the pool keeps: that buffer is freed, not kept.
        [(.clientToServer, "GET /long HTTP/1.1\r\nX-Long: " + String(repeating: "x", count: 20_000) + "\r\n\r\n"),
         (.serverToClient, "HTTP/1.1 304 Not Modified\r\n\r\n")],
        [(.clientToServer, "POST /c HTTP/1.1\r\nHost: four.example\r\nContent-Length: 3\r\n\r\nabc"),
         (.serverToClient, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")],
    ]

    /// Every event of `conversations` run one connection after another on one decoder, and the pool at the end.
    static func run(_ conversations: [[(StreamDirection, String)]], pieceSize: Int)
        -> (events: [String], budget: DecodedBytesBudget) {
        nonisolated(unsafe) var events: [String] = []
        var decoder = HTTPStreamDecoder { events.append("\($0)") }
        for (number, steps) in conversations.enumerated() {
            var clock = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
            let id = ConnectionID(UInt64(number + 1))
            decoder.connectionOpened(id, client: Endpoint(address: .v4(0x0a00_0005), port: UInt16(40_000 + number)),
                                     server: Endpoint(address: .v4(0x5db8_d822), port: 80), at: clock)
            for (direction, text) in steps {
                clock.seconds += 1
                let bytes = Array(text.utf8)
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + pieceSize)
                    bytes[offset..<end].withUnsafeBytes { decoder.streamData(id, direction, $0, at: clock) }
                    offset = end
                }
            }
            decoder.streamEnded(id, .clientToServer, reason: .fin, at: clock)
            decoder.streamEnded(id, .serverToClient, reason: .fin, at: clock)
            decoder.connectionClosed(id, at: clock)
        }
        return (events, decoder.decodingBudget)
    }

    @Test(arguments: [1, 7, Int.max])
    func eachConnectionReadsAsIfItsBuffersWereNew(pieceSize: Int) {
        let (pooled, budget) = Self.run(Self.conversations, pieceSize: pieceSize)
        // The same connections, each on a decoder of its own: nothing to reuse.
        let alone = Self.conversations.flatMap { Self.run([$0], pieceSize: pieceSize).events }
        #expect(pooled.count == alone.count)
        for (index, (a, b)) in zip(pooled, alone).enumerated() {
            // Connection ids and ports differ between the two runs; everything else is the same.
            let same = Self.withoutEndpoints(a) == Self.withoutEndpoints(b)
            #expect(same, "event \(index): \(a.prefix(300))")
        }
        #expect(pooled.contains { $0.contains("/cut") } && pooled.contains { $0.contains("uri: \"/c\"") })
        // Two buffers per connection went back, except the one that outgrew what the pool keeps.
        #expect(budget.headBuffers.freeCount >= 1 && budget.headBuffers.freeCount <= 2 * Self.conversations.count - 1)
    }

    /// Leaves out what differs between connections opened on different decoders: ids, ports, the client's name.
    static func withoutEndpoints(_ event: String) -> String {
        event.replacing(/ConnectionID\(\d+\)|rawValue: \d+|port: \d+|:4\d{4}/, with: "")
    }
}
