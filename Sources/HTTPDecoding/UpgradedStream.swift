import FlowReassembly
import HTTPModel
import PacketDecoding
import TLSWire

/// Takes a connection's bytes once HTTP/1 has handed it over: after a `101 Switching Protocols` or a 2xx answer
/// to `CONNECT`, every byte either way (including client bytes held while the answer was awaited) goes here
/// instead of the HTTP/1 parsers, unless a takeover decoder (HTTP/2, WebSocket: `ConnectionTakeover`) claimed the
/// upgrade first; everything else becomes a `TunnelSession`.
protocol UpgradedStreamHandler: AnyObject {
    func received(_ bytes: UnsafeRawBufferPointer, from direction: StreamDirection, at time: Timestamp)
    func gap(length: Int, from direction: StreamDirection, at time: Timestamp)
    /// One direction ended (FIN, RST, the capture's end).
    func ended(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp)
    /// The connection ended; the handler reports what it saw.
    func closed(at time: Timestamp)
}

/// What the handler needs of the connection.
struct UpgradedStreamContext {
    var id: ConnectionID
    var client: Endpoint
    var server: Endpoint
    /// The lower-case `Upgrade` token (`websocket`, `h2c`, ...) or `tunnel` for CONNECT.
    var upgrade: String
    /// Set when the server refused the CONNECT and these are the bytes the client sent anyway (not HTTP): the
    /// refusing status code (as sent) and reason. Only the client's bytes come here then; the server's are still
    /// read as HTTP.
    var refused: (code: String, reason: String)? = nil
    var limits: HTTPDecoderLimits
    let sink: EventSink
    /// Reports a connection notice (TLS inside the tunnel); the connection gives at most one.
    let notice: (ConnectionNotice.Kind, Timestamp) -> Void
    /// A decoder for the tunnel's content (`TakeoverTrigger.tunnel`): it gets every byte and gap, and reports the
    /// TLS inside itself, so the tunnel does not label it.
    var inner: ConnectionTakeover? = nil
}

enum UpgradedStreams {
    static func make(_ context: UpgradedStreamContext) -> UpgradedStreamHandler {
        TunnelSession(context)
    }
}

/// An opaque tunnel (CONNECT, or an upgrade no decoder understands): bytes counted each way, TLS inside
/// recognised from its ClientHello and labelled like any TLS connection, a summary when it closes.
final class TunnelSession: UpgradedStreamHandler {
    private let context: UpgradedStreamContext
    private var bytes: [StreamDirection: Int] = [.clientToServer: 0, .serverToClient: 0]
    private var gaps = 0
    private var hello: [UInt8] = []
    private var sniffing = true
    private var tlsServerName: String?? = nil

    init(_ context: UpgradedStreamContext) { self.context = context }

    func received(_ data: UnsafeRawBufferPointer, from direction: StreamDirection, at time: Timestamp) {
        bytes[direction, default: 0] += data.count
        context.inner?.consume(direction, data, at: time)
        guard sniffing, direction == .clientToServer else { return }
        hello.append(contentsOf: data.prefix(context.limits.maxClientHelloBytes - hello.count))
        guard let isTLS = TLSRecordHeader.startsTLS(hello) else { return }
        guard isTLS else { sniffing = false; hello = []; return }
        switch TLSClientHello.parse(hello) {
        case .needMore:
            if hello.count >= context.limits.maxClientHelloBytes { sniffing = false; hello = [] }
        case .notTLS:
            sniffing = false
            hello = []
        case .clientHello(let parsed):
            sniffing = false
            hello = []
            tlsServerName = .some(parsed.serverName)
            // A refused tunnel carried no TLS session: the ClientHello went nowhere, so the connection is not
            // labelled; nor is it when the inner decoder reports the TLS session itself.
            if context.refused == nil && context.inner == nil {
                context.notice(.tls(serverName: parsed.serverName, alpn: parsed.alpn), time)
            }
        }
    }

    func gap(length: Int, from direction: StreamDirection, at time: Timestamp) {
        gaps += length
        context.inner?.gap(direction, length: length, at: time)
        if direction == .clientToServer && sniffing { sniffing = false; hello = [] }
    }

    func ended(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) {
        context.inner?.end(direction, reason: reason, at: time)
    }

    func closed(at time: Timestamp) {
        // What the tunnel carried first, then the tunnel's summary.
        context.inner?.close(at: time)
        if let refused = context.refused {
            var summary = "after its CONNECT was refused (\(refused.code)\(refused.reason.isEmpty ? "" : " \(refused.reason)")), "
                + "the client sent \(bytes[.clientToServer] ?? 0) bytes that are not HTTP"
            if let name = tlsServerName {
                summary += " (a TLS ClientHello" + (name.map { " for \($0)" } ?? "") + ", the tunnel it asked for)"
            }
            summary += "; shown as opaque bytes, not decoded"
            if gaps > 0 { summary += ", \(gaps) bytes not captured" }
            context.sink.emit(.warning(connection: context.id, message: summary, time: time))
            return
        }
        let what = context.upgrade == "tunnel" ? "CONNECT tunnel" : "\(context.upgrade) connection (not decoded)"
        var summary = "\(what) closed: \(bytes[.clientToServer] ?? 0) bytes client→server, "
            + "\(bytes[.serverToClient] ?? 0) bytes server→client"
        if let name = tlsServerName { summary += ", TLS inside" + (name.map { " to \($0)" } ?? "") }
        if gaps > 0 { summary += ", \(gaps) bytes not captured" }
        context.sink.emit(.warning(connection: context.id, message: summary, time: time))
    }
}
