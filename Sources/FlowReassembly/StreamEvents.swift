import PacketDecoding

/// What reassembly tells the layer above (HTTP decoding). The contract between FlowReassembly and HTTPDecoding:
/// per connection, each direction's bytes arrive exactly once, in order, with any hole announced as a gap.

/// Which way bytes flow within a connection.
public enum StreamDirection: Sendable, Hashable {
    /// From the connection's initiator (sender of the SYN, or the side guessed to be the client) to the server.
    case clientToServer
    /// From the server back to the client.
    case serverToClient
}

/// Identifies one TCP connection for its whole life (a reused 4-tuple after close gets a new id).
public struct ConnectionID: Sendable, Hashable {
    public var rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
}

/// Why a direction of a stream ended.
public enum StreamEndReason: Sendable, Hashable {
    case fin
    case reset
    /// No packets for longer than the idle timeout.
    case idleTimeout
    /// Dropped to stay within the connection-count or memory limits.
    case evicted
    /// The capture ended (end of file, or Ctrl-C) while the stream was still open.
    case captureEnded
}

/// Receives reassembled streams. Byte buffers are lent for the duration of the call only.
public protocol StreamConsumer {
    /// A new connection, with client and server decided (SYN sender is the client; without a SYN, a guess).
    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp)
    /// The next in-order bytes of one direction. `time` is when the segment carrying them was captured.
    /// `acknowledged`: how far into the other direction's stream the sender of these bytes had received when it
    /// sent them (the ACK number of the segment carrying the first of them, as a byte offset from the start of
    /// the other direction's stream, counting its data and gaps as delivered to this consumer); nil when not known
    /// (no ACK, the other direction not seen yet, or bytes transformed on the way, as decrypted TLS).
    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?)
    /// `length` bytes of one direction that were never seen (capture loss, limits, or picked up mid-stream).
    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp)
    /// One direction has ended; no more data or gaps follow for it.
    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp)
    /// Both directions have ended; the id will not be used again.
    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp)
    /// Something worth telling the user that is not tied to one stream's bytes (a limit was hit, say).
    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp)
    /// The application protocol a connection negotiated out of band (TLS ALPN), before its first stream bytes.
    mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp)
    /// No packet has come for a while (live captures, about every 100 ms while quiet): work held back for something
    /// outside the packets (a TLS key not logged yet) may go on now rather than at the next packet.
    mutating func idle()
}

extension StreamConsumer {
    public mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {}
    public mutating func idle() {}

    /// Bytes whose acknowledgment is not known (a stream made up in a test, or bytes transformed on the way).
    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp) {
        streamData(id, direction, bytes, at: time, acknowledged: nil)
    }
}
