/// Where a gap falls in a direction's stream of messages (`HTTPMessageParser.place(ofGap:)`).
enum GapPlace {
    /// Inside the message being read, whose framing skips it (or in bytes not parsed as HTTP): pairing is safe.
    case insideMessage
    /// Past the end of the message being read, or between messages: whole messages may have been lost.
    /// `bytesToMessageEnd`: how many of the gap's bytes still belonged to the message being read (nil when its
    /// framing does not say: chunked, a cut head); `lostWholeMessages`: whether bytes of a following message were
    /// surely lost (the gap runs past a known message end).
    case pastMessageEnd(bytesToMessageEnd: Int?, lostWholeMessages: Bool)
}

/// A gap in the response stream that may have swallowed whole responses, until the next response head settles
/// which queued requests it answered.
struct ResponseGap {
    /// Where the last response known before it ended (or the gap began, when that is not known), and its length.
    var start: Int
    var length: Int
    var lostWholeMessages: Bool
}

/// Which queued request a response answers after a gap, read from the ACK numbers (all offsets are bytes into a
/// direction's stream, gaps counted):
///
/// - A server answers a request only after receiving it: the response's segment acknowledged past the start of
///   the request it answers. Requests starting at or after that point are not answered by it; when even the
///   oldest queued one is, and the request stream had a gap, the response's own request was lost.
/// - A client cannot have received any of a response before sending the request it answers: a queued request
///   whose segment acknowledged this response's first byte (or beyond) is answered by this response or a later one,
///   never by one lost before it.
/// - A gap past the end of a known response, in a response stream made of messages, lost at least one response.
/// - A client that waits for each response before sending the next request (it never pipelined on this
///   connection) sent the request after a lost response once that response had arrived: a queued request whose
///   segment acknowledged bytes inside the gap follows a response that ended there.
///
/// The first two are causality, and bound the answer from above; the last two are evidence of loss, and bound it
/// from below. The smallest answer within the bounds is taken (the first-in-first-out one when no evidence says
/// otherwise); when the bounds disagree, causality wins. Wireshark pairs a response with the latest request and
/// Zeek stops parsing the direction at such a gap; docs/http.md compares.
enum GapPairing {
    enum Answer: Equatable {
        /// The response answers the queued request at this index; the ones before it lost their responses.
        case request(Int)
        /// The response answers none of the queued requests: its request was not captured.
        case none
    }

    /// `queued` requests, oldest first, read through `start` (offset of each in the request stream) and
    /// `acknowledged` (how far into the response stream its segment acknowledged). `responseStart` and
    /// `responseAcknowledged` are the response's own; `gap` the response-stream gap before it, if any;
    /// `requestGapSeen` whether the request stream had a gap between messages. Reads each request at most twice;
    /// allocates nothing.
    static func answer(queued: Int, start: (Int) -> Int, acknowledged: (Int) -> Int?, responseStart: Int,
                       responseAcknowledged: Int?, gap: ResponseGap?, requestGapSeen: Bool,
                       clientPipelines: Bool) -> Answer {
        guard queued > 0 else { return .none }
        var upper = queued - 1
        if let received = responseAcknowledged {
            var answerable = 0
            while answerable < queued && start(answerable) < received { answerable += 1 }
            if answerable == 0 { return requestGapSeen ? .none : .request(0) }
            upper = answerable - 1
        }
        guard let gap else { return .request(0) }
        var lower = gap.lostWholeMessages ? 1 : 0
        for index in 0..<queued {
            guard let seen = acknowledged(index) else { continue }
            if !clientPipelines && index > lower && seen > gap.start && seen <= responseStart { lower = index }
            if seen >= responseStart {
                upper = min(upper, index)
                break
            }
        }
        return .request(min(lower, upper))
    }
}
