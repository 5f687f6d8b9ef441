import PacketDecoding

/// A warning about a connection as a whole rather than one message: a typed value holding the facts. Each layer
/// defines its own (TCP reassembly here, TLS, tunnels, HTTP/2 in theirs); `description` is the one place a value
/// becomes the sentence users read. Tests compare the values, not the sentences.
public protocol ConnectionWarning: Sendable, Hashable, CustomStringConvertible {}

/// A connection warning of any layer as one hashable value (what `HTTPEvent.warning` carries). The existential
/// is kept in a box: inline, it made every enum that carries this one (`HTTPEvent` and the events around it)
/// address-only, copied through value witnesses on every event (about 2% of an HTTP capture's CPU time).
public struct AnyConnectionWarning: Sendable, Hashable, CustomStringConvertible {
    private final class Box: Sendable {
        let value: any ConnectionWarning
        init(_ value: any ConnectionWarning) { self.value = value }
    }
    private let box: Box
    public var value: any ConnectionWarning { box.value }
    public init(_ value: any ConnectionWarning) { box = Box(value) }
    public var description: String { value.description }
    public static func == (lhs: Self, rhs: Self) -> Bool { AnyHashable(lhs.value) == AnyHashable(rhs.value) }
    public func hash(into hasher: inout Hasher) { hasher.combine(AnyHashable(value)) }
}

/// What TCP reassembly tells about a connection.
public enum ReassemblyWarning: ConnectionWarning {
    /// An RST a TCP stack would drop; the connection goes on.
    case resetIgnored(IgnoredReset)
    /// A new SYN on the 4-tuple of a connection that had not ended: the old one is ended.
    case reusedBySYN
    /// No SYN was seen; `server` is taken as the server because it has the lower port.
    case pickedUpMidStream(server: Endpoint)
    /// Too many connections: this least recently active one was evicted.
    case connectionLimitReached(limit: Int)
    /// A retransmission carried other bytes than the first copy; the first ones were kept.
    case retransmissionDiffers
    /// A buffer limit made reassembly give up waiting for missing bytes of one direction.
    case gaveUpWaiting(BufferLimit, missingBytes: Int, direction: StreamDirection)

    public enum IgnoredReset: Sendable, Hashable {
        /// It carries a TCP-MD5 or TCP-AO signature, which a stack without the key cannot check.
        case signed
        /// Its sequence number lies before what its sender already sent, or beyond any window (RFC 5961 3).
        case outsideWindow(sequence: UInt32, nextExpected: UInt32)
    }

    public enum BufferLimit: Sendable, Hashable {
        case bytesPerConnection(Int)
        case chunksPerConnection(Int)
        case bytesInAll(Int)
    }

    public var description: String {
        switch self {
        case .resetIgnored(.signed):
            "RST carrying a TCP-MD5/TCP-AO signature ignored, as a TCP stack would: the connection goes on"
        case .resetIgnored(.outsideWindow(let sequence, let next)):
            "RST outside the window (sequence \(sequence), next expected \(next)) ignored, as a TCP stack would: "
                + "the connection goes on"
        case .reusedBySYN:
            "connection reused by a new SYN before it ended; ending the old one"
        case .pickedUpMidStream(let server):
            "connection picked up mid-stream (no SYN seen); \(server) taken as the server because it has the lower port"
        case .connectionLimitReached(let limit):
            "connection limit (\(limit)) reached: evicted this least recently active connection"
        case .retransmissionDiffers:
            "retransmitted bytes differ from the ones first seen; kept the first ones"
        case .gaveUpWaiting(let limit, let missing, let direction):
            "\(limit.description) reached: gave up waiting for \(missing) missing bytes (\(direction.label))"
        }
    }
}

extension ReassemblyWarning.BufferLimit: CustomStringConvertible {
    public var description: String {
        switch self {
        case .bytesPerConnection(let bytes): "per-connection buffer limit (\(bytes) bytes)"
        case .chunksPerConnection(let chunks): "per-connection limit on separately buffered chunks (\(chunks))"
        case .bytesInAll(let bytes): "total buffer limit (\(bytes) bytes)"
        }
    }
}
