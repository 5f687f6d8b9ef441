import CaptureEngine
import FlowReassembly
import Foundation
import HTTPModel
import NIOConcurrencyHelpers
import PacketDecoding
import Reports

/// The live view as the executable uses it: a second consumer of the capture engine's events beside the terminal.
/// `handle` and `observe` are called on the engine's threads and only take a lock to add to the store; the server
/// reads the store on its own threads.
public final class LiveView: Sendable {
    public let store: RecordStore
    public let conditioner: ConditionerPanel
    public let server: LiveViewServer
    private let include: @Sendable (HTTPExchange) -> Bool
    private let ended: NIOLockedValueBox<Bool>
    /// Connections whose upgrade exchange was kept: their WebSocket messages are kept too, as the terminal shows them.
    /// Touched on the engine's thread only, but held in a lock so the view stays `Sendable`.
    private let upgraded = NIOLockedValueBox(Set<ConnectionID>())

    /// `include`: the exchanges to keep, the same the terminal shows (its `--host`, `--path`... filter).
    public init(binding: LiveViewBinding, source: LiveViewSource, limits: LiveViewLimits = LiveViewLimits(),
                conditioner: ConditionerPanel, token: LiveViewToken = LiveViewToken(),
                include: @escaping @Sendable (HTTPExchange) -> Bool = { _ in true }) throws {
        store = RecordStore(limits: limits)
        self.conditioner = conditioner
        self.include = include
        let ended = NIOLockedValueBox(false)
        self.ended = ended
        let router = LiveViewRouter(requestGuard: RequestGuard(token: token, address: binding.address),
                                    store: store, source: source, started: Date(), conditioner: conditioner,
                                    ended: { ended.withLockedValue { $0 } })
        server = try LiveViewServer(binding: binding, router: router)
    }

    public var url: String { server.url }

    /// One engine event.
    public func handle(_ event: CaptureEvent) {
        switch event {
        case .http(.exchange(let exchange)):
            guard include(exchange) else { return }
            store.add(exchange)
            if exchange.upgradeDecoded {
                upgraded.withLockedValue { set in
                    if set.count >= store.limits.connections { set.removeAll() }
                    set.insert(exchange.connection)
                }
            }
        case .http(.webSocket(let message)):
            if upgraded.withLockedValue({ $0.contains(message.connection) }) { store.add(message) }
        case .tls(let facts):
            store.add(tls: facts)
        case .http(.notice(let notice)) where QUICJSONRenderer.isRecord(notice):
            store.add(quic: notice)  // as `--json` prints it: QUIC connections with a key log
        case .http(.notice(let notice)) where NotHTTPJSONRenderer.isRecord(notice):
            store.add(notHTTP: notice)  // as `--json` prints it: bytes that made no exchange
        case .http(.notice), .http(.warning):
            break
        }
    }

    /// One decoded packet, for the throughput timeline.
    public func observe(_ packet: DecodedPacket) {
        store.addTraffic(of: packet)
    }

    /// The source has been read to its end (a file, or the command ended): the page is told.
    public func sourceEnded() { ended.withLockedValue { $0 = true } }

    /// Stops serving; a conditioned interface gets back what it had when the view started. Returns what went wrong
    /// with that, in words, for the executable to say.
    public func stop() -> String? {
        server.stop()
        return conditioner.finish()
    }
}
