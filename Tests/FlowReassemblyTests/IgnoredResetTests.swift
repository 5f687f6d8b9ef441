import FlowReassembly
import PacketDecoding
import Testing

/// RSTs a real stack ignores do not end the connection, but are reported (issue 9).
@Suite struct IgnoredResetTests {
    static let data = Array("GET / HTTP/1.1\r\n\r\n".utf8)

    static func run(reset: Segment, signed: Bool) -> RecordingConsumer {
        var reassembler = TCPReassembler()
        var consumer = RecordingConsumer()
        for segment in CausalOrderTests.handshake { reassembler.feed(segment, into: &consumer) }
        reset.payload.withUnsafeBytes { payload in
            reassembler.process(source: reset.source, destination: reset.destination, sequenceNumber: reset.sequence,
                                acknowledgmentNumber: reset.ack, flags: reset.flags, payload: payload, at: reset.time,
                                into: &consumer, signedReset: signed)
        }
        reassembler.feed(Segment(source: client, destination: server, sequence: CausalOrderTests.clientISN &+ 1,
                                 ack: CausalOrderTests.serverISN &+ 1, payload: data, time: t(9)), into: &consumer)
        reassembler.finish(into: &consumer)
        return consumer
    }

    @Test func aSignedResetIsIgnored() throws {
        let reset = Segment(source: server, destination: client, sequence: CausalOrderTests.serverISN &+ 1,
                            flags: [.rst], time: t(5))
        let consumer = Self.run(reset: reset, signed: true)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == Self.data)
        #expect(consumer.reassemblyWarnings.contains(.resetIgnored(.signed)))
        #expect(consumer.endReason(id, .clientToServer) == .captureEnded)
    }

    @Test func aResetOutsideTheWindowIsIgnored() throws {
        let reset = Segment(source: server, destination: client, sequence: CausalOrderTests.serverISN &- 5000,
                            flags: [.rst], time: t(5))
        let consumer = Self.run(reset: reset, signed: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == Self.data)
        #expect(consumer.reassemblyWarnings.contains {
            if case .resetIgnored(.outsideWindow) = $0 { true } else { false }
        })
    }

    @Test func anInWindowResetStillEndsTheConnection() throws {
        let reset = Segment(source: server, destination: client, sequence: CausalOrderTests.serverISN &+ 1,
                            flags: [.rst], time: t(5))
        let consumer = Self.run(reset: reset, signed: false)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.endReason(id, .clientToServer) == .reset)
    }
}
