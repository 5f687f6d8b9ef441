/// What the live view keeps in memory, with documented defaults (docs/liveview.md). Past a limit the oldest
/// exchanges are dropped or a body is not kept, and the API says so (`dropped`, `bodies.*.reason`); memory never
/// grows with the capture.
public struct LiveViewLimits: Sendable, Equatable {
    /// Decoded bytes kept per body (default 1 MiB, what `--har` keeps, so the HAR download equals `--har`'s file).
    public var bodyBytes = 1 << 20
    /// Decoded bytes kept over all bodies together (default 256 MiB); past it later bodies are not kept.
    public var sessionBodyBytes = 256 << 20
    /// Records held (exchanges, TLS sessions and WebSocket messages; default 200,000); past it the oldest are
    /// dropped, bodies and all.
    public var exchanges = 200_000
    /// Records per `/api/exchanges` answer (default 2,000).
    public var pageSize = 2_000
    /// Connections whose TLS facts, WebSocket upgrade or handshake (the timeline's directions) are remembered
    /// (default 10,000; oldest forgotten first).
    public var connections = 10_000
    /// Throughput buckets (default 3,600): past it neighbouring buckets are merged and the bucket doubles.
    public var throughputBuckets = 3_600
    /// Open HTTP and WebSocket connections to the server (default 64); more are closed at once.
    public var clientConnections = 64
    /// Bytes of a request body the server reads (default 64 KiB; only the conditioner's POST has one).
    public var requestBodyBytes = 64 << 10
    /// Bytes of a request head (default 16 KiB), as NIO's parser counts them.
    public var requestHeadBytes = 16 << 10

    public init() {}
}
