import BodyDecoding
import FlowReassembly
import HTTP3
import HTTPModel
import QUIC

/// Where the QUIC layer's events go: each connection's line and warnings to the HTTP events every view shows, and
/// the streams of a connection that negotiated HTTP/3 (ALPN `h3`, or a draft's `h3-NN`) to its `HTTP3Connection`,
/// made when the connection's first stream byte comes (`.opened`) and ended when it closes. Streams of other QUIC
/// applications (DNS over QUIC, say) are decrypted and counted by the QUIC layer, not decoded here.
///
/// Runs on the reading thread with the QUIC layer. `sink` is where events go at the moment: the pipeline's batch
/// while packets are read with two threads, the executable's sink otherwise and at the end.
final class QUICRouter {
    private let limits: HTTPDecoderLimits
    private let budget: DecodedBytesBudget
    private var http3: [ConnectionID: HTTP3Connection] = [:]
    var sink: (CaptureEvent) -> Void

    init(limits: HTTPDecoderLimits, sink: @escaping (CaptureEvent) -> Void) {
        self.limits = limits
        budget = DecodedBytesBudget(limit: limits.maxDecodedBytesPerCapture)
        self.sink = sink
    }

    func route(_ event: QUICEvent) {
        switch event {
        case .notice(let notice):
            sink(.http(.notice(notice)))
        case .warning(let connection, let warning, let time):
            sink(.http(.warning(connection: connection, warning: AnyConnectionWarning(warning), time: time)))
        case .opened(let connection, let client, let server, let alpn, _):
            guard let alpn, alpn == "h3" || alpn.hasPrefix("h3-") else { return }
            http3[connection] = HTTP3Connection(connection: connection, client: client, server: server, limits: limits,
                                                budget: budget) { [unowned self] in self.sink(.http($0)) }
        case .streamData(let connection, let stream, let fromClient, let bytes, let fin, let time):
            http3[connection]?.streamData(stream, fromClient: fromClient, bytes: bytes, fin: fin, at: time)
        case .streamGap(let connection, let stream, let fromClient, let length, let time):
            http3[connection]?.streamGap(stream, fromClient: fromClient, length: Int(min(length, UInt64(Int.max))), at: time)
        case .streamReset(let connection, let stream, let fromClient, let code, let time):
            http3[connection]?.streamReset(stream, fromClient: fromClient, errorCode: code, at: time)
        case .stopSending(let connection, let stream, let fromClient, let code, let time):
            http3[connection]?.stopSending(stream, fromClient: fromClient, errorCode: code, at: time)
        case .connectionClose(let connection, let fromClient, let code, let application, let reason, let time):
            http3[connection]?.connectionClosed(fromClient: fromClient, errorCode: code, application: application,
                                                reason: reason, at: time)
        case .closed(let connection, let time):
            http3.removeValue(forKey: connection)?.end(at: time)
        }
    }
}
