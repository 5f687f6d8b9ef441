/// Bounds on what the HTTP/2, gRPC and WebSocket decoders hold per connection. Past each one the decoder says
/// so in a warning (or the exchange's warnings) and drops or skips, never grows.
public struct HTTP2Limits: Sendable, Hashable {
    /// Payload bytes of one non-DATA frame that are buffered to parse it (default 1 MiB; HTTP/2 allows 16 MiB
    /// with SETTINGS_MAX_FRAME_SIZE, real peers use 16 KiB). DATA payloads stream through without buffering.
    public var maxBufferedFrameBytes = 1 << 20
    /// One header block: HEADERS or PUSH_PROMISE plus its CONTINUATION frames (default 256 KiB).
    public var maxHeaderBlockBytes = 256 * 1024
    /// Decoded header list of one block, counted as HPACK does (name + value + 32 per field; default 256 KiB).
    public var maxHeaderListBytes = 256 * 1024
    /// HPACK dynamic table size the decoder follows at most, whatever SETTINGS_HEADER_TABLE_SIZE says (default 1 MiB).
    public var maxHeaderTableBytes = 1 << 20
    /// Streams open at once on one connection (default 1000); past it the oldest is reported unfinished.
    public var maxOpenStreams = 1000
    /// gRPC messages listed one by one per direction of a call (default 64); later ones are only counted.
    public var maxListedGRPCMessages = 64
    /// One WebSocket message after reassembly and inflation (default 16 MiB); past it the message is
    /// reported cut short with size and hash of what was seen.
    public var maxWebSocketMessageBytes = 16 << 20
    /// Bytes of a WebSocket control frame or frame header buffered (RFC 6455 caps control payloads at 125).
    public var maxWebSocketFrameHeaderBytes = 14

    public init() {}
}
