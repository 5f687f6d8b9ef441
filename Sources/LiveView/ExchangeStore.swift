import FlowReassembly
import HTTPModel
import NIOConcurrencyHelpers
import NIOCore
import PacketDecoding

/// Every exchange the engine reported, numbered from 0 in the order reported, with bodies kept up to the limits:
/// what the API pages through, the HAR download renders, and the body downloads serve. Safe to use from the engine's
/// thread (which adds) and the server's (which reads) at once.
public final class ExchangeStore: Sendable {
    private struct State {
        var exchanges = CircularBuffer<StoredExchange>()
        /// Id of `exchanges.first`.
        var firstID = 0
        var keptBodyBytes = 0
        var dropped = 0
        var tls: [ConnectionID: TLSSessionFacts] = [:]
        var tlsOrder = CircularBuffer<ConnectionID>()
        var throughput: ThroughputBuckets
    }

    public let limits: LiveViewLimits
    private let state: NIOLockedValueBox<State>

    public init(limits: LiveViewLimits) {
        self.limits = limits
        state = NIOLockedValueBox(State(throughput: ThroughputBuckets(limit: limits.throughputBuckets)))
    }

    /// Numbers and keeps `exchange`; bodies past the limits are cut or left out here, and the record says so.
    @discardableResult
    public func add(_ exchange: HTTPExchange) -> StoredExchange {
        state.withLockedValue { state in
            if state.exchanges.count >= max(limits.exchanges, 1) {
                let oldest = state.exchanges.removeFirst()
                state.keptBodyBytes -= oldest.keptBytes
                state.firstID += 1
                state.dropped += 1
            }
            var exchange = exchange
            let request = keep(&exchange.request, in: &state)
            let response = keep(&exchange.response, in: &state)
            let stored = StoredExchange(id: state.firstID + state.exchanges.count, exchange: exchange,
                                        requestBody: request, responseBody: response,
                                        tls: state.tls[exchange.connection])
            state.exchanges.append(stored)
            return stored
        }
    }

    private func keep<Message: HasBody>(_ message: inout Message?, in state: inout State) -> KeptBody {
        guard var body = message?.body else { return KeptBody(size: 0, keptBytes: 0, loss: .noMessage) }
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
        message!.body = body
        return KeptBody(size: body.size, keptBytes: body.kept.count, loss: loss)
    }

    /// The TLS facts of a connection, shown with its later exchanges (they come before its first exchange).
    public func add(tls facts: TLSSessionFacts) {
        state.withLockedValue { state in
            if state.tls.updateValue(facts, forKey: facts.connection) == nil {
                state.tlsOrder.append(facts.connection)
                if state.tlsOrder.count > limits.connections { state.tls[state.tlsOrder.removeFirst()] = nil }
            }
        }
    }

    /// Counts one packet's bytes; returns the buckets that closed with it.
    public func addTraffic(_ bytes: Int, up: Bool, at time: Timestamp) -> (closed: Range<Int>, buckets: ThroughputBuckets)? {
        state.withLockedValue { state in
            let closed = state.throughput.add(bytes, up: up, at: time)
            return closed.isEmpty ? nil : (closed, state.throughput)
        }
    }

    public var throughput: ThroughputBuckets { state.withLockedValue { $0.throughput } }

    /// Exchanges with an id of `since` or more, at most a page; `next` is the id to ask for next time, `dropped`
    /// how many exchanges were dropped for the exchange limit since the capture began.
    public func page(since: Int, limit: Int? = nil) -> (exchanges: [StoredExchange], next: Int, dropped: Int) {
        state.withLockedValue { state in
            let from = min(max(since, state.firstID) - state.firstID, state.exchanges.count)
            let count = min(state.exchanges.count - from, max(limit ?? limits.pageSize, 1))
            let start = state.exchanges.index(state.exchanges.startIndex, offsetBy: from)
            let slice = Array(state.exchanges[start..<state.exchanges.index(start, offsetBy: count)])
            return (slice, state.firstID + from + count, state.dropped)
        }
    }

    /// The id the next exchange will get.
    public var nextID: Int { state.withLockedValue { $0.firstID + $0.exchanges.count } }

    public func exchange(id: Int) -> StoredExchange? {
        state.withLockedValue { state in
            let position = id - state.firstID
            guard position >= 0, position < state.exchanges.count else { return nil }
            return state.exchanges[state.exchanges.index(state.exchanges.startIndex, offsetBy: position)]
        }
    }

    /// Every exchange held, in id order (for the HAR download).
    public var all: [StoredExchange] { state.withLockedValue { Array($0.exchanges) } }

    public var counts: (held: Int, dropped: Int, keptBodyBytes: Int) {
        state.withLockedValue { ($0.exchanges.count, $0.dropped, $0.keptBodyBytes) }
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

    var keptBytes: Int { requestBody.keptBytes + responseBody.keptBytes }
}

/// What of a body the store holds, and why not all of it.
public struct KeptBody: Sendable, Equatable {
    public enum Loss: Sendable, Equatable, CustomStringConvertible {
        /// No request or response was captured.
        case noMessage
        case overBodyLimit(Int)
        case sessionLimitReached(Int)
        /// The decoder has fewer bytes than the body's size (a gap, an unfinished message, a failed decoding).
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
