import FlowReassembly
import HTTPModel
import PacketDecoding

/// What the QUIC layer hands on, in capture order: a connection's facts, each stream's bytes in order with gaps,
/// FIN and resets explicit (as `StreamConsumer` does for TCP), and warnings. Stream bytes borrow the decrypted
/// packet: use them inside the call.
public enum QUICEvent {
    /// A connection's label: version, server name, ALPN, and whether its keys were found (`ConnectionNotice.quic`).
    case notice(ConnectionNotice)
    /// Before a connection's first stream byte: the application protocol its streams carry (the server's ALPN
    /// choice when the handshake was decrypted, else the client's first offer), for the engine to pick a decoder.
    case opened(connection: ConnectionID, client: Endpoint, server: Endpoint, alpn: String?, time: Timestamp)
    /// The next bytes of a stream in one direction (`fin`: they end it).
    case streamData(connection: ConnectionID, stream: UInt64, fromClient: Bool, bytes: UnsafeRawBufferPointer, fin: Bool,
                    time: Timestamp)
    /// Bytes of a stream that will never be seen (a limit was hit, packets were not captured or not decrypted).
    case streamGap(connection: ConnectionID, stream: UInt64, fromClient: Bool, length: UInt64, time: Timestamp)
    /// RESET_STREAM: the sender abandoned the stream with this application error code.
    case streamReset(connection: ConnectionID, stream: UInt64, fromClient: Bool, errorCode: UInt64, time: Timestamp)
    /// STOP_SENDING: the receiver (`fromClient` sent the frame) asked the other side to stop sending on a stream.
    case stopSending(connection: ConnectionID, stream: UInt64, fromClient: Bool, errorCode: UInt64, time: Timestamp)
    /// CONNECTION_CLOSE as sent (`application`: frame type 0x1d, an application's error code).
    case connectionClose(connection: ConnectionID, fromClient: Bool, errorCode: UInt64, application: Bool, reason: String,
                         time: Timestamp)
    /// The connection closed (CONNECTION_CLOSE seen, idle, or the capture ended): nothing more comes for it.
    case closed(connection: ConnectionID, time: Timestamp)
    case warning(connection: ConnectionID, QUICWarning, time: Timestamp)
}

/// What went wrong on a QUIC connection, with its facts; worded once in `description`.
public enum QUICWarning: ConnectionWarning {
    /// Packets of a level whose keys the key log does not hold (or that did not open with them).
    case undecryptable(level: String, packets: Int)
    /// A frame that could not be read ended its packet early.
    case badFrame(type: UInt64, known: Bool)
    /// Out-of-order stream bytes over the connection's limit: the first hole became a gap.
    case bufferLimit(limit: Int)
    /// The streams tracked on one connection reached the limit; frames of further streams are dropped.
    case streamLimit(limit: Int)
    /// CONNECTION_CLOSE with an error (code 0 is a normal close and gives no warning).
    case closedWithError(code: UInt64, application: Bool, reason: String)
    /// The server answered with a Retry (a new Initial with its token follows) or listed its versions.
    case retry
    /// A Retry whose integrity tag (RFC 9001 section 5.8) does not verify: a client discards it, and so does TapKit.
    case retryIntegrityFailed
    case versionNegotiation(versions: [UInt32])
    /// Datagrams waiting for keys stopped waiting: they passed the in-memory bound (bytes), or the bound in time
    /// (seconds) passed without the key in the key log. They and later packets are read with the keys there are.
    case keyWaitOverLimit(bytes: Int)
    case keyWaitExpired(seconds: Double)

    public var description: String {
        switch self {
        case .undecryptable(let level, let packets):
            return "QUIC: \(packets) \(level) packet\(packets == 1 ? "" : "s") could not be decrypted"
        case .badFrame(let type, let known):
            return "QUIC: a \(known ? "malformed" : "unknown") frame of type 0x\(String(type, radix: 16)) ended its packet early"
        case .bufferLimit(let limit):
            return "QUIC: more than \(limit) bytes of stream data out of order; the first hole is shown as a gap"
        case .streamLimit(let limit):
            return "QUIC: more than \(limit) streams on the connection; later streams are not followed"
        case .closedWithError(let code, let application, let reason):
            let hex = "0x" + String(code, radix: 16)
            let what: String
            if application {
                what = "application error \(hex)"
            } else if let name = Self.transportErrors[code] {
                what = "transport error \(name) (\(hex))"
            } else if (0x100...0x1ff).contains(code) {
                what = "TLS alert \(code - 0x100) (\(hex))"
            } else {
                what = "transport error \(hex)"
            }
            return "QUIC: connection closed with \(what)" + (reason.isEmpty ? "" : ": \(reason)")
        case .retry:
            return "QUIC: the server asked the client to retry with a token (Retry)"
        case .retryIntegrityFailed:
            return "QUIC: a Retry whose integrity tag does not verify (not from the server the client's first Initial "
                + "went to, or damaged); ignored, as a client ignores it"
        case .keyWaitOverLimit(let bytes):
            return "QUIC: packets waiting for their keys passed \(bytes) bytes; they and later packets are read with the "
                + "keys the key log has"
        case .keyWaitExpired(let seconds):
            return "QUIC: no key was logged within \(seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)") s of "
                + "the packets that waited for it (raise the bound with --keylog-wait SECONDS)"
        case .versionNegotiation(let versions):
            let list = versions.map { "0x" + String($0, radix: 16) }.joined(separator: ", ")
            return "QUIC: the server does not speak the client's version and offers \(list) (Version Negotiation)"
        }
    }
}

extension QUICWarning {
    /// APPLICATION_ERROR, the transport code an application close wears before 1-RTT keys (RFC 9000 section 10.2.3).
    static let applicationErrorCode: UInt64 = 0xc

    /// RFC 9000 section 20.1.
    static let transportErrors: [UInt64: String] = [
        0x1: "INTERNAL_ERROR", 0x2: "CONNECTION_REFUSED", 0x3: "FLOW_CONTROL_ERROR", 0x4: "STREAM_LIMIT_ERROR",
        0x5: "STREAM_STATE_ERROR", 0x6: "FINAL_SIZE_ERROR", 0x7: "FRAME_ENCODING_ERROR", 0x8: "TRANSPORT_PARAMETER_ERROR",
        0x9: "CONNECTION_ID_LIMIT_ERROR", 0xa: "PROTOCOL_VIOLATION", 0xb: "INVALID_TOKEN", 0xc: "APPLICATION_ERROR",
        0xd: "CRYPTO_BUFFER_EXCEEDED", 0xe: "KEY_UPDATE_ERROR", 0xf: "AEAD_LIMIT_REACHED", 0x10: "NO_VIABLE_PATH",
    ]
}

/// Bounds on what the QUIC layer keeps, with documented defaults (as `ReassemblyLimits` for TCP).
public struct QUICLimits: Sendable, Hashable {
    /// Connections tracked at once; past it the least recently active one is closed. Default 10,000.
    public var maxConnections = 10_000
    /// Out-of-order stream and CRYPTO bytes buffered per connection. Default 4 MiB, as for a TCP connection.
    public var maxBufferedBytesPerConnection = 4 << 20
    /// Streams followed per connection (HTTP/3 opens one per request). Default 10,000.
    public var maxStreamsPerConnection = 10_000
    /// Seconds without a packet after which a connection is closed and forgotten. Default 300, as for TCP.
    public var idleTimeoutSeconds: Double = 300
    /// How long datagrams wait for keys a followed key log lacks (live capture: the program writes its secrets
    /// while we read), from the first one held, in capture time; the key log is read again as soon as it changes and
    /// once more before the wait ends. Default 2 s (`--keylog-wait`). Offline (a key log read once) nothing waits.
    public var keyWait: Duration = .seconds(2)
    /// Bytes of datagrams held in memory per connection while they wait. Default 64 MiB (a 2 s wait at 256 Mbit/s;
    /// QUIC clients and servers here are far slower than TCP's); past it the connection stops waiting, with a
    /// warning.
    public var maxHeldBytesPerConnection = 64 << 20
    /// A TLS handshake message longer than this is skipped (certificate chains; nothing in them is needed).
    public var maxHandshakeMessage = 64 << 10

    public init() {}
}
