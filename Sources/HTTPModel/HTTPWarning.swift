import FlowReassembly

/// Something wrong or odd about one exchange or WebSocket message, as a value: what happened and the facts that
/// say how much (bytes, limits, stream ids, the text as sent), never a sentence. Decoders append these to the
/// model's `warnings`; `description` is the one place they become words, used alike by the text, JSON and HAR
/// renderers, so tests compare values and the wording can change without touching a decoder (after Zeek's named
/// weirds and NIO's typed errors).
///
/// Text "as sent" (a header line, a version, a status code) is carried already cut to a preview and made printable
/// by the decoder (`HTTPHeadParser.preview`): the decoder is the one that has the bytes.
public enum HTTPWarning: Sendable, Hashable {
    // MARK: HTTP/1.x start lines and heads, read leniently (RFC 9112 recipient leniency)

    case bareLineFeeds
    case extraWhitespaceInStartLine(MessageRole)
    /// `HTTP/1.1` in another case, as sent.
    case versionNotUpperCase(String)
    /// `HTTP/1.` and the like, as sent.
    case truncatedVersion(String)
    case unusualVersion(String)
    case requestLineWithoutTarget
    case spacesInRequestTarget
    case http09Request
    /// `GET /HTTP/1.1`: the version glued to the target.
    case versionGluedToTarget(String)
    case statusLineWithoutCode
    case statusCodeNotThreeDigits(String)
    case statusCodeOutOfRange(Int)
    case nonNumericStatusCode(String)
    case http09Response
    /// The line, as sent.
    case continuationLineBeforeAnyHeader(String)
    case obsoleteLineFolding
    case headerLineWithoutColon(String)
    case whitespaceBeforeColon(String)
    case invalidHeaderName(String)
    /// More oddities in one head than are listed one by one.
    case moreHeadOddities(Int)
    /// The first line of a head is not a start line (seen as soon as it is whole).
    case notAMessageStart(MessageRole, line: String)
    /// A complete head whose first line is not a start line.
    case notAStartLine(MessageRole, line: String)
    case emptyHead

    // MARK: HTTP/1.x framing and pairing

    /// The Content-Length values as sent, split at commas.
    case duplicateContentLength([String])
    case conflictingContentLength([String])
    case negativeContentLength(String)
    case contentLengthTooLarge(String)
    case invalidContentLength([String])
    case contentLengthWithLeadingZeros(String)
    case transferEncodingWithContentLength
    /// The Transfer-Encoding codings as listed.
    case transferEncodingNotEndingInChunked([String])
    /// `Expect: 100-continue` on a request without content, which RFC 9110 section 10.1.1 forbids a client to send.
    case continueExpectedWithoutContent
    case headOverLimit(MessageRole, limit: Int)
    case chunkDataWithoutLineEnd
    case negativeChunkSize(String)
    case chunkSizeOverflows(String)
    case invalidChunkSizeLine(String)
    case chunkLineOverLimit(limit: Int)
    case trailersOverLimit(limit: Int)
    /// Resynchronising after a gap scanned `limit` bytes without finding a message.
    case noMessageAfterGap(MessageRole, scanned: Int)
    case gapInBody(MessageRole, length: Int)
    case gapInBodyRestLost(MessageRole, length: Int)
    case gapBeforeMessage(MessageRole, length: Int)
    /// The head was cut by a gap and reported with the fields seen before it.
    case gapInsideHead(MessageRole, length: Int)
    /// The head was cut by a gap before its start line was whole.
    case gapInsideHeadLost(MessageRole, length: Int)
    case bodyEndsWithConnection(MessageRole, StreamEndReason)
    case bodyCutShort(MessageRole, missing: Int, StreamEndReason)
    case chunkedBodyCutShort(MessageRole, StreamEndReason)
    case headCutShort(MessageRole, bytes: Int, StreamEndReason)
    /// The request line itself was cut short (no line end before the connection or capture ended): the method and
    /// target are shown as sent, the version as far as it came (empty when none).
    case requestLineCutShort(bytes: Int, StreamEndReason)
    /// Bytes of this side that reached the decoder but made no message (no status line, junk after a failed
    /// parse), counted on the exchange left waiting for them.
    case bytesNotParsed(MessageRole, bytes: Int)
    case bytesLostAwaitingUpgrade
    case bytesLostAwaitingConnectResponse
    case tooManyPendingRequests(limit: Int)
    case responseWithoutRequest
    /// After a gap in the request stream, the response's ACK number shows the server had not received the oldest
    /// request still waiting: its own request was lost (`GapPairing`).
    case responseToLostRequest
    /// The ACK numbers pair the next response with a later request: this one's response was in a gap of `length`
    /// bytes of the response stream (`GapPairing`).
    case responseLostInGap(length: Int)
    case noResponseBeforeEnd
    case responseBeforeRequestBodyComplete
    case interimResponsesDropped(total: Int, kept: Int)

    // MARK: Content codings (each names the body it is about: the exchange's list holds both sides')

    case tooManyContentCodings(MessageRole, listed: Int, limit: Int)
    /// The capture-wide budget was used up before this body began.
    case decodingBudgetUsedUp(MessageRole, limit: Int)
    case unsupportedContentCoding(MessageRole, String)
    /// The decoder's own words (zlib's, brotli's, zstd's message) for why it failed.
    case contentDecodingFailed(MessageRole, coding: String, reason: String)
    /// `codings`: in the order they are removed (the reverse of the header's).
    case decodedBodyOverLimit(MessageRole, codings: [String], limit: Int)
    /// The capture-wide budget ran out in the middle of this body.
    case decodingBudgetRanOut(MessageRole, codings: [String], limit: Int)
    case contentDecodingStoppedAtGap(MessageRole, length: Int)
    case bytesAfterCodedStream(MessageRole, Int, coding: String)

    // MARK: HTTP/2 streams

    /// `direction`: whose bytes were lost.
    case http2BytesNeverCaptured(length: Int, from: StreamDirection)
    case http2FrameSkipped(HTTP2FrameTrouble)
    case http2MalformedFrame(HTTP2FrameTrouble)
    case http2HeaderBlockUnfinished
    case http2HeaderBlockOverLimit(limit: Int)
    /// The HPACK decoder's own words for why the block failed.
    case hpackFailed(String)
    case hpackMalformedField(offset: Int, blockBytes: Int)
    case hpackEntriesFromBeforeCapture(fields: Int)
    case http2TooManyStreams(limit: Int)
    case http2DataWithoutHeaders
    /// The stream did not end with END_STREAM both ways (never `.complete`).
    case http2StreamEnded(HTTP2StreamFacts.Outcome)

    // MARK: HTTP/3 streams and QPACK

    /// `direction`: whose bytes of this stream were lost.
    case http3BytesNeverCaptured(length: Int, from: StreamDirection)
    /// A frame whose payload is buffered (not DATA) was larger than the limit; skipped.
    case http3FrameOverLimit(type: UInt64, length: UInt64, limit: Int)
    /// A frame type not allowed where it came (SETTINGS on a request stream, an HTTP/2-only type, DATA before
    /// HEADERS), or one whose payload could not be read; skipped.
    case http3FrameUnexpected(type: UInt64)
    /// Frames waiting behind a blocked header block went over the limit; the rest of the side was not decoded.
    case http3HeldBytesOverLimit(limit: Int)
    /// The side's FIN came inside a frame.
    case http3FrameCutByFIN(from: StreamDirection)
    case http3TooManyStreams(limit: Int)
    /// STOP_SENDING from `sender`, asking the other side to stop.
    case http3StopSending(sender: StreamDirection, code: UInt64, codeName: String)
    /// The stream did not end with FIN both ways (never `.complete`).
    case http3StreamEnded(HTTP3StreamFacts.Outcome)
    /// nghttp3's own words for why a header block or the encoder stream could not be decoded.
    case qpackFailed(String)
    /// The block referred to QPACK dynamic table entries that were not followed (see `HTTP3StreamFacts.headerTableUnknown`).
    case qpackTableNotTracked
    case qpackTooManyBlockedStreams(limit: Int)
    /// The decoded fields of one block (name + value + 32 each, as RFC 9204 counts them) passed the limit: one-byte
    /// references to a large table entry would otherwise expand without bound. Fields before it are kept.
    case qpackHeaderListOverLimit(limit: Int)
    /// The block waited for `required` table entries; only `inserted` had arrived when the stream or capture ended.
    case qpackNeverUnblocked(required: UInt64, inserted: UInt64)

    // MARK: WebSocket messages

    case webSocketControlFrameTooLong(Int)
    case webSocketOrphanContinuation
    case webSocketMessageInterrupted
    case webSocketRSV1WithoutDeflate
    /// Size and hash cover the first `covered` bytes.
    case webSocketMessageOverLimit(limit: Int, covered: Int)
    case webSocketInflateNotStarted
    /// zlib's message, or its status code when it gave none.
    case webSocketInflateFailed(String)
    case webSocketBytesNeverCaptured(length: Int)
    case webSocketConnectionEndedInMessage

    // MARK: Bounds

    /// The message's own list was full; later warnings were dropped (HTTPDecoderLimits.maxWarningsPerMessage).
    case furtherWarningsNotShown
    /// The exchange's list was full; this many were dropped.
    case moreWarningsNotShown(Int)
}

/// Which message of an exchange.
public enum MessageRole: Sendable, Hashable {
    case request, response
    public var name: String { self == .request ? "request" : "response" }
}

/// What was wrong with an HTTP/2 frame that was skipped or could not be read.
public enum HTTP2FrameTrouble: Sendable, Hashable {
    case dataPaddingLongerThanFrame(padding: Int, frameLength: Int)
    case paddedDataWithoutPadLength
    case frameOverLimit(length: Int, limit: Int)
    case headersPaddedButEmpty
    case headersPaddingOrPriorityTooLong
    case pushPromisePaddedButEmpty
    case pushPromiseTooShort
    case continuationWithoutHeaderBlock
}

extension StreamEndReason {
    /// A body delimited by the connection's close is whole only after a FIN.
    package var isOrderly: Bool { self == .fin }
}

extension Array where Element == HTTPWarning {
    /// Keeps at most `limit` warnings, the last of them saying that more were dropped.
    package mutating func keepWithin(_ limit: Int) {
        let limit = Swift.max(2, limit)
        guard count > limit else { return }
        removeSubrange((limit - 1)...)
        append(.furtherWarningsNotShown)
    }
}
