import FlowReassembly
import PacketDecoding
import Testing

@Suite("Reassembly: overlaps, pickup, SYN data, FIN/RST, gaps, reuse")
struct StreamRuleTests {
    let conversation = Conversation()
    var requestStart: UInt32 { conversation.clientISN &+ 1 }

    func clientData(_ offset: Int, _ text: String, at milliseconds: Int = 3) -> Segment {
        Segment(source: client, destination: server, sequence: requestStart &+ UInt32(offset),
                ack: conversation.serverISN &+ 1, payload: Array(text.utf8), time: t(milliseconds))
    }

    // MARK: Overlaps: the bytes seen first win

    @Test func overlapWithDifferentBytesKeepsTheBufferedOnesAndWarns() throws {
        // "AAAA" arrives ahead of a hole; then a segment filling the hole also covers it with "bbbb".
        let segments = conversation.handshake + [clientData(4, "AAAA"), clientData(0, "xxxxbbbbyy")]
        let (consumer, reassembler) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("xxxxAAAAyy".utf8))])
        #expect(reassembler.statistics.conflictingOverlaps == 1)
        #expect(consumer.reassemblyWarnings == [.retransmissionDiffers])
    }

    @Test func overlapBetweenBufferedSegmentsKeepsTheFirst() throws {
        let segments = conversation.handshake + [clientData(4, "AAAA"), clientData(6, "zzzzCC"), clientData(0, "0123")]
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("0123AAAAzzCC".utf8))])
    }

    @Test func retransmissionOfDeliveredBytesCannotChangeThem() throws {
        let segments = conversation.handshake + [clientData(0, "hello"), clientData(0, "HELLO world")]
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("hello world".utf8))])
    }

    @Test func segmentBeyondAnyWindowIsIgnored() throws {
        let wild = clientData(1 << 30 + 5, "junk")
        let (consumer, reassembler) = reassemble(conversation.handshake + [clientData(0, "GET"), wild,
                                                                           clientData(3, " /")])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("GET /".utf8))])
        #expect(reassembler.statistics.ignoredSegments == 1)
    }

    // MARK: Mid-stream pickup

    @Test func midStreamPickupGuessesTheServerByLowerPort() throws {
        // No handshake; the first segment seen is the server's response.
        let response = Segment(source: server, destination: client, sequence: 777, ack: 999,
                               payload: Array("HTTP/1.1 200 OK\r\n\r\n".utf8), time: t(0))
        let request = Segment(source: client, destination: server, sequence: 999, ack: 777 + 19,
                              payload: Array("GET / HTTP/1.1\r\n\r\n".utf8), time: t(1))
        let (consumer, _) = reassemble([response, request])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.opened[id]?.client == client)
        #expect(consumer.opened[id]?.server == server)
        #expect(consumer.bytes(id, .serverToClient) == Array("HTTP/1.1 200 OK\r\n\r\n".utf8))
        #expect(consumer.bytes(id, .clientToServer) == Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(consumer.reassemblyWarnings.contains { if case .pickedUpMidStream = $0 { true } else { false } })
        #expect(consumer.endReason(id, .clientToServer) == .captureEnded)
    }

    @Test func midStreamPickupUsesThePeersAckToKeepAReorderedFirstSegment() throws {
        // The client's request acknowledges server byte 5000; the server's second segment is seen before its first.
        let request = Segment(source: client, destination: server, sequence: 100, ack: 5000,
                              payload: Array("GET /".utf8), time: t(0))
        let second = Segment(source: server, destination: client, sequence: 5005, ack: 105,
                             payload: Array(" 200".utf8), time: t(1))
        let first = Segment(source: server, destination: client, sequence: 5000, ack: 105,
                            payload: Array("HTTP/".utf8), time: t(2))
        let (consumer, _) = reassemble([request, second, first])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .serverToClient) == Array("HTTP/ 200".utf8))
    }

    @Test func strayAcksAndResetsDoNotOpenConnections() {
        let ack = Segment(source: client, destination: server, sequence: 1, ack: 1)
        let reset = Segment(source: server, destination: client, sequence: 1, flags: [.rst])
        let (consumer, reassembler) = reassemble([ack, reset])
        #expect(consumer.events.isEmpty)
        #expect(reassembler.statistics.ignoredSegments == 2)
    }

    @Test func synAckFirstMakesItsSenderTheServer() throws {
        let high = Endpoint(address: .v4(0x0a00_0009), port: 60000)
        let low = Endpoint(address: .v4(0x0a00_0008), port: 40000)
        // The low port sent the SYN/ACK, so the high port is the client whatever the ports say... and vice versa.
        let synAck = Segment(source: high, destination: low, sequence: 10, ack: 21, flags: [.syn, .ack])
        let (consumer, _) = reassemble([synAck])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.opened[id]?.server == high)
        #expect(consumer.opened[id]?.client == low)
        #expect(consumer.warnings.isEmpty)
    }

    @Test func synSeenAfterTheFirstDataIsTheSameConnection() throws {
        // SYN/ACK, then the client's data, then its (reordered) SYN.
        let segments = [conversation.handshake[1], clientData(0, "GET /"), conversation.handshake[0],
                        clientData(5, " HTTP/1.1")]
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.connectionIDs.count == 1)
        #expect(consumer.bytes(id, .clientToServer) == Array("GET / HTTP/1.1".utf8))
        #expect(consumer.warnings.isEmpty)
    }

    // MARK: SYN data (TCP Fast Open)

    @Test func dataOnTheSYNIsDeliveredFirst() throws {
        var syn = conversation.handshake[0]
        syn.payload = Array("GET /".utf8)
        let rest = Segment(source: client, destination: server, sequence: requestStart &+ 5,
                           ack: conversation.serverISN &+ 1, payload: Array(" HTTP/1.1".utf8), time: t(3))
        // The SYN retransmitted with its data must not duplicate it.
        let (consumer, _) = reassemble([syn, syn, conversation.handshake[1], rest])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == Array("GET / HTTP/1.1".utf8))
        #expect(consumer.opened[id]?.client == client)
    }

    // MARK: FIN and RST

    @Test func finEndsOneDirectionAndLaterDataIsIgnored() throws {
        var fin = clientData(0, "bye")
        fin.flags = [.fin, .ack]
        let late = clientData(3, "more")
        let response = Segment(source: server, destination: client, sequence: conversation.serverISN &+ 1,
                               ack: requestStart &+ 4, payload: Array("ok".utf8), time: t(5))
        let (consumer, reassembler) = reassemble(conversation.handshake + [fin, late, response], finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == Array("bye".utf8))
        #expect(consumer.endReason(id, .clientToServer) == .fin)
        #expect(consumer.endReason(id, .serverToClient) == nil, "the other direction stays open")
        #expect(consumer.bytes(id, .serverToClient) == Array("ok".utf8))
        #expect(reassembler.openConnectionCount == 1)
    }

    @Test func finBeforeItsDataWaitsForTheData() throws {
        var fin = clientData(5, "")
        fin.flags = [.fin, .ack]
        let (consumer, _) = reassemble(conversation.handshake + [fin, clientData(0, "hello")], finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("hello".utf8))])
        #expect(consumer.endReason(id, .clientToServer) == .fin)
    }

    @Test func resetEndsBothDirections() throws {
        let reset = Segment(source: server, destination: client, sequence: conversation.serverISN &+ 1,
                            flags: [.rst], payload: Array("ignored".utf8), time: t(4))
        let (consumer, reassembler) = reassemble(conversation.handshake + [clientData(0, "GET"), reset], finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == Array("GET".utf8))
        #expect(consumer.bytes(id, .serverToClient) == [])
        #expect(consumer.endReason(id, .clientToServer) == .reset)
        #expect(consumer.endReason(id, .serverToClient) == .reset)
        #expect(consumer.closedIDs == [id])
        #expect(reassembler.openConnectionCount == 0)
        #expect(consumer.contractViolations.isEmpty)
    }

    @Test func resetDeliversBufferedDataAfterAGap() throws {
        let reset = Segment(source: client, destination: server, sequence: requestStart &+ 10, flags: [.rst],
                            time: t(5))
        let (consumer, _) = reassemble(conversation.handshake + [clientData(4, "tail"), reset])
        let id = try #require(consumer.connectionIDs.first)
        // The RST's sequence number is where its sender's stream stood: bytes 8 and 9 were sent, never captured.
        #expect(consumer.pieces(id, .clientToServer) == [.gap(4), .bytes(Array("tail".utf8)), .gap(2)])
        #expect(consumer.endReason(id, .clientToServer) == .reset)
    }

    // MARK: Gaps

    @Test func acknowledgedFINProvesAHoleAndEndsWithAGap() throws {
        // Client bytes 5..<9 were never captured; the server acknowledges the client's FIN.
        var fin = clientData(12, "")
        fin.flags = [.fin, .ack]
        let finAck = Segment(source: server, destination: client, sequence: conversation.serverISN &+ 1,
                             ack: requestStart &+ 13, time: t(6))
        let segments = conversation.handshake + [clientData(0, "01234"), clientData(9, "9ab"), fin, finAck]
        var (consumer, reassembler) = reassemble(segments, finish: false)
        let id = try #require(consumer.connectionIDs.first)
        // A late segment may still fill the hole (a merged capture): nothing ends before the delay...
        #expect(consumer.endReason(id, .clientToServer) == nil)
        // ...after which the hole is capture loss.
        reassembler.expireIdle(now: t(6).adding(seconds: 1.5), into: &consumer)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("01234".utf8)), .gap(4), .bytes(Array("9ab".utf8))])
        #expect(consumer.endReason(id, .clientToServer) == .fin)
        #expect(reassembler.statistics.gapBytes == 4)
        #expect(reassembler.bufferedBytes == 0)
    }

    @Test func acknowledgedFINWithMissingTailEndsWithAGap() throws {
        var fin = clientData(20, "")
        fin.flags = [.fin, .ack]
        let finAck = Segment(source: server, destination: client, sequence: conversation.serverISN &+ 1,
                             ack: requestStart &+ 21, time: t(6))
        let (consumer, _) = reassemble(conversation.handshake + [clientData(0, "0123456789"), fin, finAck])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("0123456789".utf8)), .gap(10)])
        #expect(consumer.endReason(id, .clientToServer) == .fin)
    }

    @Test func holeLeftAtCaptureEndBecomesAGap() throws {
        let segments = conversation.handshake + [clientData(0, "ab"), clientData(5, "fg"), clientData(10, "kl")]
        let (consumer, reassembler) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer)
                == [.bytes(Array("ab".utf8)), .gap(3), .bytes(Array("fg".utf8)), .gap(3), .bytes(Array("kl".utf8))])
        #expect(consumer.endReason(id, .clientToServer) == .captureEnded)
        #expect(consumer.endReason(id, .serverToClient) == .captureEnded)
        #expect(consumer.closedIDs == [id])
        #expect(reassembler.connectionCount == 0)
        #expect(reassembler.bufferedBytes == 0)
    }

    @Test func bytesCutBySnapLengthAreAGap() throws {
        var cut = clientData(0, "GET /")
        cut.wireLength = 12
        let (consumer, _) = reassemble(conversation.handshake + [cut, clientData(12, "next")])
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("GET /".utf8)), .gap(7), .bytes(Array("next".utf8))])
    }

    // MARK: 4-tuple reuse

    @Test func reusedFourTupleAfterCloseIsANewConnection() throws {
        var second = Conversation()
        second.clientISN = 900_000
        second.serverISN = 42
        second.startMilliseconds = 100
        second.request = Array("GET /again HTTP/1.1\r\n\r\n".utf8)
        // A late retransmission of the first connection's request, after its close, must not open anything.
        var late = conversation.requestSegments[0]
        late.time = t(50)
        let (consumer, reassembler) = reassemble(conversation.inOrder + [late] + second.inOrder)
        #expect(consumer.contractViolations.isEmpty)
        #expect(consumer.connectionIDs.count == 2)
        let ids = consumer.connectionIDs
        #expect(ids[0] != ids[1])
        #expect(consumer.bytes(ids[0], .clientToServer) == conversation.request)
        #expect(consumer.bytes(ids[1], .clientToServer) == second.request)
        #expect(consumer.closedIDs == ids)
        #expect(reassembler.statistics.ignoredSegments >= 1)
    }

    @Test func newSYNOnAnOpenFourTupleEndsTheOldConnection() throws {
        var second = Conversation()
        second.clientISN = 77_777
        second.startMilliseconds = 100
        let first = conversation.handshake + conversation.requestSegments
        let (consumer, _) = reassemble(first + second.inOrder)
        let ids = consumer.connectionIDs
        #expect(ids.count == 2)
        #expect(consumer.endReason(ids[0], .clientToServer) == .evicted)
        #expect(consumer.bytes(ids[1], .serverToClient) == second.response)
        #expect(consumer.contractViolations.isEmpty)
    }

    @Test func ipv6EndpointsWork() throws {
        var conversation = Conversation()
        conversation.client = Endpoint(address: .v6(high: 0xfd00_0000_0000_0000, low: 5), port: 40000)
        conversation.server = Endpoint(address: .v6(high: 0xfd00_0000_0000_0000, low: 1), port: 8080)
        let (consumer, _) = reassemble(conversation.inOrder)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .serverToClient) == conversation.response)
        #expect(consumer.opened[id]?.server == conversation.server)
    }
}

@Suite("Reassembly: nothing after a FIN")
struct AfterFINTests {
    let conversation = Conversation()

    func clientSegment(_ offset: Int, _ text: String, flags: TCPFlags = [.ack]) -> Segment {
        Segment(source: client, destination: server, sequence: conversation.clientISN &+ 1 &+ UInt32(offset),
                ack: conversation.serverISN &+ 1, flags: flags, payload: Array(text.utf8), time: t(3))
    }

    @Test func bufferedBytesBeyondALaterFINAreDropped() throws {
        // "XYZ" claims offsets 8..<11 and is buffered; then a FIN says the stream ends at 6.
        let segments = conversation.handshake
            + [clientSegment(8, "XYZ"), clientSegment(3, "def", flags: [.fin, .ack]), clientSegment(0, "abc")]
        let (consumer, reassembler) = reassemble(segments, finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("abcdef".utf8))])
        #expect(consumer.endReason(id, .clientToServer) == .fin)
        #expect(reassembler.bufferedBytes == 0)
    }

    @Test func segmentCrossingTheFINIsCut() throws {
        let segments = conversation.handshake
            + [clientSegment(4, "", flags: [.fin, .ack]), clientSegment(2, "cdEXTRA"), clientSegment(0, "ab")]
        let (consumer, _) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .clientToServer) == [.bytes(Array("abcd".utf8))])
        #expect(consumer.endReason(id, .clientToServer) == .fin)
    }
}

@Suite("Reassembly: bytes the receiver acknowledged but the capture missed")
struct AcknowledgedHoleTests {
    let conversation = Conversation()

    func serverData(_ offset: Int, _ text: String, at milliseconds: Int) -> Segment {
        Segment(source: server, destination: client, sequence: conversation.serverISN &+ 1 &+ UInt32(offset),
                ack: conversation.clientISN &+ 1, payload: Array(text.utf8), time: t(milliseconds))
    }

    func clientAck(_ offset: Int, at milliseconds: Int) -> Segment {
        Segment(source: client, destination: server, sequence: conversation.clientISN &+ 1,
                ack: conversation.serverISN &+ 1 &+ UInt32(offset), time: t(milliseconds))
    }

    @Test func acknowledgedHoleBecomesAGapAfterTheDelay() throws {
        // Server bytes 4..<8 were lost by the capture; the client acknowledged all 12 at once.
        let segments = conversation.handshake + [
            serverData(0, "HTTP", at: 10), serverData(8, "/1.1", at: 11), clientAck(12, at: 12),
            clientAck(12, at: 500),  // still within the delay: keep waiting
        ]
        let (waiting, _) = reassemble(segments, finish: false)
        let id = try #require(waiting.connectionIDs.first)
        #expect(waiting.pieces(id, .serverToClient) == [.bytes(Array("HTTP".utf8))])

        let (consumer, reassembler) = reassemble(segments + [serverData(12, " 200", at: 1_100)], finish: false)
        #expect(consumer.pieces(id, .serverToClient)
                == [.bytes(Array("HTTP".utf8)), .gap(4), .bytes(Array("/1.1 200".utf8))])
        #expect(reassembler.bufferedBytes == 0)
        #expect(consumer.endReason(id, .serverToClient) == nil, "the stream goes on")
    }

    @Test func acknowledgedMissingTailIsAGapEvenWithoutLaterData() throws {
        // The last 6 bytes never show up; the periodic sweep (driven by any packet) announces them.
        let other = Conversation(client: Endpoint(address: .v4(0x0a00_0007), port: 50000))
        let segments = conversation.handshake + [serverData(0, "HTTP", at: 10), clientAck(10, at: 12)]
            + other.handshake.map { var segment = $0; segment.time = t(5_000); return segment }
        let (consumer, _) = reassemble(segments, finish: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .serverToClient) == [.bytes(Array("HTTP".utf8)), .gap(6)])
    }

    @Test func reorderedDataWithinTheDelayIsNoGap() throws {
        // An ACK seen before the data it covers (merged interfaces): the data still arrives in time.
        let segments = conversation.handshake + [
            clientAck(8, at: 10), serverData(4, "/1.1", at: 20), serverData(0, "HTTP", at: 30), clientAck(8, at: 2_000),
        ]
        let (consumer, reassembler) = reassemble(segments)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.pieces(id, .serverToClient) == [.bytes(Array("HTTP/1.1".utf8))])
        #expect(reassembler.statistics.gapBytes == 0)
    }
}
