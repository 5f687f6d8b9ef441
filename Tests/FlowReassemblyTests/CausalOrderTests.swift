import FlowReassembly
import PacketDecoding
import Testing

/// The two directions are delivered in causal order: bytes whose ACK covers the peer's bytes not yet delivered
/// wait for them (issue 9: a response captured before the request's last segment).
@Suite struct CausalOrderTests {
    static let clientISN: UInt32 = 5000, serverISN: UInt32 = 9000
    static let request = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
    static let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)

    static var handshake: [Segment] {
        [Segment(source: client, destination: server, sequence: clientISN, flags: [.syn], time: t(0)),
         Segment(source: server, destination: client, sequence: serverISN, ack: clientISN &+ 1, flags: [.syn, .ack],
                 time: t(1)),
         Segment(source: client, destination: server, sequence: clientISN &+ 1, ack: serverISN &+ 1, time: t(2))]
    }

    /// The request in two segments; the response, acknowledging all of it, captured between them.
    static var responseBeforeRequestEnd: [Segment] {
        let half = request.count / 2
        return handshake + [
            Segment(source: client, destination: server, sequence: clientISN &+ 1, ack: serverISN &+ 1,
                    payload: Array(request[..<half]), time: t(3)),
            Segment(source: server, destination: client, sequence: serverISN &+ 1,
                    ack: clientISN &+ 1 &+ UInt32(request.count), payload: response, time: t(5)),
            Segment(source: client, destination: server, sequence: clientISN &+ 1 &+ UInt32(half),
                    ack: serverISN &+ 1, payload: Array(request[half...]), time: t(4)),
        ]
    }

    @Test func aResponseWaitsForTheRequestBytesItAcknowledges() throws {
        let (consumer, _) = reassemble(Self.responseBeforeRequestEnd)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == Self.request)
        #expect(consumer.bytes(id, .serverToClient) == Self.response)
        let order = consumer.events.compactMap { event -> StreamDirection? in
            if case .data(_, let direction, _) = event { return direction }
            return nil
        }
        #expect(order == [.clientToServer, .clientToServer, .serverToClient], "\(consumer.events)")
        #expect(consumer.contractViolations.isEmpty)
    }

    @Test func aResponseBeforeAnyRequestByteWaitsToo() throws {
        // Merged captures can show the whole response before the request, even before the client's SYN.
        let segments = [Self.handshake[1],
                        Segment(source: server, destination: client, sequence: Self.serverISN &+ 1,
                                ack: Self.clientISN &+ 1 &+ UInt32(Self.request.count), payload: Self.response,
                                time: t(5)),
                        Self.handshake[0],
                        Segment(source: client, destination: server, sequence: Self.clientISN &+ 1,
                                ack: Self.serverISN &+ 1, payload: Self.request, time: t(3))]
        let (consumer, _) = reassemble(segments)
        let order = consumer.events.compactMap { event -> StreamDirection? in
            if case .data(_, let direction, _) = event { return direction }
            return nil
        }
        #expect(order == [.clientToServer, .serverToClient], "\(consumer.events)")
    }

    @Test func requestBytesThatNeverShowUpReleaseTheResponseAfterTheHoleTimeout() throws {
        // The request's second half is lost by the capture: the response waits only until that hole is given up.
        var segments = Array(Self.responseBeforeRequestEnd.dropLast())
        segments.append(Segment(source: server, destination: client, sequence: Self.serverISN &+ 1 &+ UInt32(Self.response.count),
                                ack: Self.clientISN &+ 1 &+ UInt32(Self.request.count), time: t(3000)))
        let (consumer, _) = reassemble(segments, finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer).last == .gap(Self.request.count - Self.request.count / 2))
        #expect(consumer.bytes(id, .serverToClient) == Self.response)
    }

    @Test func mutuallyWaitingDirectionsAreReleasedAtTheEnd() throws {
        // Impossible in real TCP (each side acknowledging bytes the other sent later); a hostile capture must
        // still deliver everything.
        let segments = Self.handshake + [
            Segment(source: client, destination: server, sequence: Self.clientISN &+ 1, ack: Self.serverISN &+ 50,
                    payload: [1, 2, 3], time: t(3)),
            Segment(source: server, destination: client, sequence: Self.serverISN &+ 1, ack: Self.clientISN &+ 50,
                    payload: [4, 5, 6], time: t(4)),
        ]
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer).first == .bytes([1, 2, 3]))
        #expect(consumer.pieces(id, .serverToClient).first == .bytes([4, 5, 6]))
        #expect(consumer.contractViolations.isEmpty)
    }
}
