import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding

/// One HTTP/3 request stream (or server push) while it is open: each side's frames, fields, body and trailers.
final class HTTP3Exchange {
    /// The request (client) or response (server) side.
    final class Side {
        let role: MessageRole
        var reader: HTTP3FrameReader
        var fields: [(name: String, value: String)]?
        var trailers: [(name: String, value: String)] = []
        /// QPACK-compressed bytes of the header blocks, for the head size.
        var headBytes = 0
        var body: BodyAccumulator?
        var start: Timestamp?
        var end: Timestamp?
        /// FIN (or a reset) seen and everything before it read.
        var ended = false
        /// A gap: frame boundaries lost, later bytes not decoded.
        var lost = false
        /// A header block of this side waits for QPACK entries; what follows it is held.
        var blocked: BlockedBlock?
        var held: [UInt8] = []
        var finHeld = false

        init(role: MessageRole, maxBufferedFrameBytes: Int) {
            self.role = role
            reader = HTTP3FrameReader(maxBufferedFrameBytes: maxBufferedFrameBytes)
        }

        func body(limits: HTTPDecoderLimits, budget: DecodedBytesBudget?) -> BodyAccumulator {
            if let body { return body }
            let accumulator = BodyAccumulator(role: role, fields: fields, limits: limits, budget: budget)
            body = accumulator
            return accumulator
        }
    }

    /// What a waiting header block will be once decoded.
    struct BlockedBlock {
        var bytes: Int
        /// A PUSH_PROMISE for this push ID (else HEADERS).
        var promise: UInt64?
        /// The QPACK stream key it waits under.
        var qpackStream: UInt64
    }

    var streamID: UInt64?
    var pushID: UInt64?
    var promisedOn: UInt64?
    let request: Side
    let response: Side
    var interim: [HTTPInterimResponse] = []
    var outcome = HTTP3StreamFacts.Outcome.complete
    var warnings: [HTTPWarning] = []
    var headerTableUnknown = false
    /// Reported already (a limit may report an exchange while one of its frames is being read).
    var reported = false
    /// Order of creation, for reporting what is left at the end in a stable order.
    let order: Int

    init(streamID: UInt64?, pushID: UInt64? = nil, order: Int, maxBufferedFrameBytes: Int) {
        self.streamID = streamID
        self.pushID = pushID
        self.order = order
        request = Side(role: .request, maxBufferedFrameBytes: maxBufferedFrameBytes)
        response = Side(role: .response, maxBufferedFrameBytes: maxBufferedFrameBytes)
    }

    func side(_ direction: StreamDirection) -> Side { direction == .clientToServer ? request : response }

    var isDone: Bool { request.ended && response.ended }
}
