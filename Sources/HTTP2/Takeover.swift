import HTTPDecoding


/// Plugs the HTTP/2 and WebSocket decoders into HTTPDecoding: pass `HTTP2Takeover(limits:).factory` to
/// `HTTPStreamDecoder(limits:takeover:onEvent:)`; each connection's router asks it for the next layer's handler.
public struct HTTP2Takeover: Sendable {
    public var limits: HTTP2Limits

    public init(limits: HTTP2Limits = HTTP2Limits()) { self.limits = limits }

    public var factory: TakeoverFactory {
        let limits = self.limits
        return { context, next in
            switch next {
            case .http2Preface:
                return HTTP2Connection(context: context, limits: limits, expectsPreface: HTTP2Connection.prefaceAfterRequestLine())
            case .negotiated(let name):
                guard name == "h2" else { return nil }
                return HTTP2Connection(context: context, limits: limits, expectsPreface: HTTP2Connection.fullPreface())
            case .unrecognizedStart(let bytes, let time):
                // The router gives the connection these bytes next.
                guard HTTP2FrameSniffer.looksLikeClientFrames(bytes) else { return nil }
                return HTTP2Connection(context: context, limits: limits, expectsPreface: [], midConnection: true, at: time)
            case .h2c(let exchange):
                return HTTP2Connection(context: context, limits: limits, expectsPreface: HTTP2Connection.fullPreface(),
                                       upgrade: exchange)
            case .webSocket(let exchange):
                return WebSocketConnection(context: context, limits: limits, handshake: exchange)
            case .tunnel, .upgrade, .tls:
                // What a CONNECT tunnel carries is TLS's to decode (CaptureEngine plugs that in), not HTTP/2's.
                return nil
            }
        }
    }
}
