import FlowReassembly
import PacketDecoding
import Testing

@Suite("Reassembly: ordering")
struct OrderingTests {
    let conversation = Conversation()

    func expectComplete(_ consumer: RecordingConsumer, _ conversation: Conversation,
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(consumer.contractViolations.isEmpty, "\(consumer.contractViolations)", sourceLocation: sourceLocation)
        let id = try #require(consumer.connectionIDs.first, sourceLocation: sourceLocation)
        #expect(consumer.connectionIDs.count == 1, sourceLocation: sourceLocation)
        #expect(consumer.opened[id]?.client == conversation.client, sourceLocation: sourceLocation)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(conversation.request)], sourceLocation: sourceLocation)
        #expect(consumer.pieces(id, .serverToClient) == [.bytes(conversation.response)], sourceLocation: sourceLocation)
        #expect(consumer.endReason(id, .clientToServer) == .fin, sourceLocation: sourceLocation)
        #expect(consumer.endReason(id, .serverToClient) == .fin, sourceLocation: sourceLocation)
        #expect(consumer.closedIDs == [id], sourceLocation: sourceLocation)
    }

    @Test func inOrderDeliversBothDirectionsAndEndsOnFIN() throws {
        let (consumer, reassembler) = reassemble(conversation.inOrder, finish: false)
        try expectComplete(consumer, conversation)
        #expect(consumer.warnings.isEmpty)
        #expect(reassembler.statistics.outOfOrderSegments == 0)
        #expect(reassembler.statistics.peakBufferedBytes == 0, "in-order data is never buffered")
        #expect(reassembler.statistics.bytesDelivered == conversation.request.count + conversation.response.count)
        #expect(reassembler.statistics.gapBytes == 0)
    }

    @Test func reversedSegmentsGiveTheSameStreams() throws {
        let segments = conversation.handshake + conversation.requestSegments.reversed()
            + conversation.responseSegments.reversed() + conversation.closing
        let (consumer, reassembler) = reassemble(segments)
        try expectComplete(consumer, conversation)
        #expect(reassembler.statistics.outOfOrderSegments > 0)
        #expect(reassembler.bufferedBytes == 0)
    }

    @Test(arguments: 1...25)
    func randomPermutationGivesTheSameStreams(seed: Int) throws {
        var generator = SeededGenerator(seed: UInt64(seed))
        var conversation = conversation
        conversation.response = pattern(3000, seed: UInt8(seed))
        conversation.mss = 97
        // Data of both directions and the client's FIN shuffled together. The server's FIN stays after them: it
        // acknowledges the client's FIN, which proves every client byte was sent before it.
        var middle = conversation.requestSegments + conversation.responseSegments + [conversation.closing[0]]
        middle.shuffle(using: &generator)
        let (consumer, _) = reassemble(conversation.handshake + middle + conversation.closing.suffix(2))
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.contractViolations.isEmpty)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(conversation.request)])
        #expect(consumer.pieces(id, .serverToClient) == [.bytes(conversation.response)])
        #expect(consumer.endReason(id, .serverToClient) == .fin)
    }

    @Test func oneByteSegmentsGiveTheSameStream() throws {
        var conversation = conversation
        conversation.response = pattern(700)
        conversation.mss = 1
        let (consumer, reassembler) = reassemble(conversation.inOrder)
        try expectComplete(consumer, conversation)
        #expect(reassembler.statistics.peakBufferedBytes == 0)

        var generator = SeededGenerator(seed: 7)
        var shuffled = conversation.responseSegments
        shuffled.shuffle(using: &generator)
        let (mixed, _) = reassemble(conversation.handshake + conversation.requestSegments + shuffled
                                    + conversation.closing)
        try expectComplete(mixed, conversation)
    }

    @Test func duplicatesAndRetransmissionsAreDeliveredOnce() throws {
        var segments = conversation.handshake
        for segment in conversation.requestSegments + conversation.responseSegments {
            segments.append(segment)
            segments.append(segment)
        }
        // A late retransmission of the first request segment, and one that spans two segments.
        segments.append(conversation.requestSegments[0])
        var spanning = conversation.responseSegments[0]
        spanning.payload = Array(conversation.response[0..<25])
        segments.append(spanning)
        segments += conversation.closing
        let (consumer, reassembler) = reassemble(segments)
        try expectComplete(consumer, conversation)
        #expect(reassembler.statistics.duplicateBytes >= conversation.request.count + conversation.response.count)
        #expect(reassembler.statistics.bytesDelivered == conversation.request.count + conversation.response.count,
                "counted after the connection was forgotten too")
        #expect(consumer.warnings.isEmpty, "identical retransmissions are not worth a warning")
    }

    @Test(arguments: [UInt32.max - 9, UInt32.max, UInt32.max - 200, 0x7fff_fff0])
    func sequenceNumbersWrapAround(isn: UInt32) throws {
        var conversation = conversation
        conversation.clientISN = isn
        conversation.serverISN = isn &- 3
        conversation.request = pattern(300, seed: 1)
        conversation.response = pattern(500, seed: 2)
        conversation.mss = 7
        try expectComplete(reassemble(conversation.inOrder).0, conversation)
        let reordered = conversation.handshake + conversation.requestSegments.reversed()
            + conversation.responseSegments.reversed() + conversation.closing
        try expectComplete(reassemble(reordered).0, conversation)
    }
}
