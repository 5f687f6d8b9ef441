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
        let tls = tlsServerName.map { TunnelWarning.TLSInside(serverName: $0) }
        let warning: TunnelWarning
        if let refused {
            warning = .refusedTunnelBytes(code: refused.code, reason: refused.reason,
                                          clientBytes: bytes[.clientToServer] ?? 0, tls: tls, bytesNotCaptured: gaps)
        } else {
            warning = .closed(kind: kind, clientBytes: bytes[.clientToServer] ?? 0,
                              serverBytes: bytes[.serverToClient] ?? 0, tls: tls, bytesNotCaptured: gaps)
        }
        context.emit(.warning(connection: context.connection, warning: AnyConnectionWarning(warning), time: time))
    }
}

/// The summary of an opaque tunnel when it closes.
public enum TunnelWarning: ConnectionWarning {
    /// A tunnel or an upgrade nobody decodes (`kind`: `tunnel` for CONNECT, else the `Upgrade` token) closed.
    case closed(kind: String, clientBytes: Int, serverBytes: Int, tls: TLSInside?, bytesNotCaptured: Int)
    /// After its CONNECT was refused, the client sent bytes that are not HTTP.
    case refusedTunnelBytes(code: String, reason: String, clientBytes: Int, tls: TLSInside?, bytesNotCaptured: Int)

    /// A TLS ClientHello seen inside, with the server name it asked for, if any.
    public struct TLSInside: Sendable, Hashable {
        public var serverName: String?
    }

    public var description: String {
        switch self {
        case .closed(let kind, let clientBytes, let serverBytes, let tls, let gaps):
            let what = kind == "tunnel" ? "CONNECT tunnel" : "\(kind) connection (not decoded)"
            var summary = "\(what) closed: \(clientBytes) bytes client→server, \(serverBytes) bytes server→client"
            if let tls { summary += ", TLS inside" + (tls.serverName.map { " to \($0)" } ?? "") }
            if gaps > 0 { summary += ", \(gaps) bytes not captured" }
            return summary
        case .refusedTunnelBytes(let code, let reason, let clientBytes, let tls, let gaps):
            var summary = "after its CONNECT was refused (\(code)\(reason.isEmpty ? "" : " \(reason)")), "
                + "the client sent \(clientBytes) bytes that are not HTTP"
            if let tls {
                summary += " (a TLS ClientHello" + (tls.serverName.map { " for \($0)" } ?? "") + ", the tunnel it asked for)"
            }
            summary += "; shown as opaque bytes, not decoded"
            if gaps > 0 { summary += ", \(gaps) bytes not captured" }
            return summary
        }
    }
}
