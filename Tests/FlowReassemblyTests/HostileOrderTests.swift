import FlowReassembly
import PacketDecoding
import Testing

/// Orders that made reassembly quadratic (issue 9), and timestamps at the edges of the range.
@Suite struct HostileOrderTests {
    static let isn: UInt32 = 1000

    static func syn() -> Segment { Segment(source: client, destination: server, sequence: isn, flags: [.syn]) }

    @Test func reverseOrderIsLinear() throws {
        let count = 100_000
        let bytes = pattern(count)
        var segments = [Self.syn()]
        for offset in stride(from: count - 1, through: 0, by: -1) {
            segments.append(Segment(source: client, destination: server, sequence: Self.isn &+ 1 &+ UInt32(offset),
                                    payload: [bytes[offset]]))
        }
        var limits = ReassemblyLimits.default
        limits.maxBufferedSegmentsPerConnection = Int.max
        let clock = ContinuousClock()
        let started = clock.now
        let (consumer, _) = reassemble(segments, limits: limits)
        let elapsed = clock.now - started
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == bytes)
        // Quadratic took minutes for this; linear is well under a few seconds even in a debug build.
        #expect(elapsed < .seconds(20), "\(elapsed)")
    }

    @Test func oneByteHolesFilledInOrderAreLinear() throws {
        let count = 100_000
        let bytes = pattern(2 * count)
        var segments = [Self.syn()]
        for i in 0..<count {  // every odd byte first, each after a 1-byte hole
            segments.append(Segment(source: client, destination: server, sequence: Self.isn &+ 2 &+ UInt32(2 * i),
                                    payload: [bytes[2 * i + 1]]))
        }
        for i in 0..<count {
            segments.append(Segment(source: client, destination: server, sequence: Self.isn &+ 1 &+ UInt32(2 * i),
                                    payload: [bytes[2 * i]]))
        }
        var limits = ReassemblyLimits.default
        limits.maxBufferedSegmentsPerConnection = Int.max
        let (consumer, _) = reassemble(segments, limits: limits)
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.bytes(id, .clientToServer) == bytes)
    }

    @Test func theChunkCountLimitGivesUpHolesWithAWarning() throws {
        var segments = [Self.syn()]
        for i in 0..<100 {
            segments.append(Segment(source: client, destination: server, sequence: Self.isn &+ 2 &+ UInt32(2 * i),
                                    payload: [1]))
        }
        var limits = ReassemblyLimits.default
        limits.maxBufferedSegmentsPerConnection = 10
        let (consumer, reassembler) = reassemble(segments, limits: limits, finish: false)
        #expect(consumer.limitsGivenUpOn.contains(.chunksPerConnection(10)))
        #expect(reassembler.bufferedBytes <= 10)
    }

    @Test func timestampsAtTheEdgesDoNotTrap() {
        let early = Timestamp(seconds: .min, nanoseconds: 0)
        let late = Timestamp(seconds: .max, nanoseconds: 999_999_999)
        #expect(late.seconds(since: early) > 1e19)
        #expect(early.seconds(since: late) < -1e19)
        #expect(late.adding(seconds: 1e30) == late)
        #expect(early.adding(seconds: -1e30).seconds == .min)
        #expect(late.adding(seconds: .infinity) == late)
        #expect(Timestamp(seconds: 5, subsecondNanoseconds: 4_294_967_295_000) ==
                Timestamp(seconds: 5 + 4294, nanoseconds: 967_295_000))
        #expect(Timestamp(seconds: .max, subsecondNanoseconds: 2_000_000_000).seconds == .max)
        // A connection whose packets jump between the ends of time: idle expiry and hole timers must not trap.
        let segments = [
            Segment(source: client, destination: server, sequence: Self.isn, flags: [.syn], time: late),
            Segment(source: client, destination: server, sequence: Self.isn &+ 1, payload: [1, 2], time: early),
            Segment(source: server, destination: client, sequence: 77, ack: Self.isn &+ 9, payload: [3], time: late),
            Segment(source: client, destination: server, sequence: Self.isn &+ 5, payload: [4], time: early),
        ]
        let (consumer, _) = reassemble(segments)
        #expect(consumer.contractViolations.isEmpty)
    }
}
