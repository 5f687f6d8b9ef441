/// Bounds on what the HTTP decoder holds per connection. Past a bound the decoder drops data, says so in the
/// exchange's warnings, and resynchronises; it never grows without bound.
public struct HTTPDecoderLimits: Sendable, Hashable {
    /// Start line plus header fields of one message (default 64 KiB; nginx uses 8 KiB per line, 32 KiB total).
    public var maxHeadBytes = 64 * 1024
    /// A chunk-size line, or one trailer section (default 16 KiB).
    public var maxChunkLineBytes = 16 * 1024
    /// Decoded body bytes kept per message for display and HAR (default 64 KiB). Size and SHA-256 always cover
    /// the whole body regardless.
    public var bodyKeepBytes = 64 * 1024
    /// Decoded bytes produced per body before decoding stops, against decompression bombs (default 1 GiB).
    public var maxDecodedBodyBytes = 1 << 30
    /// Requests waiting for their responses on one connection (pipelining); past this the oldest is reported
    /// without a response (default 128).
    public var maxPendingRequests = 128
    /// Bytes of a TLS ClientHello buffered to find its server name (default 16 KiB + record header).
    public var maxClientHelloBytes = 16 * 1024 + 5
    /// Bytes scanned while looking for the next message after a gap before giving up on a direction
    /// (default 1 MiB); scanning itself keeps at most one line.
    public var maxResyncScanBytes = 1 << 20

    public init() {}
}
