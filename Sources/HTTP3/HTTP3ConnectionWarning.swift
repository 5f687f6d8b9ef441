import FlowReassembly
import PacketDecoding

/// Something about a whole HTTP/3 connection (not one exchange) worth a warning, as a value; worded once in
/// `description`. Per-exchange trouble is an `HTTPWarning` case instead.
public struct HTTP3ConnectionWarning: ConnectionWarning {
    public var client: Endpoint
    public var server: Endpoint
    public var kind: Kind

    public var description: String { "\(client) → \(server): \(kind)" }

    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        case serverBidirectionalStream(UInt64)
        case encoderStreamGap(sender: StreamDirection, length: Int)
        case controlStreamGap(length: Int)
        case criticalStreamReset(stream: UInt64, sender: StreamDirection, code: UInt64, codeName: String)
        /// `codeName`: the HTTP/3 name for an application close, "QUIC transport error" otherwise.
        case connectionClosed(sender: StreamDirection, code: UInt64, codeName: String, reason: String)
        case tooManyStreams(limit: Int)
        case earlyEncoderBytesOverLimit(sender: StreamDirection, limit: Int)
        /// `reason`: what went wrong, in nghttp3's words or the decoder stream reader's.
        case encoderStreamFailed(sender: StreamDirection, reason: String)
        case decoderStreamFailed(sender: StreamDirection, reason: String)
        case dataOnControlStream(sender: StreamDirection)
        case controlFrameOverLimit(sender: StreamDirection, type: UInt64, length: UInt64)
        case controlFrameNotAllowed(sender: StreamDirection, type: UInt64)
        case tableCapacityOverLimit(encoder: StreamDirection, capacity: UInt64, limit: Int)

        public var description: String {
            func who(_ direction: StreamDirection) -> String { direction == .clientToServer ? "client" : "server" }
            func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
            switch self {
            case .serverBidirectionalStream(let stream):
                return "HTTP/3: data on server-initiated bidirectional stream \(stream) (an extension); not decoded"
            case .encoderStreamGap(let sender, let length):
                return "\(length) bytes of the \(who(sender))'s QPACK encoder stream were never captured; its dynamic table is no longer followed"
            case .controlStreamGap(let length):
                return "\(length) bytes of a control stream were never captured; its later frames were not decoded"
            case .criticalStreamReset(let stream, let sender, let code, let name):
                return "a critical unidirectional stream (\(stream)) was reset by the \(who(sender)): \(name) (\(hex(code)))"
            case .connectionClosed(let sender, let code, let name, let reason):
                return "CONNECTION_CLOSE from the \(who(sender)): \(name) (\(hex(code)))" + (reason.isEmpty ? "" : ": \(reason)")
            case .tooManyStreams(let limit):
                return "HTTP/3: more than \(limit) streams open on one connection; the oldest are reported early"
            case .earlyEncoderBytesOverLimit(let sender, let limit):
                return "HTTP/3: over \(limit) bytes of the \(who(sender))'s QPACK encoder stream before the SETTINGS that size its table; that table is not followed"
            case .encoderStreamFailed(let sender, let reason): return "HTTP/3 \(who(sender)) QPACK encoder stream: \(reason)"
            case .decoderStreamFailed(let sender, let reason): return "HTTP/3 \(who(sender)) QPACK decoder stream: \(reason)"
            case .dataOnControlStream(let sender): return "HTTP/3: DATA on the \(who(sender))'s control stream; skipped"
            case .controlFrameOverLimit(let sender, let type, let length):
                return "HTTP/3: \(who(sender)) control frame \(hex(type)) of \(length) bytes over the limit; skipped"
            case .controlFrameNotAllowed(let sender, let type):
                return "HTTP/3: frame \(hex(type)) not allowed on the \(who(sender))'s control stream; skipped"
            case .tableCapacityOverLimit(let encoder, let capacity, let limit):
                return "HTTP/3: QPACK table capacity \(capacity) is over the \(limit)-byte limit; the \(who(encoder))'s dynamic table is not followed"
            }
        }
    }
}
