import FlowReassembly
import PacketDecoding
import Testing

@Suite("Reassembly: limits keep memory bounded and turn lost data into gaps")
struct LimitTests {
    func connection(port: UInt16, start: Int = 0) -> Conversation {
        var conversation = Conversation()
        conversation.client = Endpoint(address: .v4(0x0a00_0005), port: port)
        conversation.startMilliseconds = start
        return conversation
    }

    func data(_ conversation: Conversation, offset: Int, count: Int, at milliseconds: Int) -> Segment {
        Segment(source: conversation.client, destination: conversation.server,
                sequence: conversation.clientISN &+ 1 &+ UInt32(offset), ack: conversation.serverISN &+ 1,
                payload: Array(pattern(offset + count)[offset...]), time: t(milliseconds))
    }

    @Test func perConnectionLimitSkipsTheOldestHole() throws {
        let limits = ReassemblyLimits(maxBufferedBytesPerConnection: 100)
        let conversation = connection(port: 40000)
        var reassembler = TCPReassembler(limits: limits)
        var consumer = RecordingConsumer()
        for segment in conversation.handshake { reassembler.feed(segment, into: &consumer) }
        // Bytes 0..<10 never arrive; 20-byte segments pile up behind the hole.
        for offset in stride(from: 10, to: 410, by: 20) {
            reassembler.feed(data(conversation, offset: offset, count: 20, at: offset), into: &consumer)
            #expect(reassembler.bufferedBytes <= 100)
        }
        // The missing bytes finally show up: too late, they were already announced as a gap.
        reassembler.feed(data(conversation, offset: 0, count: 10, at: 500), into: &consumer)
        reassembler.finish(into: &consumer)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.gap(10), .bytes(Array(pattern(410)[10...]))])
        #expect(consumer.limitsGivenUpOn.contains(.bytesPerConnection(100)))
        #expect(reassembler.statistics.peakBufferedBytes <= 100)
        #expect(reassembler.statistics.limitHits >= 1)
        #expect(consumer.contractViolations.isEmpty)
    }

    @Test func totalLimitMakesTheLongestWaitingConnectionGiveWay() throws {
        let limits = ReassemblyLimits(maxBufferedBytesPerConnection: 100, maxBufferedBytesTotal: 150)
        let conversations = (0..<3).map { connection(port: UInt16(40000 + $0), start: $0 * 10) }
        var reassembler = TCPReassembler(limits: limits)
        var consumer = RecordingConsumer()
        for (index, conversation) in conversations.enumerated() {
            for segment in conversation.handshake { reassembler.feed(segment, into: &consumer) }
            // Each connection: 60 bytes buffered behind a 5-byte hole.
            reassembler.feed(data(conversation, offset: 5, count: 60, at: index * 10 + 5), into: &consumer)
            #expect(reassembler.bufferedBytes <= 150)
        }
        let ids = consumer.connectionIDs
        #expect(consumer.pieces(ids[0], .clientToServer) == [.gap(5), .bytes(Array(pattern(65)[5...]))])
        #expect(consumer.pieces(ids[1], .clientToServer) == [], "younger connections keep waiting")
        #expect(consumer.pieces(ids[2], .clientToServer) == [])
        #expect(consumer.limitsGivenUpOn.contains(.bytesInAll(150)))
        #expect(reassembler.bufferedBytes == 120)
        // The holes of the others fill normally.
        reassembler.feed(data(conversations[1], offset: 0, count: 5, at: 100), into: &consumer)
        #expect(consumer.pieces(ids[1], .clientToServer) == [.bytes(pattern(65))])
        #expect(reassembler.bufferedBytes == 60)
    }

    @Test func connectionLimitEvictsTheLeastRecentlyActive() throws {
        let limits = ReassemblyLimits(maxConnections: 8)
        var reassembler = TCPReassembler(limits: limits)
        var consumer = RecordingConsumer()
        var conversations: [Conversation] = []
        for index in 0..<20 {
            let conversation = connection(port: UInt16(41000 + index), start: index * 10)
            conversations.append(conversation)
            // The first connection lost its first segment: eviction must announce that hole.
            let data = index == 0 ? Array(conversation.requestSegments.dropFirst()) : conversation.requestSegments
            for segment in conversation.handshake + data {
                reassembler.feed(segment, into: &consumer)
            }
            #expect(reassembler.connectionCount <= 8)
        }
        reassembler.finish(into: &consumer)
        let ids = consumer.connectionIDs
        #expect(ids.count == 20)
        #expect(reassembler.statistics.peakConnections <= 8)
        #expect(consumer.endReason(ids[0], .clientToServer) == .evicted)
        #expect(consumer.endReason(ids[19], .clientToServer) == .captureEnded)
        #expect(consumer.reassemblyWarnings.contains(.connectionLimitReached(limit: 8)))
        // Eviction loses nothing already delivered, and turns the hole into a gap.
        let request = conversations[0].request
        #expect(consumer.pieces(ids[0], .clientToServer) == [.gap(10), .bytes(Array(request[10...]))])
        for id in ids.dropFirst() { #expect(consumer.bytes(id, .clientToServer) == request) }
        #expect(reassembler.bufferedBytes == 0)
        #expect(consumer.contractViolations.isEmpty)
        #expect(consumer.closedIDs.count == 20)
    }

    @Test func closedConnectionsAreEvictedBeforeOpenOnes() throws {
        var reassembler = TCPReassembler(limits: ReassemblyLimits(maxConnections: 2))
        var consumer = RecordingConsumer()
        let open = connection(port: 42000, start: 0)
        let closed = connection(port: 42001, start: 10)
        let newcomer = connection(port: 42002, start: 20)
        for segment in open.handshake + closed.inOrder + newcomer.handshake {
            reassembler.feed(segment, into: &consumer)
        }
        let ids = consumer.connectionIDs
        #expect(consumer.endReason(ids[0], .clientToServer) == nil, "the open one survives")
        #expect(reassembler.connectionCount == 2)
        #expect(consumer.warnings.isEmpty)
    }

    @Test func idleConnectionsExpireByPacketTime() throws {
        let limits = ReassemblyLimits(idleTimeoutSeconds: 10)
        var reassembler = TCPReassembler(limits: limits)
        var consumer = RecordingConsumer()
        let quiet = connection(port: 43000, start: 0)
        let busy = connection(port: 43001, start: 0)
        for segment in quiet.handshake { reassembler.feed(segment, into: &consumer) }
        reassembler.feed(data(quiet, offset: 0, count: 4, at: 10), into: &consumer)
        reassembler.feed(data(quiet, offset: 8, count: 4, at: 20), into: &consumer)  // a hole at 4..<8
        for second in stride(from: 0, through: 30, by: 2) {
            var conversation = busy
            conversation.startMilliseconds = second * 1000
            reassembler.feed(data(busy, offset: second, count: 2, at: second * 1000), into: &consumer)
        }
        let ids = consumer.connectionIDs
        #expect(consumer.endReason(ids[0], .clientToServer) == .idleTimeout)
        #expect(consumer.endReason(ids[0], .serverToClient) == .idleTimeout)
        #expect(consumer.pieces(ids[0], .clientToServer) == [.bytes(pattern(4)), .gap(4), .bytes(Array(pattern(12)[8...]))])
        #expect(consumer.endReason(ids[1], .clientToServer) == nil)
        #expect(reassembler.connectionCount == 1)
        #expect(reassembler.bufferedBytes == 0)

        // Called directly, as a live capture does when no packets arrive.
        reassembler.expireIdle(now: t(60_000), into: &consumer)
        #expect(consumer.endReason(ids[1], .clientToServer) == .idleTimeout)
        #expect(reassembler.connectionCount == 0)
        #expect(consumer.contractViolations.isEmpty)
    }

    /// Many connections, lossy and shuffled, under tight limits: memory stays within them after every segment,
    /// and every delivered byte sits where it belongs (data plus gaps never misplace a byte).
    @Test(arguments: [1, 2, 3])
    func lossyShuffledTrafficStaysBoundedAndNeverCorrupts(seed: Int) throws {
        let limits = ReassemblyLimits(maxBufferedBytesPerConnection: 2_000, maxBufferedBytesTotal: 5_000,
                                      maxConnections: 12, idleTimeoutSeconds: 5)
        var generator = SeededGenerator(seed: UInt64(seed))
        var segments: [Segment] = []
        var streams: [UInt16: [UInt8]] = [:]
        for index in 0..<30 {
            var conversation = connection(port: UInt16(44000 + index), start: index * 300)
            conversation.clientISN = UInt32.random(in: 0...UInt32.max, using: &generator)
            conversation.request = pattern(Int.random(in: 500...8_000, using: &generator), seed: UInt8(index))
            conversation.mss = Int.random(in: 1...300, using: &generator)
            streams[conversation.client.port] = conversation.request
            var data = conversation.requestSegments.filter { _ in Int.random(in: 0..<10, using: &generator) != 0 }
            data += data.filter { _ in Bool.random(using: &generator) }  // retransmissions
            data.shuffle(using: &generator)
            segments += conversation.handshake + data
        }
        // Interleave connections a little, keeping each handshake ahead of its data.
        var reassembler = TCPReassembler(limits: limits)
        var consumer = RecordingConsumer()
        for segment in segments {
            reassembler.feed(segment, into: &consumer)
            #expect(reassembler.bufferedBytes <= limits.maxBufferedBytesTotal)
            #expect(reassembler.connectionCount <= limits.maxConnections)
        }
        reassembler.finish(into: &consumer)
        #expect(reassembler.bufferedBytes == 0)
        #expect(consumer.contractViolations.isEmpty)
        for id in consumer.connectionIDs {
            let original = try #require(streams[consumer.opened[id]!.client.port])
            var position = 0
            for piece in consumer.pieces(id, .clientToServer) {
                switch piece {
                case .gap(let length): position += length
                case .bytes(let bytes):
                    #expect(position + bytes.count <= original.count)
                    if position + bytes.count <= original.count {
                        #expect(Array(original[position..<position + bytes.count]) == bytes)
                    }
                    position += bytes.count
                }
            }
            #expect(position <= original.count)
        }
    }
}
