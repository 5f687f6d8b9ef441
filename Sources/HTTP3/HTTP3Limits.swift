/// Bounds on what the HTTP/3 decoder holds per QUIC connection. Past each one it says so (the exchange's warnings
/// or a connection warning) and drops or skips, never grows.
public struct HTTP3Limits: Sendable, Hashable {
    /// Payload bytes of one non-DATA frame buffered to parse it (default 1 MiB). DATA streams through.
    public var maxBufferedFrameBytes = 1 << 20
    /// Decoded fields of one header block, counted as RFC 9204 section 3.2.1 does (name + value + 32 per field;
    /// default 256 KiB). A one-byte reference can repeat a large table entry, so decoding stops past it.
    public var maxHeaderListBytes = 256 * 1024
    /// QPACK dynamic table capacity followed at most (default 1 MiB); a larger SETTINGS_QPACK_MAX_TABLE_CAPACITY
    /// leaves that side's table unfollowed (literals and static references still decode).
    public var maxQPACKTableBytes = 1 << 20
    /// Header blocks waiting for QPACK entries at once, per side (default 100, or less when the peer said less).
    public var maxBlockedStreams = 100
    /// Bytes of one stream side held back behind a blocked header block (default 1 MiB).
    public var maxHeldBytes = 1 << 20
    /// Encoder stream bytes held until the SETTINGS that size the table arrive (default 64 KiB).
    public var maxEarlyEncoderBytes = 64 * 1024
    /// Request streams (and pushes) open at once (default 1000); past it the oldest is reported unfinished.
    public var maxOpenStreams = 1000

    public init() {}
}

/// RFC 9114 section 8.1 and RFC 9204 section 6 error codes by name.
public enum HTTP3ErrorCode {
    public static func name(_ code: UInt64) -> String {
        let http3 = ["H3_NO_ERROR", "H3_GENERAL_PROTOCOL_ERROR", "H3_INTERNAL_ERROR", "H3_STREAM_CREATION_ERROR",
                     "H3_CLOSED_CRITICAL_STREAM", "H3_FRAME_UNEXPECTED", "H3_FRAME_ERROR", "H3_EXCESSIVE_LOAD",
                     "H3_ID_ERROR", "H3_SETTINGS_ERROR", "H3_MISSING_SETTINGS", "H3_REQUEST_REJECTED",
                     "H3_REQUEST_CANCELLED", "H3_REQUEST_INCOMPLETE", "H3_MESSAGE_ERROR", "H3_CONNECT_ERROR",
                     "H3_VERSION_FALLBACK"]
        let qpack = ["QPACK_DECOMPRESSION_FAILED", "QPACK_ENCODER_STREAM_ERROR", "QPACK_DECODER_STREAM_ERROR"]
        if code >= 0x100 && code - 0x100 < UInt64(http3.count) { return http3[Int(code - 0x100)] }
        if code >= 0x200 && code - 0x200 < UInt64(qpack.count) { return qpack[Int(code - 0x200)] }
        // Reserved codes 0x1f * N + 0x21 exercise the requirement that unknown codes be treated as H3_NO_ERROR.
        if code >= 0x21 && (code - 0x21) % 0x1f == 0 { return "reserved" }
        return "unknown"
    }
}
