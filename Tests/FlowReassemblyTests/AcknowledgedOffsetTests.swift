import FlowReassembly
import PacketDecoding
import Testing

/// Each delivery carries the ACK of the segment its bytes came in, as an offset in the peer's stream (what HTTP
/// pairing reads after a gap), and giving up a hole keeps the two directions in causal order.
@Suite struct AcknowledgedOffsetTests {
    static let clientISN: UInt32 = 4_294_967_000, serverISN: UInt32 = 7_000  // the client's stream crosses 2^32
    static let request = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    static let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8)

    /// Client sequence number of request `n` (0-based) and server sequence number of response `n`: one request,
    /// then its response, then the next request (a client that waits for each answer).
    static func clientSequence(_ n: Int) -> UInt32 { clientISN &+ 1 &+ UInt32(n * request.count) }
    static func serverSequence(_ n: Int) -> UInt32 { serverISN &+ 1 &+ UInt32(n * response.count) }

    static func exchange(_ n: Int, at milliseconds: Int, responseLost: Bool = false) -> [Segment] {
        var segments = [Segment(source: client, destination: server, sequence: clientSequence(n),
                                ack: serverSequence(n), payload: request, time: t(milliseconds))]
        if !responseLost {
            segments.append(Segment(source: server, destination: client, sequence: serverSequence(n),
                                    ack: clientSequence(n + 1), payload: response, time: t(milliseconds + 1)))
        }
        // The client acknowledges the response, captured or not.
        segments.append(Segment(source: client, destination: server, sequence: clientSequence(n + 1),
                                ack: serverSequence(n + 1), time: t(milliseconds + 2)))
        return segments
    }

    static var handshake: [Segment] {
        [Segment(source: client, destination: server, sequence: clientISN, flags: [.syn], time: t(0)),
         Segment(source: server, destination: client, sequence: serverISN, ack: clientISN &+ 1, flags: [.syn, .ack],
                 time: t(1)),
         Segment(source: client, destination: server, sequence: clientISN &+ 1, ack: serverISN &+ 1, time: t(2))]
    }

    @Test func deliveriesSayHowFarIntoThePeersStreamTheirSegmentAcknowledged() throws {
        let (consumer, _) = reassemble(Self.handshake + Self.exchange(0, at: 10) + Self.exchange(1, at: 20))
        let seen = consumer.deliveries.map { "\($0.direction == .clientToServer ? "c" : "s") \($0.acknowledged ?? -1)" }
        let q = Self.request.count, r = Self.response.count
        #expect(seen == ["c 0", "s \(q)", "c \(r)", "s \(2 * q)"])
    }

    /// The second response is never captured; the third request (acknowledging it) and the third response follow
    /// at once, and more than the acknowledged-hole delay later the connection goes on. The gap is given up then,
    /// and the third request still reaches the consumer before the response that answers it.
    @Test func aResponseAfterALostOneFollowsItsRequestWhenTheHoleIsGivenUp() throws {
        var segments = Self.handshake + Self.exchange(0, at: 10) + Self.exchange(1, at: 20, responseLost: true)
            + Self.exchange(2, at: 30)
        segments.append(Segment(source: client, destination: server, sequence: Self.clientSequence(3),
                                ack: Self.serverSequence(3), time: t(2_500)))
        let (consumer, _) = reassemble(segments, finish: false)
        let order = consumer.events.compactMap { event -> String? in
            switch event {
            case .data(_, let direction, _): direction == .clientToServer ? "request" : "response"
            case .gap(_, _, let length): "gap \(length)"
            default: nil
            }
        }
        #expect(order == ["request", "response", "request", "gap \(Self.response.count)", "request", "response"])
        let q = Self.request.count, r = Self.response.count
        #expect(consumer.deliveries.last?.acknowledged == 3 * q, "the third response acknowledged the third request")
        #expect(consumer.deliveries.dropLast().last?.acknowledged == 2 * r, "the third request acknowledged the lost response")
    }
}
