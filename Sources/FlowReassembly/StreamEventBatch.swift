import PacketDecoding

/// Reassembly's output for a run of packets, recorded in order with the stream bytes copied, so that the layers
/// above (TLS, HTTP, rendering) can consume it later on another thread, exactly as if they had been called directly.
///
/// Record into it as reassembly's `StreamConsumer`, hand it over whole (it is `Sendable`), `replay(into:)` on the
/// other side, then `removeAll()` and reuse it: the arrays keep their capacity, so a recycled batch records
/// without allocating. `Extra` carries values that belong in the same order but are not stream events
/// (the capture's QUIC labels, say).
public struct StreamEventBatch<Extra: Sendable>: StreamConsumer, Sendable {
    /// One recorded `StreamConsumer` call; stream data points into `bytes`, text into `texts`, warnings into
    /// `warnings`, extras into `extras`. Kept free of reference-counted payloads, so recording and replaying an event copies plain bytes
    /// (no retain and release per event: that showed as 5% of the CPU time with the strings inline).
    enum Event: Sendable {
        case opened(ConnectionID, client: Endpoint, server: Endpoint, time: Timestamp)
        case data(ConnectionID, StreamDirection, offset: Int, count: Int, time: Timestamp, acknowledged: Int?)
        case gap(ConnectionID, StreamDirection, length: Int, time: Timestamp)
        case ended(ConnectionID, StreamDirection, StreamEndReason, time: Timestamp)
        case closed(ConnectionID, time: Timestamp)
        case warning(ConnectionID?, index: Int, time: Timestamp)
        case negotiated(ConnectionID, text: Int, time: Timestamp)
        case idle
        case extra(Int)
    }

    private var events: [Event] = []
    private var bytes: [UInt8] = []
    private var texts: [String] = []
    private var warnings: [any ConnectionWarning] = []
    private var extras: [Extra] = []

    /// `eventCapacity` and `byteCapacity` are reserved up front (a hint, not a limit: a batch grows if asked to).
    public init(eventCapacity: Int = 0, byteCapacity: Int = 0) {
        events.reserveCapacity(eventCapacity)
        bytes.reserveCapacity(byteCapacity)
    }

    /// Recorded calls and extras.
    public var eventCount: Int { events.count }
    /// Stream bytes copied in.
    public var byteCount: Int { bytes.count }
    public var isEmpty: Bool { events.isEmpty }

    /// Forgets what was recorded, keeping the storage for the next run of packets.
    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        texts.removeAll(keepingCapacity: true)
        warnings.removeAll(keepingCapacity: true)
        extras.removeAll(keepingCapacity: true)
    }

    /// Records a value that is not a stream event, in order with the events around it.
    public mutating func append(extra: Extra) {
        events.append(.extra(extras.count))
        extras.append(extra)
    }

    /// Makes the recorded calls on `consumer`, in order, and hands each extra to `extra` at its place.
    public func replay<Consumer: StreamConsumer>(into consumer: inout Consumer, extra: (Extra) -> Void) {
        bytes.withUnsafeBytes { storage in
            for event in events {
                switch event {
                case .opened(let id, let client, let server, let time):
                    consumer.connectionOpened(id, client: client, server: server, at: time)
                case .data(let id, let direction, let offset, let count, let time, let acknowledged):
                    consumer.streamData(id, direction, UnsafeRawBufferPointer(rebasing: storage[offset..<offset + count]),
                                        at: time, acknowledged: acknowledged)
                case .gap(let id, let direction, let length, let time):
                    consumer.streamGap(id, direction, length: length, at: time)
                case .ended(let id, let direction, let reason, let time):
                    consumer.streamEnded(id, direction, reason: reason, at: time)
                case .closed(let id, let time):
                    consumer.connectionClosed(id, at: time)
                case .warning(let id, let index, let time):
                    consumer.warning(id, warnings[index], at: time)
                case .negotiated(let id, let text, let time):
                    consumer.applicationProtocolNegotiated(id, texts[text], at: time)
                case .idle:
                    consumer.idle()
                case .extra(let index):
                    extra(extras[index])
                }
            }
        }
    }

    // MARK: StreamConsumer (recording)

    public mutating func idle() {
        events.append(.idle)
    }

    public mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        events.append(.opened(id, client: client, server: server, time: time))
    }

    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp, acknowledged: Int?) {
        events.append(.data(id, direction, offset: self.bytes.count, count: bytes.count, time: time,
                            acknowledged: acknowledged))
        self.bytes.append(contentsOf: bytes)
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        events.append(.gap(id, direction, length: length, time: time))
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {
        events.append(.ended(id, direction, reason, time: time))
    }

    public mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        events.append(.closed(id, time: time))
    }

    public mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        events.append(.warning(id, index: warnings.count, time: time))
        warnings.append(warning)
    }

    public mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        events.append(.negotiated(id, text: texts.count, time: time))
        texts.append(protocolName)
    }
}
