import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding

/// A decoder for what a connection carries once it is no longer HTTP/1.x: HTTP/2 (prior knowledge, h2c
/// upgrade, ALPN "h2") or WebSocket after a 101. HTTPDecoding only decides when and routes the bytes; the
/// decoders live in the HTTP2 module and are plugged in with `HTTPStreamDecoder(limits:takeover:onEvent:)`,
/// so this module does not depend on them.
public protocol ConnectionTakeover: AnyObject {
    /// True when the takeover reports the exchange that handed the connection over itself (h2c: the upgrade
    /// request becomes stream 1's request); false when HTTPDecoding reports it as usual (WebSocket's 101).
    var reportsUpgradeExchange: Bool { get }
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp)
    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp)
    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp)
    /// The connection is over (or the capture ended): report what is still in progress.
    func close(at time: Timestamp)
}

/// Why a connection is handed over.
public enum TakeoverTrigger {
    /// The client sent the HTTP/2 preface's request line; its next bytes are the preface's rest (`SM\r\n\r\n`).
    case http2Preface
    /// The application protocol was negotiated out of band (TLS ALPN); both directions start from their first byte.
    case negotiated(String)
    /// A 101 answered an Upgrade request; the bytes after the 101's head follow on both sides.
    case upgrade(HTTPExchange)
    /// The client's first bytes (given here, not sent again) are neither HTTP/1.x nor TLS: a connection picked
    /// up mid-way, say. The takeover may claim the connection (an HTTP/2 connection without its preface).
    case unrecognizedStart([UInt8], at: Timestamp)
    /// A 2xx answered CONNECT: the bytes after it, both ways, are the tunnel's. A decoder may read them (TLS
    /// decrypted with a key log, then HTTP); HTTPDecoding still reports the CONNECT exchange and the tunnel's
    /// byte counts.
    case tunnel(HTTPExchange)
}

/// What a takeover decoder needs to know about its connection.
public struct TakeoverContext {
    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var limits: HTTPDecoderLimits
    /// Decoded bytes left for every body of the capture together (content decoding's bomb guard).
    public var budget: DecodedBytesBudget?
    /// Where the takeover reports exchanges, WebSocket messages, notices and warnings.
    public var emit: (HTTPEvent) -> Void

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, limits: HTTPDecoderLimits,
                budget: DecodedBytesBudget?, emit: @escaping (HTTPEvent) -> Void) {
        self.connection = connection
        self.client = client
        self.server = server
        self.limits = limits
        self.budget = budget
        self.emit = emit
    }
}

/// Makes the takeover decoder for a trigger, or nil to leave the connection as HTTPDecoding would (opaque).
public typealias TakeoverFactory = (TakeoverContext, TakeoverTrigger) -> ConnectionTakeover?
