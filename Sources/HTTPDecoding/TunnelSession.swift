import FlowReassembly
import HTTPModel
import PacketDecoding
import TLSWire

/// An opaque tunnel (an accepted CONNECT, or an upgrade no decoder understands): bytes counted each way, TLS inside
/// recognised from its ClientHello and labelled like any TLS connection, a summary when it closes. A decoder for
/// what the tunnel carries (`inner`: TLS decrypted with a key log) gets every byte, gap and end as well. After a
/// refused CONNECT, one counts the client's bytes that are not HTTP while the server's stay HTTP.
final class TunnelSession: ConnectionHandler {
    private let context: TakeoverContext
    /// The lower-case `Upgrade` token (`websocket`, `h2c`, ...) or `tunnel` for CONNECT.
    private let kind: String
    /// Set when the server refused the CONNECT and these are the bytes the client sent anyway (not HTTP): the
    /// refusing status code (as sent) and reason. Only the client's bytes come here then.
    private let refused: (code: String, reason: String)?
    /// Reads what the tunnel carries and reports the TLS inside itself, so the tunnel does not label it.
    private let inner: ConnectionHandler?
    private var bytes: [StreamDirection: Int] = [.clientToServer: 0, .serverToClient: 0]
    private var gaps = 0
    private var hello: [UInt8] = []
    private var sniffing = true
    private var tlsServerName: String?? = nil

    init(context: TakeoverContext, kind: String, refused: (code: String, reason: String)? = nil,
         inner: ConnectionHandler? = nil) {
        self.context = context
        self.kind = kind
        self.refused = refused
        self.inner = inner
    }

    func consume(_ direction: StreamDirection, _ data: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
        bytes[direction, default: 0] += data.count
        _ = inner?.consume(direction, data, at: time)
        guard sniffing, direction == .clientToServer else { return nil }
        hello.append(contentsOf: data.prefix(context.limits.maxClientHelloBytes - hello.count))
        guard let isTLS = TLSRecordHeader.startsTLS(hello) else { return nil }
        guard isTLS else { sniffing = false; hello = []; return nil }
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
            if refused == nil && inner == nil {
                context.emit(.notice(ConnectionNotice(connection: context.connection, client: context.client,
                                                      server: context.server,
                                                      kind: .tls(serverName: parsed.serverName, alpn: parsed.alpn),
                                                      time: time)))
            }
        }
        return nil
    }

    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
        gaps += length
        _ = inner?.gap(direction, length: length, at: time)
        if direction == .clientToServer && sniffing { sniffing = false; hello = [] }
        return nil
    }

    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
        _ = inner?.end(direction, reason: reason, at: time)
        return nil
    }

    func close(at time: Timestamp) {
        // What the tunnel carried first, then the tunnel's summary.
        inner?.close(at: time)
        if let refused {
            var summary = "after its CONNECT was refused (\(refused.code)\(refused.reason.isEmpty ? "" : " \(refused.reason)")), "
                + "the client sent \(bytes[.clientToServer] ?? 0) bytes that are not HTTP"
            if let name = tlsServerName {
                summary += " (a TLS ClientHello" + (name.map { " for \($0)" } ?? "") + ", the tunnel it asked for)"
            }
            summary += "; shown as opaque bytes, not decoded"
            if gaps > 0 { summary += ", \(gaps) bytes not captured" }
            context.emit(.warning(connection: context.connection, message: summary, time: time))
            return
        }
        let what = kind == "tunnel" ? "CONNECT tunnel" : "\(kind) connection (not decoded)"
        var summary = "\(what) closed: \(bytes[.clientToServer] ?? 0) bytes client→server, "
            + "\(bytes[.serverToClient] ?? 0) bytes server→client"
        if let name = tlsServerName { summary += ", TLS inside" + (name.map { " to \($0)" } ?? "") }
        if gaps > 0 { summary += ", \(gaps) bytes not captured" }
        context.emit(.warning(connection: context.connection, message: summary, time: time))
    }
}
