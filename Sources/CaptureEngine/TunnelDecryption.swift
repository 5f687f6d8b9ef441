import FlowReassembly
import HTTP2
import HTTPDecoding
import HTTPModel
import PacketDecoding
import TLS

/// TLS inside a CONNECT tunnel (an app behind an HTTP proxy), decrypted with the key log every other connection
/// uses, and what it carries decoded as on any TLS connection: HTTP/1.x, or HTTP/2 by ALPN. HTTPDecoding still
/// reports the CONNECT exchange and the tunnel's byte counts; this reads the tunnel's content, on the tunnel's
/// connection (the client's connection to the proxy). The router makes it the tunnel's inner handler.
final class TunnelDecryptor: ConnectionHandler {
    private let context: TakeoverContext
    private var consumer: TLSDecryptingConsumer<HTTPStreamDecoder>
    private var opened = false

    /// The takeover for an HTTP decoder (`--http`, `--stats`): HTTP/2 and WebSocket, and with a key log the TLS
    /// inside CONNECT tunnels. Tunnels inside a tunnel are not decrypted again: the inner decoders get the HTTP/2
    /// and WebSocket takeovers alone.
    static func takeover(keys: TLSKeySource?, limits: TLSDecryptionLimits,
                         onSession: @escaping (TLSSessionFacts) -> Void) -> TakeoverFactory {
        let base = HTTP2Takeover().factory
        guard let keys else { return base }
        return { context, next in
            guard case .tunnel = next else { return base(context, next) }
            return TunnelDecryptor(context: context, base: base, keys: keys, limits: limits, onSession: onSession)
        }
    }

    private init(context: TakeoverContext, base: @escaping TakeoverFactory, keys: TLSKeySource,
                 limits: TLSDecryptionLimits, onSession: @escaping (TLSSessionFacts) -> Void) {
        self.context = context
        let http = HTTPStreamDecoder(limits: context.limits, takeover: base, budget: context.budget, onEvent: context.emit)
        consumer = TLSDecryptingConsumer(keys: keys, limits: limits, inner: http, onSession: onSession)
    }

    private func open(at time: Timestamp) {
        guard !opened else { return }
        opened = true
        consumer.connectionOpened(context.connection, client: context.client, server: context.server, at: time)
    }

    // What the tunnel carries has routers of its own (inside the inner HTTP decoder): nothing is handed on here.
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
        open(at: time)
        consumer.streamData(context.connection, direction, bytes, at: time)
        return nil
    }

    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
        open(at: time)
        consumer.streamGap(context.connection, direction, length: length, at: time)
        return nil
    }

    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
        open(at: time)
        consumer.streamEnded(context.connection, direction, reason: reason, at: time)
        return nil
    }

    func close(at time: Timestamp) {
        guard opened else { return }
        consumer.connectionClosed(context.connection, at: time)
        // The tunnel's own end is the last chance for its records: nothing else reaches this consumer afterwards.
        consumer.finishWaiting(at: time)
    }
}
