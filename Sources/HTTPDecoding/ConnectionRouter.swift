import FlowReassembly
import HTTPModel
import PacketDecoding
import TLSWire

/// Decides what reads one TCP connection's bytes, after Zeek's PIA and mitmproxy's next-layer. HTTP/1.x reads
/// first, once the client's first bytes show they are not TLS or another protocol a plugged-in decoder claims. A
/// handler that finds the connection moving on (the HTTP/2 preface, an accepted upgrade or CONNECT) returns a
/// `Handover` instead of acting on it; after that call returns the router swaps handlers, exactly once, reports
/// the exchange that handed the connection over unless the next layer reports it itself (h2c), and gives the new
/// handler the bytes the old one did not read: the client's held bytes first, then the rest of the call. No
/// handler changes another's state, so events come out in the order the bytes came in, however they were split.
final class ConnectionRouter {
    private let context: TakeoverContext
    private let decoders: TakeoverFactory?
    private let http1: HTTPConnection
    /// The handler reading the connection now.
    private(set) var handler: ConnectionHandler
    /// The HTTP/1.x handler after the swap: closed after its successor, for requests it still held unanswered.
    private var retired: ConnectionHandler?
    private var clientStart: ClientStart = .sniffing([])

    /// What the router knows of the client's first bytes.
    private enum ClientStart {
        /// Not decided yet: the bytes so far, kept until they are (TLS records need their whole ClientHello).
        case sniffing([UInt8])
        case decided
        /// Still undecided after `maxClientHelloBytes`: the client's bytes are not read (the server's still are).
        case ignored
    }

    init(context: TakeoverContext, sink: EventSink, decoders: TakeoverFactory?) {
        self.context = context
        self.decoders = decoders
        http1 = HTTPConnection(id: context.connection, client: context.client, server: context.server,
                               limits: context.limits, sink: sink, budget: context.budget)
        handler = http1
    }

    private var swapped: Bool { retired != nil }

    /// `acknowledged`: how far into the other direction the bytes' segment acknowledged; only HTTP/1.x uses it
    /// (to pair responses with requests after a gap).
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp,
                 acknowledged: Int?) {
        if swapped { return follow(handler.consume(direction, bytes, at: time), direction, bytes, at: time) }
        if direction == .clientToServer {
            switch clientStart {
            case .sniffing(let sniffed): return sniff(sniffed, then: bytes, at: time, acknowledged: acknowledged)
            case .ignored: return
            case .decided: break
            }
        }
        follow(http1.consume(direction, bytes, at: time, acknowledged: acknowledged), direction, bytes, at: time)
    }

    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) {
        if direction == .clientToServer && !swapped {
            switch clientStart {
            case .sniffing(let sniffed):
                // A gap ends the look at the first bytes: HTTP/1.x reads what came before it, then the gap.
                clientStart = .decided
                if !sniffed.isEmpty {
                    sniffed.withUnsafeBytes { follow(handler.consume(.clientToServer, $0, at: time), .clientToServer, $0, at: time) }
                    if swapped { return }
                }
            case .ignored: return
            case .decided: break
            }
        }
        follow(handler.gap(direction, length: length, at: time), direction, UnsafeRawBufferPointer(start: nil, count: 0),
               at: time)
    }

    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) {
        if direction == .clientToServer && !swapped {
            switch clientStart {
            case .sniffing: clientStart = .decided  // undecided bytes at the end are not read
            case .ignored: return
            case .decided: break
            }
        }
        follow(handler.end(direction, reason: reason, at: time), direction, UnsafeRawBufferPointer(start: nil, count: 0),
               at: time)
    }

    /// TLS ALPN (told by the layer that decrypts) chose the protocol: it applies before any HTTP/1.x message.
    func negotiated(_ protocolName: String, at time: Timestamp) {
        guard !swapped, !http1.hasParsedMessages else { return }
        swap(Handover(next: .negotiated(protocolName), consumed: 0), .clientToServer,
             UnsafeRawBufferPointer(start: nil, count: 0), at: time)
    }

    func close(at time: Timestamp) {
        handler.close(at: time)
        retired?.close(at: time)
        retired = nil
    }

    // MARK: Deciding and swapping

    /// Acts on what the handler's call found, after it returned; `bytes` are that call's (empty for a gap or end).
    private func follow(_ handover: Handover?, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                        at time: Timestamp) {
        guard let handover else { return }
        swap(handover, direction, bytes, at: time)
    }

    /// Swaps to the handler for `handover.next`, once, and feeds it the bytes that are its. Returns false when
    /// nothing reads that layer and the current handler goes on (or the one swap already happened).
    @discardableResult
    private func swap(_ handover: Handover, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                      at time: Timestamp) -> Bool {
        guard !swapped, let next = makeHandler(for: handover.next, at: time) else { return false }
        retired = handler
        handler = next
        clientStart = .decided
        if !handover.held.isEmpty { handover.held.withUnsafeBytes { _ = next.consume(.clientToServer, $0, at: time) } }
        if handover.heldGap { _ = next.gap(.clientToServer, length: 0, at: time) }
        if handover.consumed < bytes.count {
            _ = next.consume(direction, UnsafeRawBufferPointer(rebasing: bytes[handover.consumed...]), at: time)
        }
        return true
    }

    /// The handler for `next`: a plugged-in decoder's, else what HTTPDecoding does alone. Reports the exchange that
    /// handed the connection over, unless the next layer reports it (h2c's upgrade request is stream 1's).
    private func makeHandler(for next: NextLayer, at time: Timestamp) -> ConnectionHandler? {
        let decoder = decoders?(context, next)
        switch next {
        case .unrecognizedStart, .negotiated:
            return decoder
        case .tls(let serverName, let alpn):
            if let decoder { return decoder }
            notice(.tls(serverName: serverName, alpn: alpn), at: time)
            return UnreadConnection()
        case .http2Preface:
            if let decoder { return decoder }
            notice(.http2Preface, at: time)
            return UnreadConnection()
        case .h2c(var exchange), .webSocket(var exchange), .upgrade(var exchange):
            guard let decoder else {
                context.emit(.exchange(exchange))
                return TunnelSession(context: context, kind: exchange.upgrade ?? "unknown")
            }
            if case .h2c = next { return decoder }
            exchange.upgradeDecoded = true
            context.emit(.exchange(exchange))
            return decoder
        case .tunnel(var exchange):
            exchange.upgradeDecoded = decoder != nil
            context.emit(.exchange(exchange))
            return TunnelSession(context: context, kind: "tunnel", inner: decoder)
        }
    }

    private func notice(_ kind: ConnectionNotice.Kind, at time: Timestamp) {
        context.emit(.notice(ConnectionNotice(connection: context.connection, client: context.client,
                                              server: context.server, kind: kind, time: time)))
    }

    /// The client's first bytes: TLS (labelled, then not read), a protocol a plugged-in decoder claims, or HTTP/1.x.
    private func sniff(_ sniffed: [UInt8], then bytes: UnsafeRawBufferPointer, at time: Timestamp, acknowledged: Int?) {
        if sniffed.isEmpty, let first = bytes.first, first != 0x16, decoders == nil || Self.couldStartRequestLine(first) {
            // Nearly every connection: a request line's first letter, decided without copying a byte.
            clientStart = .decided
            return follow(http1.consume(.clientToServer, bytes, at: time, acknowledged: acknowledged), .clientToServer,
                          bytes, at: time)
        }
        var buffer = sniffed
        clientStart = .decided  // no second reference while the bytes are appended
        buffer.append(contentsOf: bytes)
        guard let found = Self.firstBytes(buffer, tryingDecoders: decoders != nil, at: time) else {
            clientStart = buffer.count > context.limits.maxClientHelloBytes ? .ignored : .sniffing(buffer)
            return
        }
        if let found, swap(Handover(next: found, consumed: 0, held: Self.bytesFor(found, buffer)), .clientToServer,
                           UnsafeRawBufferPointer(start: nil, count: 0), at: time) {
            return
        }
        buffer.withUnsafeBytes {
            follow(http1.consume(.clientToServer, $0, at: time, acknowledged: acknowledged), .clientToServer, $0, at: time)
        }
    }

    /// The client bytes a next layer found in the first bytes starts from: all of them for a claimed protocol,
    /// none for TLS (labelled only).
    private static func bytesFor(_ next: NextLayer, _ buffer: [UInt8]) -> [UInt8] {
        if case .unrecognizedStart = next { return buffer }
        return []
    }

    /// A request line begins with a method's letters.
    private static func couldStartRequestLine(_ byte: UInt8) -> Bool { (0x41...0x5a).contains(byte) }

    /// What the client's first bytes are: nil while undecided, `.some(nil)` for HTTP/1.x, else the next layer.
    private static func firstBytes(_ bytes: [UInt8], tryingDecoders: Bool, at time: Timestamp) -> NextLayer?? {
        guard let isTLS = TLSRecordHeader.startsTLS(bytes) else { return nil }
        guard isTLS else {
            // Only a plugged-in decoder can read something else (HTTP/2 picked up mid-way): it needs a few bytes.
            guard tryingDecoders, let first = bytes.first, !couldStartRequestLine(first) else { return .some(nil) }
            return bytes.count >= 9 ? .some(.unrecognizedStart(bytes, at: time)) : nil
        }
        switch TLSClientHello.parse(bytes) {
        case .needMore: return nil
        case .notTLS: return .some(nil)
        case .clientHello(let hello): return .some(.tls(serverName: hello.serverName, alpn: hello.alpn))
        }
    }
}

/// A connection nothing reads further: TLS without a key log, the HTTP/2 preface without an HTTP/2 decoder.
private final class UnreadConnection: ConnectionHandler {
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? { nil }
    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? { nil }
    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? { nil }
    func close(at time: Timestamp) {}
}
