import HTTPDecoding


/// Plugs the HTTP/2 and WebSocket decoders into HTTPDecoding: pass `HTTP2Takeover(limits:).factory` to
/// `HTTPStreamDecoder(limits:takeover:onEvent:)`.
public struct HTTP2Takeover: Sendable {
    public var limits: HTTP2Limits

    public init(limits: HTTP2Limits = HTTP2Limits()) { self.limits = limits }

    public var factory: TakeoverFactory {
        let limits = self.limits
        return { context, trigger in
            switch trigger {
            case .http2Preface:
                return HTTP2Connection(context: context, limits: limits, expectsPreface: HTTP2Connection.prefaceAfterRequestLine())
            case .negotiated(let name):
                guard name == "h2" else { return nil }
                return HTTP2Connection(context: context, limits: limits, expectsPreface: HTTP2Connection.fullPreface())
            case .unrecognizedStart(let bytes, let time):
                guard HTTP2FrameSniffer.looksLikeClientFrames(bytes) else { return nil }
                let connection = HTTP2Connection(context: context, limits: limits, expectsPreface: [], midConnection: true, at: time)
                bytes.withUnsafeBytes { connection.consume(.clientToServer, $0, at: time) }
                return connection
            case .tunnel:
                return nil  // what a CONNECT tunnel carries is TLS's to decode (capture wires that in), not HTTP/2's
            case .upgrade(let exchange):
                switch exchange.upgrade {
                case "h2c":
                    return HTTP2Connection(context: context, limits: limits, expectsPreface: HTTP2Connection.fullPreface(),
                                           upgrade: exchange)
                case "websocket":
                    return WebSocketConnection(context: context, limits: limits, handshake: exchange)
                default:
                    return nil
                }
            }
        }
    }
}
