/// Hard bounds on what reassembly keeps in memory. Past a limit the oldest buffered data is given up: the missing
/// bytes before it become an explicit `streamGap`, the buffered bytes are delivered, and a warning says which
/// limit was hit. Nothing grows without bound.
public struct ReassemblyLimits: Sendable, Hashable {
    /// Out-of-order bytes buffered for one connection (both directions together). Default 4 MiB: several full
    /// receive windows of a fast link, so ordinary reordering and retransmission never hit it.
    public var maxBufferedBytesPerConnection: Int
    /// Out-of-order bytes buffered across all connections. Default 32 MiB: even with array growth slack (up to
    /// twice the counted bytes) and a full connection table, reassembly stays under the 100 MB peak-memory target.
    public var maxBufferedBytesTotal: Int
    /// Connections tracked at once, including recently closed ones kept to recognise late retransmissions.
    /// Default 65,536. At the limit the least recently active eighth are evicted (closed ones first).
    public var maxConnections: Int
    /// Seconds without a packet after which a connection is ended (`.idleTimeout`) and forgotten. Default 300,
    /// Zeek's TCP inactivity timeout: long enough for HTTP keep-alive connections that sit idle between requests.
    public var idleTimeoutSeconds: Double
    /// Seconds of packet time to keep waiting for bytes the receiver has already acknowledged but the capture never
    /// showed. The sender will not send them again, so past this delay they are announced as a gap and the stream
    /// moves on (a live capture with kernel drops keeps printing). The wait only covers captures that show an ACK
    /// before the data it acknowledges (merged interfaces, re-sorted files). Default 1.
    public var acknowledgedHoleTimeoutSeconds: Double
    /// Separate out-of-order chunks (runs of bytes between holes) buffered for one connection, both directions
    /// together. Default 4,096: a 4 MiB window of full-size segments holds under 3,000, and contiguous segments
    /// merge into one chunk. Bounds the work per segment on hostile captures (a hole every other byte).
    public var maxBufferedSegmentsPerConnection: Int = 4_096

    public init(maxBufferedBytesPerConnection: Int = 4 << 20, maxBufferedBytesTotal: Int = 32 << 20,
                maxConnections: Int = 65_536, idleTimeoutSeconds: Double = 300,
                acknowledgedHoleTimeoutSeconds: Double = 1) {
        self.maxBufferedBytesPerConnection = max(1, maxBufferedBytesPerConnection)
        self.maxBufferedBytesTotal = max(1, maxBufferedBytesTotal)
        self.maxConnections = max(1, maxConnections)
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.acknowledgedHoleTimeoutSeconds = acknowledgedHoleTimeoutSeconds
    }

    public static let `default` = ReassemblyLimits()
}
