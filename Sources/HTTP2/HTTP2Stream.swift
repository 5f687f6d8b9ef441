import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding

/// One HTTP/2 stream while it is open: each side's header fields, body and trailers as they arrive.
final class HTTP2Stream {
    /// One direction of the stream: the request (client side) or the response (server side).
    final class Side {
        let role: MessageRole
        var fields: [(name: String, value: String)]?
        /// HPACK-compressed bytes of the header blocks, for the head size.
        var headBytes = 0
        var body: BodyAccumulator?
        var trailers: [(name: String, value: String)] = []
        var start: Timestamp?
        var end: Timestamp?
        var ended = false
        var grpc: GRPCMessageCounter?

        init(role: MessageRole) { self.role = role }

        func body(limits: HTTPDecoderLimits, budget: DecodedBytesBudget?) -> BodyAccumulator {
            if let body { return body }
            let accumulator = BodyAccumulator(role: role, fields: fields, limits: limits, budget: budget)
            body = accumulator
            return accumulator
        }
    }

    let id: UInt32
    var promisedOn: UInt32?
    let request = Side(role: .request)
    let response = Side(role: .response)
    var interim: [HTTPInterimResponse] = []
    var outcome = HTTP2StreamFacts.Outcome.complete
    var warnings: [HTTPWarning] = []
    var headerTableUnknown = false
    /// h2c: the HTTP/1.1 request that asked for the upgrade is this stream's request.
    var upgradeRequest: HTTPRequest?
    var isGRPC = false

    init(id: UInt32) { self.id = id }

    func side(_ direction: StreamDirection) -> Side { direction == .clientToServer ? request : response }

    var isDone: Bool { request.ended && response.ended }
}
