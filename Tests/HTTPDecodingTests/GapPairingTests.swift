@testable import HTTPDecoding
import Testing

/// `GapPairing` on the shapes a lost message leaves in the ACK numbers. Requests are 100 bytes, responses 1,000;
/// offsets are bytes into each direction's stream. The captures in Tests/Fixtures/edges check the same end to end.
@Suite struct GapPairingTests {
    struct Request { var start: Int; var acknowledged: Int? }

    static func answer(_ queued: [Request], responseStart: Int, responseAcknowledged: Int?, gap: ResponseGap?,
                       requestGapSeen: Bool = false, pipelines: Bool = false) -> GapPairing.Answer {
        GapPairing.answer(queued: queued.count, start: { queued[$0].start }, acknowledged: { queued[$0].acknowledged },
                          responseStart: responseStart, responseAcknowledged: responseAcknowledged, gap: gap,
                          requestGapSeen: requestGapSeen, clientPipelines: pipelines)
    }

    /// A client that waits for each response: the second response (1000..<2000) lost, the third at 2000. The third
    /// request was sent once the second response had arrived (ACK 2000), and the third response acknowledges it.
    @Test func aLostResponseOfAClientThatWaitsPassesOverItsRequest() {
        let queued = [Request(start: 100, acknowledged: 1000), Request(start: 200, acknowledged: 2000)]
        let gap = ResponseGap(start: 1000, length: 1000, lostWholeMessages: true)
        #expect(Self.answer(queued, responseStart: 2000, responseAcknowledged: 300, gap: gap) == .request(1))
        // A chunked response cut by the gap gives no evidence of its own; the client's ACK inside the gap does.
        let unknownEnd = ResponseGap(start: 1000, length: 1000, lostWholeMessages: false)
        #expect(Self.answer(queued, responseStart: 2000, responseAcknowledged: 300, gap: unknownEnd) == .request(1))
    }

    /// Five requests in one segment (all acknowledging nothing of the responses), the third response lost.
    @Test func aLostPipelinedResponsePassesOverOneRequest() {
        let queued = [Request(start: 200, acknowledged: 0), Request(start: 300, acknowledged: 0),
                      Request(start: 400, acknowledged: 0)]
        let gap = ResponseGap(start: 2000, length: 1000, lostWholeMessages: true)
        #expect(Self.answer(queued, responseStart: 3000, responseAcknowledged: 500, gap: gap, pipelines: true)
                == .request(1))
    }

    /// Two requests in flight at a time: request k+2 sent when response k arrived. Response 3 (2000..<3000) lost;
    /// request 5 acknowledges its end, which for a client that waits would mean response 4 was lost too. The
    /// client was seen pipelining, and the fourth response was sent before the fifth request arrived.
    @Test func aClientThatPipelinesIsNotReadAsOneThatWaits() {
        let queued = [Request(start: 200, acknowledged: 1000), Request(start: 300, acknowledged: 2000),
                      Request(start: 400, acknowledged: 3000)]
        let gap = ResponseGap(start: 2000, length: 1000, lostWholeMessages: true)
        #expect(Self.answer(queued, responseStart: 3000, responseAcknowledged: 400, gap: gap, pipelines: true)
                == .request(1))
        // Even read as a client that waits, causality (the server had not received the fifth request) holds it.
        #expect(Self.answer(queued, responseStart: 3000, responseAcknowledged: 400, gap: gap) == .request(1))
    }

    /// The second request (100..<200) lost: the second response acknowledges 200, before the third request.
    @Test func aResponseToALostRequestAnswersNone() {
        let queued = [Request(start: 200, acknowledged: 2000)]
        #expect(Self.answer(queued, responseStart: 1000, responseAcknowledged: 200, gap: nil, requestGapSeen: true)
                == .none)
        // Without a gap in the request stream nothing says a request was lost: first in, first out.
        #expect(Self.answer(queued, responseStart: 1000, responseAcknowledged: 200, gap: nil) == .request(0))
    }

    /// A lost `100 Continue` ahead of the final response: the gap lost a message, but the next request was sent
    /// after the final response arrived and the server had not received it, so the first request keeps it.
    @Test func causalityWinsOverTheGapsEvidence() {
        let queued = [Request(start: 0, acknowledged: 0), Request(start: 5000, acknowledged: 1025)]
        let gap = ResponseGap(start: 0, length: 25, lostWholeMessages: true)
        #expect(Self.answer(queued, responseStart: 25, responseAcknowledged: 5000, gap: gap) == .request(0))
    }

    /// No ACK numbers at all (decrypted TLS): only the gap's own evidence.
    @Test func withoutAcknowledgmentsOnlyTheGapSpeaks() {
        let queued = [Request(start: 0, acknowledged: nil), Request(start: 100, acknowledged: nil)]
        #expect(Self.answer(queued, responseStart: 2000, responseAcknowledged: nil,
                            gap: ResponseGap(start: 1000, length: 1000, lostWholeMessages: true)) == .request(1))
        #expect(Self.answer(queued, responseStart: 2000, responseAcknowledged: nil,
                            gap: ResponseGap(start: 1000, length: 1000, lostWholeMessages: false)) == .request(0))
    }
}
