import FlowReassembly
import HTTPModel
import PacketDecoding

/// What the HTTP/2 decoder tells about a connection as a whole (its streams' own troubles are `HTTPWarning`s).
public struct HTTP2ConnectionWarning: ConnectionWarning {
    public var client: Endpoint
    public var server: Endpoint
    public var kind: Kind

    public enum Kind: Sendable, Hashable {
        /// Decoding started after the connection's start: the header table is unknown.
        case pickedUpWithoutStart
        case noPreface
        /// Bytes of one direction never captured: its frame boundaries are lost.
        case bytesNeverCaptured(length: Int, from: StreamDirection)
        /// A GOAWAY with an error code; `debug` is the start of its debug data, as text.
        case goAway(from: StreamDirection, code: UInt32, lastStream: UInt32, debug: String)
        case frameSkipped(HTTP2FrameTrouble)
        case malformedFrame(HTTP2FrameTrouble, stream: UInt32)
        case headerBlockOverLimit(limit: Int)
        case tooManyStreams(limit: Int)
    }

    public var description: String {
        let connection = "\(client) → \(server)"
        switch kind {
        case .pickedUpWithoutStart:
            return "HTTP/2 connection \(connection) picked up without its start: header table unknown, decoding what "
                + "can be decoded"
        case .noPreface:
            return "\(connection): client bytes do not start with the HTTP/2 connection preface; reading them as "
                + "frames anyway"
        case .bytesNeverCaptured(let length, let direction):
            let who = direction == .clientToServer ? "client" : "server"
            return "\(connection): \(length) bytes from the \(who) were never captured: HTTP/2 frame boundaries lost, "
                + "the \(who)'s later frames are not decoded"
        case .goAway(let direction, let code, let last, let debug):
            return "\(connection): GOAWAY from the \(direction == .clientToServer ? "client" : "server"): "
                + "\(HTTP2ErrorCode.name(code)) (0x\(String(code, radix: 16))), last stream \(last)"
                + (debug.isEmpty ? "" : ": \(debug)")
        case .frameSkipped(let reason):
            return "\(connection): HTTP/2 frame skipped: \(reason)"
        case .malformedFrame(let reason, let stream):
            return "\(connection): HTTP/2: \(reason) (stream \(stream))"
        case .headerBlockOverLimit(let limit):
            return "\(connection): HTTP/2 header block over the \(limit)-byte limit; header table now unknown"
        case .tooManyStreams(let limit):
            return "\(connection): HTTP/2: more than \(limit) streams open on one connection; the oldest are reported "
                + "early"
        }
    }
}
