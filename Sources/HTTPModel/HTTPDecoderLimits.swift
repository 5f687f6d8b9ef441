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
    /// Whether bodies get their SHA-256 (`HTTPBody.sha256`, WebSocket messages' too). Only the JSON view shows it;
    /// hashing is about a third of the HTTP path's CPU time on a browsing capture, so the text view, HAR and
    /// --stats turn it off and `sha256` is then empty (default true).
    public var hashBodies = true
    /// Decoded bytes produced per body before decoding stops, against decompression bombs (default 1 GiB).
    public var maxDecodedBodyBytes = 1 << 30
    /// Bytes all content decoders together may produce over one capture (default 4 GiB): past it bodies are kept
    /// as received, with a warning, so a capture full of bombs cannot run for minutes.
    public var maxDecodedBytesPerCapture = 4 << 30
    /// Content codings removed from one body (default 4; curl stops at 5): a longer list is kept as received.
    public var maxContentCodings = 4
    /// 1xx interim responses kept per exchange (default 16); further ones are counted in a warning.
    public var maxInterimResponses = 16
    /// Warnings kept per message (default 32); further ones are counted in a last warning.
    public var maxWarningsPerMessage = 32
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
