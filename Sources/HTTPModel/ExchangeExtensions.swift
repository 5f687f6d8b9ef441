import FlowReassembly
import PacketDecoding

/// What an exchange carried over HTTP/2 adds to the HTTP/1.x model: which stream, how it ended, whether the
/// server pushed it. HTTP/1.x exchanges have none of this (`HTTPExchange.http2` is nil).
public struct HTTP2StreamFacts: Sendable, Hashable {
    /// How the stream ended.
    public enum Outcome: Sendable, Hashable {
        /// END_STREAM both ways.
        case complete
        /// RST_STREAM sent by `sender` with `code` (RFC 9113 section 7 error code; `codeName` is its name).
        case reset(sender: StreamDirection, code: UInt32, codeName: String)
        /// The connection's GOAWAY (from `sender`) or end left the stream unfinished.
        case goaway(sender: StreamDirection, code: UInt32, codeName: String, lastStreamID: UInt32)
        /// The connection ended (or the capture stopped) with the stream still open.
        case unfinished
    }

    public var streamID: UInt32
    /// The stream whose PUSH_PROMISE announced this one (server push); nil for client requests.
    public var promisedOn: UInt32?
    public var outcome: Outcome
    /// The connection was picked up without its start, so header fields that referred to HPACK table entries
    /// sent before the capture could not be decoded.
    public var headerTableUnknown: Bool

    public init(streamID: UInt32, promisedOn: UInt32? = nil, outcome: Outcome = .complete, headerTableUnknown: Bool = false) {
        self.streamID = streamID
        self.promisedOn = promisedOn
        self.outcome = outcome
        self.headerTableUnknown = headerTableUnknown
    }
}

/// What an exchange carried over HTTP/3 (RFC 9114) adds: which QUIC stream, how it ended, whether the server
/// pushed it. Set beside (never with) `http2`.
public struct HTTP3StreamFacts: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// FIN both ways.
        case complete
        /// RESET_STREAM sent by `sender` with `code` (RFC 9114 section 8.1 error code; `codeName` is its name).
        case reset(sender: StreamDirection, code: UInt64, codeName: String)
        /// A GOAWAY from `sender` said the stream (at or past `id`) would not be processed, or the connection went
        /// away after it with the stream still open.
        case goaway(sender: StreamDirection, id: UInt64)
        /// The connection ended (or the capture stopped) with the stream still open.
        case unfinished
    }

    /// The QUIC stream: the request stream, or for a push the server's push stream (nil when it was never seen).
    public var streamID: UInt64?
    /// Server push: the push ID of the PUSH_PROMISE and of the push stream.
    public var pushID: UInt64?
    /// Server push: the request stream whose PUSH_PROMISE announced it (nil when the promise was not seen).
    public var promisedOn: UInt64?
    public var outcome: Outcome
    /// A header block referred to QPACK dynamic table entries this decoder could not follow (lost in a gap, an
    /// error, a table capacity over the limit): its fields are missing.
    public var headerTableUnknown: Bool

    public init(streamID: UInt64?, pushID: UInt64? = nil, promisedOn: UInt64? = nil, outcome: Outcome = .complete,
                headerTableUnknown: Bool = false) {
        self.streamID = streamID
        self.pushID = pushID
        self.promisedOn = promisedOn
        self.outcome = outcome
        self.headerTableUnknown = headerTableUnknown
    }
}

/// A gRPC call read from an HTTP/2 exchange: service and method from `:path`, status from the trailers,
/// length-prefixed messages counted and sized (never decoded: protobuf needs the schema).
public struct GRPCCallFacts: Sendable, Hashable {
    /// One length-prefixed message.
    public struct Message: Sendable, Hashable {
        /// Bytes after the 5-byte prefix, as sent (compressed when `compressed`).
        public var size: Int
        public var compressed: Bool
        /// The first bytes, hex, for a glance at protobuf fields.
        public var hexPrefix: String
        public init(size: Int, compressed: Bool, hexPrefix: String) {
            self.size = size
            self.compressed = compressed
            self.hexPrefix = hexPrefix
        }
    }

    public var service: String
    public var method: String
    /// `grpc-status` (0 = OK) from the trailers (or the headers of a trailers-only response).
    public var status: Int?
    /// `grpc-message`, percent-decoded.
    public var message: String?
    public var requestMessages: [Message]
    public var responseMessages: [Message]
    /// Messages not listed one by one past the limit; they are still counted in the totals below.
    public var requestMessageCount: Int
    public var responseMessageCount: Int

    public init(service: String, method: String, status: Int?, message: String?, requestMessages: [Message],
                responseMessages: [Message], requestMessageCount: Int, responseMessageCount: Int) {
        self.service = service
        self.method = method
        self.status = status
        self.message = message
        self.requestMessages = requestMessages
        self.responseMessages = responseMessages
        self.requestMessageCount = requestMessageCount
        self.responseMessageCount = responseMessageCount
    }

    /// `OK`, `NOT_FOUND`, ... (https://grpc.github.io/grpc/core/md_doc_statuscodes.html).
    public static func statusName(_ code: Int) -> String {
        let names = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                     "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
                     "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]
        return names.indices.contains(code) ? names[code] : "code \(code)"
    }
}

/// One WebSocket message (RFC 6455) after a 101: fragments reassembled, masking removed, permessage-deflate
/// inflated. Control frames (close, ping, pong) are messages of their own.
public struct WebSocketMessage: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case text, binary, close, ping, pong
        /// A reserved opcode (3-7, 11-15).
        case other
    }

    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var direction: StreamDirection
    public var kind: Kind
    public var opcode: UInt8
    /// Bytes of the message after unmasking and inflating.
    public var size: Int
    public var sha256: String
    /// The first bytes, up to the decoder's keep limit (never fewer than `textPrefixBytes`).
    public var kept: [UInt8]
    /// Frames the message came in (1 when not fragmented).
    public var frames: Int
    /// Sent with permessage-deflate (RSV1).
    public var compressed: Bool
    /// Close frames: the status code and reason, when present.
    public var closeCode: UInt16?
    public var closeReason: String?
    /// When the first frame was captured.
    public var time: Timestamp
    public var warnings: [HTTPWarning]

    /// Bytes of a text message that `--json` prints as its `text` (and the live view shows): a fixed length, so a
    /// record is the same whatever else the run keeps bodies for (`--har`, `-v`, `--ui`).
    public static let textPrefixBytes = 1024

    /// The start of a text message as `--json` prints it, and whether the message is longer; nil for other kinds.
    public var textPrefix: (text: String, partial: Bool)? {
        guard kind == .text else { return nil }
        let shown = kept.prefix(Self.textPrefixBytes)
        return (String(decoding: shown, as: UTF8.self), shown.count < size)
    }

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, direction: StreamDirection, kind: Kind,
                opcode: UInt8, size: Int, sha256: String, kept: [UInt8], frames: Int, compressed: Bool,
                closeCode: UInt16?, closeReason: String?, time: Timestamp, warnings: [HTTPWarning]) {
        self.connection = connection
        self.client = client
        self.server = server
        self.direction = direction
        self.kind = kind
        self.opcode = opcode
        self.size = size
        self.sha256 = sha256
        self.kept = kept
        self.frames = frames
        self.compressed = compressed
        self.closeCode = closeCode
        self.closeReason = closeReason
        self.time = time
        self.warnings = warnings
    }
}
