import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding

/// What a connection turns out to carry next, as found by the handler reading it (or by the router's look at the
/// client's first bytes). A handler returns it in a `Handover` instead of acting on it; the connection's
/// `ConnectionRouter` picks the next handler once the call has returned. Indirect: the exchanges some cases carry
/// are large, and a connection tests for a finding after every piece it reads (copying the value inline to do so
/// cost 1% of the CPU time of an HTTP capture).
public indirect enum NextLayer {
    /// The client's first bytes are a TLS ClientHello (no key log decrypted them): labelled, not read further.
    case tls(serverName: String?, alpn: [String])
    /// The client's first bytes (given here) are neither HTTP/1.x nor TLS: a connection picked up mid-way, say. A
    /// plugged-in decoder may claim them (an HTTP/2 connection without its preface); if none does, HTTP/1.x reads
    /// them after all.
    case unrecognizedStart([UInt8], at: Timestamp)
    /// The client sent the HTTP/2 preface's request line; its next bytes are the preface's rest (`SM\r\n\r\n`).
    case http2Preface
    /// The application protocol was negotiated out of band (TLS ALPN) before any HTTP/1.x message.
    case negotiated(String)
    /// A 101 to `Upgrade: h2c`: the upgrade request is HTTP/2 stream 1's, so the HTTP/2 decoder reports it.
    case h2c(HTTPExchange)
    /// A 101 to `Upgrade: websocket`: the handshake is reported as an HTTP/1.1 exchange, then the messages.
    case webSocket(HTTPExchange)
    /// A 101 to another protocol (`exchange.upgrade` names it).
    case upgrade(HTTPExchange)
    /// A 2xx answered CONNECT: the bytes after it, both ways, are the tunnel's. The CONNECT exchange and the
    /// tunnel's byte counts are reported; a plugged-in decoder may read what it carries (TLS with a key log).
    case tunnel(HTTPExchange)
}

/// A handler's finding: the next layer, and where the bytes that are the next layer's begin.
public struct Handover {
    public var next: NextLayer
    /// How many bytes of the call that found it the handler read; the rest of that call's bytes are the next
    /// layer's first bytes that way (none for a gap or an end).
    public var consumed: Int
    /// Client bytes received before but not read (held while the answer to an Upgrade or CONNECT was awaited),
    /// the next layer's first client bytes; `heldGap`: some were lost.
    public var held: [UInt8]
    public var heldGap: Bool

    public init(next: NextLayer, consumed: Int, held: [UInt8] = [], heldGap: Bool = false) {
        self.next = next
        self.consumed = consumed
        self.held = held
        self.heldGap = heldGap
    }
}

/// Reads one connection's bytes, both directions, for one protocol: HTTP/1.x (HTTPDecoding), HTTP/2 and WebSocket
/// (the HTTP2 module, plugged in with `HTTPStreamDecoder(limits:takeover:onEvent:)` so this module does not depend
/// on it), a tunnel. A handler never hands the connection on itself: it returns what it found and the router
/// swaps handlers after the call returns.
public protocol ConnectionHandler: AnyObject {
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover?
    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover?
    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover?
    /// The connection is over (or the capture ended): report what is still in progress.
    func close(at time: Timestamp)
}

/// What a handler needs to know about its connection.
public struct TakeoverContext {
    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var limits: HTTPDecoderLimits
    /// Decoded bytes left for every body of the capture together (content decoding's bomb guard).
    public var budget: DecodedBytesBudget?
    /// Where the handler reports exchanges, WebSocket messages, notices and warnings.
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

/// Makes the plugged-in decoder's handler for a next layer, or nil when none reads it; the router then does what
/// HTTPDecoding alone does (a tunnel counted both ways, a labelled connection, or HTTP/1.x reading on). It must
/// not read any bytes: the router gives the handler the connection's bytes from where the next layer starts.
public typealias TakeoverFactory = (TakeoverContext, NextLayer) -> ConnectionHandler?
