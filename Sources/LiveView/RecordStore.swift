import FlowReassembly
import HTTPModel
import NIOConcurrencyHelpers
import NIOCore
import PacketDecoding

/// Every record the engine reported that `capture --http --json` would print (exchanges, TLS sessions, QUIC
/// connections, WebSocket messages), numbered from 0 in the order reported, with bodies kept up to the limits: what
/// the API pages through, the HAR download renders, and the body downloads serve. Safe to use from the engine's
/// thread (which adds) and the server's (which reads) at once.
public final class RecordStore: Sendable {
    private struct State {
        var records = CircularBuffer<StoredRecord>()
        /// Id of `records.first`.
        var firstID = 0
        var keptBodyBytes = 0
        var dropped = 0
        /// TLS or QUIC facts by connection, for the exchanges that follow them (bounded: oldest forgotten first).
        var sessions: [ConnectionID: Session] = [:]
        var sessionOrder = CircularBuffer<ConnectionID>()
        var throughput: ThroughputBuckets
        var directions: TrafficDirections
    }

    public let limits: LiveViewLimits
    private let state: NIOLockedValueBox<State>

    public init(limits: LiveViewLimits) {
        self.limits = limits
        state = NIOLockedValueBox(State(throughput: ThroughputBuckets(limit: limits.throughputBuckets),
                                        directions: TrafficDirections(limit: limits.connections)))
    }

    /// Numbers and keeps `exchange`; bodies past the limits are cut or left out here, and the record says so.
    @discardableResult
    public func add(_ exchange: HTTPExchange) -> StoredExchange {
        state.withLockedValue { state in
            // Room first: a dropped record's bodies give their share of the session limit back.
            let id = append(in: &state)
            var exchange = exchange
            let request = keep(&exchange.request, in: &state)
            let response = keep(&exchange.response, in: &state)
            let session = state.sessions[exchange.connection]
            let stored = StoredExchange(id: id, exchange: exchange, requestBody: request, responseBody: response,
                                        tls: session?.tls, quic: session?.quic)
            state.records.append(.exchange(stored))
            return stored
        }
    }

    /// Numbers and keeps a WebSocket message with what `--json` prints of its bytes (a text message's first
    /// `WebSocketMessage.textPrefixBytes`, nothing of other kinds), counted against the session limit like a body.
    public func add(_ message: WebSocketMessage) {
        state.withLockedValue { state in
            let id = append(in: &state)
            var message = message
            let shown = Array(message.kind == .text ? message.kept.prefix(WebSocketMessage.textPrefixBytes) : [])
            var body = HTTPBody(size: shown.count, digest: nil, encoding: [], transferSize: shown.count,
                                kept: shown, keptIsPartial: false, contentType: nil)
            let kept = keep(&body, in: &state)
            message.kept = body.kept
            state.records.append(.webSocket(id: id, message, kept))
        }
    }

    /// The TLS facts of a connection: a record of their own, and shown with the connection's later exchanges.
    public func add(tls facts: TLSSessionFacts) {
        state.withLockedValue { state in
            remember(.tls(facts), of: facts.connection, in: &state)
            state.records.append(.tls(id: append(in: &state), facts))
        }
    }

    /// A QUIC connection's facts (the notice `--json` prints as its `quic` record): a record of their own, and shown
    /// with the connection's later exchanges.
    public func add(quic notice: ConnectionNotice) {
        state.withLockedValue { state in
            remember(.quic(notice), of: notice.connection, in: &state)
            state.records.append(.quic(id: append(in: &state), notice))
        }
    }

    /// A connection's bytes that made no exchange (the notice `--json` prints as its `not_http` record).
    public func add(notHTTP notice: ConnectionNotice) {
        state.withLockedValue { state in
            state.records.append(.notHTTP(id: append(in: &state), notice))
        }
    }

    private func remember(_ session: Session, of connection: ConnectionID, in state: inout State) {
        if state.sessions.updateValue(session, forKey: connection) == nil {
            state.sessionOrder.append(connection)
            if state.sessionOrder.count > limits.connections { state.sessions[state.sessionOrder.removeFirst()] = nil }
        }
    }

    /// Makes room for one record (dropping the oldest past the limit) and returns its id.
    private func append(in state: inout State) -> Int {
        if state.records.count >= max(limits.exchanges, 1) {
            state.keptBodyBytes -= state.records.removeFirst().keptBytes
            state.firstID += 1
            state.dropped += 1
        }
        return state.firstID + state.records.count
    }

    private func keep<Message: HasBody>(_ message: inout Message?, in state: inout State) -> KeptBody {
        guard message != nil else { return KeptBody(size: 0, keptBytes: 0, loss: .noMessage) }
        return keep(&message!.body, in: &state)
    }

    private func keep(_ body: inout HTTPBody, in state: inout State) -> KeptBody {
        var loss: KeptBody.Loss?
        if body.kept.count > limits.bodyBytes {
            body.kept = Array(body.kept.prefix(limits.bodyBytes))
            body.keptIsPartial = true
            loss = .overBodyLimit(limits.bodyBytes)
        }
        if state.keptBodyBytes + body.kept.count > limits.sessionBodyBytes {
            body.kept = []
            body.keptIsPartial = body.size > 0
            loss = .sessionLimitReached(limits.sessionBodyBytes)
        }
        if loss == nil && body.kept.count < body.size {
            loss = .notCaptured
        }
        state.keptBodyBytes += body.kept.count
        return KeptBody(size: body.size, keptBytes: body.kept.count, loss: loss)
    }

    /// Counts one packet's bytes in its direction.
    public func addTraffic(of packet: DecodedPacket) {
        state.withLockedValue { state in
            guard let traffic = state.directions.traffic(of: packet) else { return }
            state.throughput.add(traffic.bytes, up: traffic.up, at: packet.timestamp)
        }
    }

    public var throughput: ThroughputBuckets { state.withLockedValue { $0.throughput } }

    /// Records with an id of `since` or more, at most a page; `next` is the id to ask for next time, `dropped` how
    /// many records were dropped for the limit since the capture began.
    public func page(since: Int, limit: Int? = nil) -> (records: [StoredRecord], next: Int, dropped: Int) {
        state.withLockedValue { state in
            let from = min(max(since, state.firstID) - state.firstID, state.records.count)
            let count = min(state.records.count - from, max(limit ?? limits.pageSize, 1))
            let start = state.records.index(state.records.startIndex, offsetBy: from)
            let slice = Array(state.records[start..<state.records.index(start, offsetBy: count)])
            return (slice, state.firstID + from + count, state.dropped)
        }
    }

    /// The id the next record will get.
    public var nextID: Int { state.withLockedValue { $0.firstID + $0.records.count } }

    public func exchange(id: Int) -> StoredExchange? {
        state.withLockedValue { state in
            let position = id - state.firstID
            guard position >= 0, position < state.records.count,
                  case .exchange(let stored) = state.records[state.records.index(state.records.startIndex, offsetBy: position)]
            else { return nil }
            return stored
        }
    }

    /// The exchanges held with an id of `since` or more, in id order (for the HAR download).
    public func exchanges(since: Int = 0) -> [StoredExchange] {
        state.withLockedValue { state in
            state.records.compactMap { record in
                guard case .exchange(let stored) = record, stored.id >= since else { return nil }
                return stored
            }
        }
    }

    public var counts: (held: Int, dropped: Int, keptBodyBytes: Int) {
        state.withLockedValue { ($0.records.count, $0.dropped, $0.keptBodyBytes) }
    }
}

/// One record as the store holds it: what `--http --json` prints as one line, with its id.
public enum StoredRecord: Sendable {
    case exchange(StoredExchange)
    case tls(id: Int, TLSSessionFacts)
    /// A QUIC connection's notice, as `--json` prints it (`QUICJSONRenderer`).
    case quic(id: Int, ConnectionNotice)
    /// A connection's bytes that made no exchange, as `--json` prints it (`NotHTTPJSONRenderer`).
    case notHTTP(id: Int, ConnectionNotice)
    /// The message's bytes cut to the limits, and what of them was kept.
    case webSocket(id: Int, WebSocketMessage, KeptBody)

    public var id: Int {
        switch self {
        case .exchange(let stored): stored.id
        case .tls(let id, _), .quic(let id, _), .notHTTP(let id, _), .webSocket(let id, _, _): id
        }
    }

    var keptBytes: Int {
        switch self {
        case .exchange(let stored): stored.requestBody.keptBytes + stored.responseBody.keptBytes
        case .tls, .quic, .notHTTP: 0
        case .webSocket(_, _, let kept): kept.keptBytes
        }
    }
}

/// One exchange as the store holds it.
public struct StoredExchange: Sendable {
    public let id: Int
    /// Bodies cut to what was kept.
    public let exchange: HTTPExchange
    public let requestBody: KeptBody
    public let responseBody: KeptBody
    /// The connection's TLS facts, when it was TLS and they came first.
    public let tls: TLSSessionFacts?
    /// The connection's QUIC facts (HTTP/3), when they came first.
    public let quic: ConnectionNotice?
}

/// What the store remembers of a connection for its exchanges.
enum Session {
    case tls(TLSSessionFacts)
    case quic(ConnectionNotice)

    var tls: TLSSessionFacts? { if case .tls(let facts) = self { facts } else { nil } }
    var quic: ConnectionNotice? { if case .quic(let notice) = self { notice } else { nil } }
}

/// What of a body the store holds, and why not all of it.
public struct KeptBody: Sendable, Equatable {
    public enum Loss: Sendable, Equatable, CustomStringConvertible {
        /// No request or response was captured.
        case noMessage
        case overBodyLimit(Int)
        case sessionLimitReached(Int)
        /// The decoder has fewer bytes than the body's size (a gap, an unfinished message, a failed decoding, or a
        /// WebSocket message past the decoder's keep limit).
        case notCaptured

        public var description: String {
            switch self {
            case .noMessage: "no message was captured"
            case .overBodyLimit(let limit): "over the per-body limit: only the first \(limit) bytes were kept"
            case .sessionLimitReached(let limit): "the session's body limit (\(limit) bytes) was reached: not kept"
            case .notCaptured: "not all of the body was captured"
            }
        }
    }

    public let size: Int
    public let keptBytes: Int
    public let loss: Loss?

    public var whole: Bool { loss == nil }
}

protocol HasBody { var body: HTTPBody { get set } }
extension HTTPRequest: HasBody {}
extension HTTPResponse: HasBody {}
