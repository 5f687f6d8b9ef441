import FlowReassembly
import PacketDecoding
import Testing

/// Segments captured across a connection's boundaries (issue 21): before its SYN, after both FINs, on a four-tuple
/// reused after a RST or a close.
@Suite struct ConnectionBoundaryTests {
    let conversation = Conversation()

    /// Index of the first event that is data of `direction`, and of the last.
    func dataEvents(_ consumer: RecordingConsumer, _ direction: StreamDirection) -> [Int] {
        consumer.events.indices.filter {
            if case .data(_, let d, _) = consumer.events[$0] { return d == direction }
            return false
        }
    }

    @Test func serverDataBeforeTheSYNIsPlacedOnceTheSYNIsSeen() throws {
        let response = conversation.responseSegments
        let segments = [response[0]] + conversation.handshake + conversation.requestSegments
            + response.dropFirst() + conversation.closing
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.connectionIDs.count == 1)
        #expect(consumer.opened[id]?.client == conversation.client)
        #expect(consumer.warnings.isEmpty, "no mid-stream pickup: \(consumer.warnings)")
        #expect(consumer.bytes(id, .clientToServer) == conversation.request)
        #expect(consumer.bytes(id, .serverToClient) == conversation.response)
        // The response waited for the request it answers.
        let requestData = dataEvents(consumer, .clientToServer), responseData = dataEvents(consumer, .serverToClient)
        #expect(try #require(requestData.last) < #require(responseData.first))
        #expect(consumer.endReason(id, .serverToClient) == .fin)
        #expect(consumer.contractViolations.isEmpty)
    }

    @Test func aSYNAfterDataSetsTheRolesWhateverThePortsSay() throws {
        // The client's port is the lower one: without its SYN the guess would make it the server.
        var low = Conversation()
        low.client = Endpoint(address: .v4(0x0a00_0002), port: 1000)
        low.server = Endpoint(address: .v4(0x0a00_0001), port: 8080)
        let segments = [low.responseSegments[0]] + low.handshake + low.requestSegments + low.responseSegments.dropFirst()
            + low.closing
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.opened[id]?.client == low.client)
        #expect(consumer.opened[id]?.server == low.server)
        #expect(consumer.bytes(id, .serverToClient) == low.response)
        #expect(consumer.bytes(id, .clientToServer) == low.request)
    }

    @Test func withoutAnySYNTheHeldBytesGoOutAsAPickup() throws {
        // Only data, both ways: the peer's first segment ends the hold, with the roles guessed from the ports.
        let segments = conversation.requestSegments + conversation.responseSegments
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.reassemblyWarnings.contains { if case .pickedUpMidStream = $0 { true } else { false } })
        #expect(consumer.bytes(id, .clientToServer) == conversation.request)
        #expect(consumer.bytes(id, .serverToClient) == conversation.response)
    }

    @Test func oneSidedHoldEndsAfterTheDelay() throws {
        let request = conversation.requestSegments
        var (consumer, reassembler) = reassemble([request[0]], finish: false)
        #expect(consumer.connectionIDs.isEmpty, "held: a SYN may still come")
        reassembler.expireIdle(now: t(1_500), into: &consumer)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == request[0].payload)
    }

    @Test func aSegmentAfterBothFINsFillsTheHoleBelowTheFIN() throws {
        var response = conversation.responseSegments
        let late = response.remove(at: 2)
        let segments = conversation.handshake + conversation.requestSegments + response + conversation.closing + [late]
        let (consumer, reassembler) = reassemble(segments, finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .serverToClient) == [.bytes(conversation.response)])
        #expect(consumer.endReason(id, .serverToClient) == .fin)
        #expect(consumer.closedIDs == [id])
        #expect(reassembler.statistics.gapBytes == 0)
    }

    @Test func aHoleBelowBothFINsIsGivenUpAfterTheDelay() throws {
        var response = conversation.responseSegments
        response.remove(at: 2)
        let segments = conversation.handshake + conversation.requestSegments + response + conversation.closing
        var (consumer, reassembler) = reassemble(segments, finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.closedIDs.isEmpty, "waits for a late segment")
        reassembler.expireIdle(now: t(2_000), into: &consumer)
        #expect(consumer.closedIDs == [id])
        #expect(consumer.pieces(id, .serverToClient).contains(.gap(conversation.mss)))
        #expect(consumer.endReason(id, .serverToClient) == .fin)
    }

    @Test func aSYNRefusedByRSTThenANewSYNIsANewConnection() throws {
        let refused = Segment(source: conversation.client, destination: conversation.server, sequence: 77, flags: [.syn],
                              time: t(0))
        let reset = Segment(source: conversation.server, destination: conversation.client, sequence: 0, ack: 78,
                            flags: [.rst, .ack], time: t(0))
        var again = Conversation()
        again.startMilliseconds = 100
        let (consumer, _) = reassemble([refused, reset] + again.inOrder)
        #expect(consumer.connectionIDs.count == 2)
        let second = try #require(consumer.connectionIDs.last)
        #expect(consumer.bytes(second, .clientToServer) == again.request)
        #expect(consumer.bytes(second, .serverToClient) == again.response)
        #expect(consumer.endReason(second, .serverToClient) == .fin)
    }

    @Test func aLateACKOfTheOldConnectionDoesNotDisturbTheNewOne() throws {
        var second = Conversation()
        second.clientISN = 2_000_000_000
        second.serverISN = 900
        second.startMilliseconds = 100
        let oldFinalACK = conversation.closing[2]
        let segments = conversation.handshake + conversation.requestSegments + conversation.responseSegments
            + conversation.closing.prefix(2) + [second.handshake[0], oldFinalACK] + second.handshake.dropFirst()
            + second.requestSegments + second.responseSegments + second.closing
        let (consumer, reassembler) = reassemble(segments)
        #expect(consumer.connectionIDs.count == 2)
        let id = try #require(consumer.connectionIDs.last)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(second.request)])
        #expect(consumer.pieces(id, .serverToClient) == [.bytes(second.response)])
        #expect(reassembler.statistics.gapBytes == 0)
    }
}
