import FlowReassembly

/// The one place an `HTTPWarning` becomes words: every view (text, JSON, HAR) shows this description.
extension HTTPWarning: CustomStringConvertible {
    public var description: String {
        switch self {
        case .bareLineFeeds: return "bare LF line ends (no CR)"
        case .extraWhitespaceInStartLine(let role):
            return "extra whitespace in the \(role == .request ? "request" : "status") line"
        case .versionNotUpperCase(let version): return "version not in upper case (\"\(version)\")"
        case .truncatedVersion(let version): return "truncated version \"\(version)\""
        case .unusualVersion(let version): return "unusual version \"\(version)\""
        case .requestLineWithoutTarget: return "request line without a target"
        case .spacesInRequestTarget: return "spaces inside the request target"
        case .http09Request: return "HTTP/0.9 request (no version)"
        case .versionGluedToTarget(let version):
            return "no space before \"\(version)\" at the end of the request line: "
                + "read as part of the target, as browsers and Zeek read it"
        case .statusLineWithoutCode: return "status line without a status code"
        case .statusCodeNotThreeDigits(let code): return "status code \"\(code)\" is not three digits"
        case .statusCodeOutOfRange(let code): return "status code \(code) outside 100-599"
        case .nonNumericStatusCode(let code): return "non-numeric status code \"\(code)\""
        case .http09Response: return "HTTP/0.9 response (no status line); body runs to the connection's close"
        case .continuationLineBeforeAnyHeader(let line):
            return "header continuation line before any header ignored: \"\(line)\""
        case .obsoleteLineFolding: return "obsolete line folding (a header value continued on the next line)"
        case .headerLineWithoutColon(let line): return "header line without a name and colon ignored: \"\(line)\""
        case .whitespaceBeforeColon(let line): return "whitespace between a header name and its colon: \"\(line)\""
        case .invalidHeaderName(let name): return "invalid header name \"\(name)\""
        case .moreHeadOddities(let count): return "\(count) more oddities in this head"
        case .notAMessageStart(let role, let line): return "not an HTTP/1.x \(role.name) start line: \"\(line)\""
        case .notAStartLine(let role, let line):
            return "not an HTTP/1.x \(role == .request ? "request" : "status") line: \"\(line)\""
        case .emptyHead: return "empty message head"

        case .duplicateContentLength(let values): return "duplicate Content-Length (\(values.joined(separator: ", ")))"
        case .conflictingContentLength(let values):
            return "conflicting Content-Length values (\(values.joined(separator: ", ")))"
        case .negativeContentLength(let value): return "negative Content-Length \"\(value)\""
        case .contentLengthTooLarge(let value): return "Content-Length \"\(value)\" too large"
        case .invalidContentLength(let values): return "invalid Content-Length \"\(values.joined(separator: ", "))\""
        case .contentLengthWithLeadingZeros(let value): return "Content-Length with leading zeros \"\(value)\""
        case .transferEncodingWithContentLength:
            return "both Transfer-Encoding and Content-Length: a request smuggling vector (RFC 9112 section 6.1); "
                + "Content-Length ignored"
        case .continueExpectedWithoutContent:
            return "Expect: 100-continue on a request without content: a client must not send it (RFC 9110 section 10.1.1)"
        case .transferEncodingNotEndingInChunked(let codings):
            return "Transfer-Encoding \"\(codings.joined(separator: ", "))\" does not end with chunked: body length "
                + "unknown (RFC 9112 section 6.3)"
        case .headOverLimit(let role, let limit): return "\(role.name) head longer than the \(limit)-byte limit; skipped"
        case .chunkDataWithoutLineEnd: return "chunked body: expected CRLF after chunk data"
        case .negativeChunkSize(let line): return "chunked body: negative chunk size \"\(line)\""
        case .chunkSizeOverflows(let line): return "chunked body: chunk size that overflows \"\(line)\""
        case .invalidChunkSizeLine(let line): return "chunked body: invalid chunk size line \"\(line)\""
        case .chunkLineOverLimit(let limit): return "chunked body: line longer than \(limit) bytes"
        case .trailersOverLimit(let limit): return "chunked body: trailer section longer than \(limit) bytes"
        case .noMessageAfterGap(let role, let scanned):
            return "no \(role.name) found in \(scanned) bytes after a gap; rest of the stream not parsed"
        case .gapInBody(let role, let length): return "gap of \(length) bytes in \(role.name) body"
        case .gapInBodyRestLost(let role, let length):
            return "gap of \(length) bytes in \(role.name) body; rest of the message lost"
        case .gapBeforeMessage(let role, let length):
            return "gap of \(length) bytes before this \(role.name); earlier messages may be missing"
        case .gapInsideHead(let role, let length):
            return "gap of \(length) bytes inside the \(role.name) head; the rest of it was not captured"
        case .gapInsideHeadLost(let role, let length):
            return "gap of \(length) bytes inside a \(role.name) head; that message was lost"
        case .bodyEndsWithConnection(let role, let reason):
            return "\(role.name) body ends with the connection, which \(reason.wording); it may be incomplete"
        case .bodyCutShort(let role, let missing, let reason):
            return "\(role.name) body cut short: \(missing) bytes missing when the connection \(reason.wording)"
        case .chunkedBodyCutShort(let role, let reason):
            return "chunked \(role.name) body cut short when the connection \(reason.wording)"
        case .headCutShort(let role, let bytes, let reason):
            return "\(role.name) head cut short (\(bytes) bytes) when the connection \(reason.wording)"
        case .requestLineCutShort(let bytes, let reason):
            return "request line cut short (\(bytes) bytes, no line end) when the connection \(reason.wording)"
        case .bytesNotParsed(let role, let bytes):
            return "\(bytes) byte\(bytes == 1 ? "" : "s") from the \(role == .request ? "client" : "server") not parsed as HTTP"
        case .bytesLostAwaitingUpgrade: return "bytes lost while waiting for the upgrade response"
        case .bytesLostAwaitingConnectResponse: return "bytes lost while waiting for the CONNECT response"
        case .tooManyPendingRequests(let limit):
            return "more than \(limit) requests waiting on this connection; reported without a response"
        case .responseWithoutRequest: return "response without a captured request"
        case .responseToLostRequest:
            return "response without a captured request: the server had not received the next request when it sent "
                + "this (its ACK number), so its own request was lost in a gap"
        case .responseLostInGap(let length):
            return "no response: lost in the gap of \(length) bytes in the response stream (the ACK numbers pair the "
                + "next response with a later request)"
        case .noResponseBeforeEnd: return "no response before the connection ended"
        case .responseBeforeRequestBodyComplete: return "response arrived before the request body was complete"
        case .interimResponsesDropped(let total, let kept):
            return "\(total) interim (1xx) responses; only the first \(kept) kept (HTTPDecoderLimits.maxInterimResponses)"

        case .tooManyContentCodings(let role, let listed, let limit):
            return "\(role.name) body: \(listed) content codings listed, more than the limit of \(limit); "
                + "body kept as received"
        case .decodingBudgetUsedUp(let role, let limit):
            return "\(role.name) body: the capture's content-decoding budget (\(limit) decoded bytes, "
                + "HTTPDecoderLimits.maxDecodedBytesPerCapture) is used up; body kept as received"
        case .unsupportedContentCoding(let role, let coding):
            return "\(role.name) body: unsupported content coding \"\(coding)\"; body kept as received"
        case .contentDecodingFailed(let role, let coding, let reason):
            return "\(role.name) body: \(coding) decoding failed: \(reason); body kept as received"
        case .decodedBodyOverLimit(let role, let codings, let limit):
            return "\(role.name) body: \(codings.joined(separator: ", ")) decoding failed: decoded body exceeds the "
                + "\(limit)-byte limit (HTTPDecoderLimits.maxDecodedBodyBytes); body kept as received"
        case .decodingBudgetRanOut(let role, let codings, let limit):
            return "\(role.name) body: \(codings.joined(separator: ", ")) decoding failed: the capture's "
                + "content-decoding budget (\(limit) decoded bytes, HTTPDecoderLimits.maxDecodedBytesPerCapture) is used up; "
                + "body kept as received"
        case .contentDecodingStoppedAtGap(let role, let length):
            return "\(role.name) body: content decoding stopped at a gap of \(length) bytes; body kept as received"
        case .bytesAfterCodedStream(let role, let count, let coding):
            return "\(role.name) body: \(count) bytes after the end of the \(coding) stream were not decoded"

        case .http2BytesNeverCaptured(let length, let direction):
            return "\(length) bytes from the \(direction.peerName) were never captured; the rest of its HTTP/2 frames "
                + "on this connection were not decoded"
        case .http2FrameSkipped(let trouble): return "frame skipped: \(trouble)"
        case .http2MalformedFrame(let trouble): return "malformed frame: \(trouble)"
        case .http2HeaderBlockUnfinished: return "header block not finished by CONTINUATION frames; dropped"
        case .http2HeaderBlockOverLimit(let limit): return "header block over the \(limit)-byte limit; not decoded"
        case .hpackFailed(let error): return "HPACK: \(error); header table now treated as unknown"
        case .hpackMalformedField(let offset, let blockBytes):
            return "HPACK: malformed field representation at offset \(offset) of a \(blockBytes)-byte block"
        case .hpackEntriesFromBeforeCapture(let fields):
            return "\(fields) header field\(fields == 1 ? "" : "s") referred to HPACK table entries from before the "
                + "capture; not shown"
        case .http2TooManyStreams(let limit):
            return "more than \(limit) streams open on this connection; reported before it ended"
        case .http2DataWithoutHeaders: return "DATA on a stream whose headers were not captured"
        case .http2StreamEnded(let outcome): return outcome.wording

        case .http3BytesNeverCaptured(let length, let direction):
            return "\(length) bytes of this stream from the \(direction.peerName) were never captured; its later HTTP/3 "
                + "frames were not decoded"
        case .http3FrameOverLimit(let type, let length, let limit):
            return "HTTP/3 frame 0x\(String(type, radix: 16)) of \(length) bytes is over the \(limit)-byte limit; skipped"
        case .http3FrameUnexpected(let type): return "HTTP/3 frame 0x\(String(type, radix: 16)) not expected here; skipped"
        case .http3HeldBytesOverLimit(let limit):
            return "over \(limit) bytes waited behind a blocked header block; the rest of this side was not decoded"
        case .http3FrameCutByFIN(let direction): return "the \(direction.peerName)'s side of the stream ended inside an HTTP/3 frame"
        case .http3TooManyStreams(let limit):
            return "more than \(limit) streams open on this connection; reported before it ended"
        case .http3StopSending(let sender, let code, let name):
            return "STOP_SENDING from \(sender.peerName): \(name) (0x\(String(code, radix: 16)))"
        case .http3StreamEnded(let outcome): return outcome.wording
        case .qpackFailed(let error): return "QPACK: \(error); dynamic table no longer followed"
        case .qpackTableNotTracked:
            return "header block referred to QPACK dynamic table entries that could not be followed; fields not shown"
        case .qpackTooManyBlockedStreams(let limit):
            return "more than \(limit) header blocks waiting for QPACK table entries; this one not decoded"
        case .qpackHeaderListOverLimit(let limit):
            return "header block decodes to over \(limit) bytes (HTTP3Limits.maxHeaderListBytes); the rest of it not shown"
        case .qpackNeverUnblocked(let required, let inserted):
            return "header block waited for \(required) QPACK table entries, only \(inserted) arrived; not decoded"

        case .webSocketControlFrameTooLong(let length): return "control frame of \(length) bytes (at most 125 allowed)"
        case .webSocketOrphanContinuation: return "continuation frame without the message's first frame"
        case .webSocketMessageInterrupted: return "next message began before this one's final fragment"
        case .webSocketRSV1WithoutDeflate: return "RSV1 set without permessage-deflate negotiated"
        case .webSocketMessageOverLimit(let limit, let covered):
            return "message over the \(limit)-byte limit; size and sha256 cover its first \(covered) bytes"
        case .webSocketInflateNotStarted: return "zlib could not start"
        case .webSocketInflateFailed(let detail): return "permessage-deflate: invalid compressed data (\(detail))"
        case .webSocketBytesNeverCaptured(let length):
            return "\(length) bytes never captured; message cut short, later frames of this direction not decoded"
        case .webSocketConnectionEndedInMessage: return "connection ended inside this message"

        case .furtherWarningsNotShown: return "further warnings not shown (HTTPDecoderLimits.maxWarningsPerMessage)"
        case .moreWarningsNotShown(let count):
            return "\(count) more warnings not shown (HTTPDecoderLimits.maxWarningsPerMessage)"
        }
    }
}

extension HTTP2FrameTrouble: CustomStringConvertible {
    public var description: String {
        switch self {
        case .dataPaddingLongerThanFrame(let padding, let frameLength):
            return "DATA padding of \(padding) bytes is longer than the frame (\(frameLength) bytes)"
        case .paddedDataWithoutPadLength: return "padded DATA frame without a pad length"
        case .frameOverLimit(let length, let limit): return "frame of \(length) bytes is over the \(limit)-byte limit"
        case .headersPaddedButEmpty: return "HEADERS padded but empty"
        case .headersPaddingOrPriorityTooLong: return "HEADERS padding or priority longer than the frame"
        case .pushPromisePaddedButEmpty: return "PUSH_PROMISE padded but empty"
        case .pushPromiseTooShort: return "PUSH_PROMISE shorter than its promised stream id"
        case .continuationWithoutHeaderBlock: return "CONTINUATION without a header block in progress"
        }
    }
}

extension HTTP2StreamFacts.Outcome {
    /// `reset by server: CANCEL (0x8)`.
    var wording: String {
        switch self {
        case .complete: return "stream complete"
        case .reset(let sender, let code, let name):
            return "reset by \(sender.peerName): \(name) (0x\(String(code, radix: 16)))"
        case .goaway(let sender, let code, let name, let last):
            return "GOAWAY from \(sender.peerName): \(name) (0x\(String(code, radix: 16))), last stream \(last)"
        case .unfinished: return "stream still open when the connection ended"
        }
    }
}

extension HTTP3StreamFacts.Outcome {
    /// `reset by client: H3_REQUEST_CANCELLED (0x10c)`.
    var wording: String {
        switch self {
        case .complete: return "stream complete"
        case .reset(let sender, let code, let name):
            return "reset by \(sender.peerName): \(name) (0x\(String(code, radix: 16)))"
        case .goaway(let sender, let id): return "GOAWAY from \(sender.peerName) before it was processed (id \(id))"
        case .unfinished: return "stream still open when the connection ended"
        }
    }
}

extension StreamDirection {
    /// Who sends in this direction: `client` or `server`.
    var peerName: String { self == .clientToServer ? "client" : "server" }
}

extension StreamEndReason {
    /// How the connection ended, after "when the connection".
    var wording: String {
        switch self {
        case .fin: return "closed"
        case .reset: return "was reset"
        case .idleTimeout: return "went idle past the timeout"
        case .evicted: return "was dropped to stay within memory limits"
        case .captureEnded: return "was still open when the capture ended"
        }
    }
}
