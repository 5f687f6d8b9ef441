import FlowReassembly
import HTTPModel
import Testing

/// The words of warnings are what every view shows (text, JSON, HAR) and what users and scripts read: they stay as
/// they were when warnings were sentences built at each site (issue 22). Tests elsewhere compare the values.
@Suite struct HTTPWarningTextTests {
    @Test(arguments: [
        (HTTPWarning.gapInBody(.response, length: 1448), "gap of 1448 bytes in response body"),
        (.bodyCutShort(.response, missing: 812, .reset),
         "response body cut short: 812 bytes missing when the connection was reset"),
        (.bodyEndsWithConnection(.response, .captureEnded),
         "response body ends with the connection, which was still open when the capture ended; it may be incomplete"),
        (.headCutShort(.request, bytes: 49, .idleTimeout),
         "request head cut short (49 bytes) when the connection went idle past the timeout"),
        (.contentDecodingFailed(.response, coding: "gzip", reason: "invalid compressed data (incorrect header check)"),
         "response body: gzip decoding failed: invalid compressed data (incorrect header check); body kept as received"),
        (.decodedBodyOverLimit(.request, codings: ["gzip", "br"], limit: 1024),
         "request body: gzip, br decoding failed: decoded body exceeds the 1024-byte limit (HTTPDecoderLimits.maxDecodedBodyBytes); "
            + "body kept as received"),
        (.conflictingContentLength(["3", "4"]), "conflicting Content-Length values (3, 4)"),
        (.transferEncodingNotEndingInChunked(["gzip", "identity"]),
         "Transfer-Encoding \"gzip, identity\" does not end with chunked: body length unknown (RFC 9112 section 6.3)"),
        (.continueExpectedWithoutContent,
         "Expect: 100-continue on a request without content: a client must not send it (RFC 9110 section 10.1.1)"),
        (.extraWhitespaceInStartLine(.response), "extra whitespace in the status line"),
        (.notAStartLine(.response, line: "HTX/1.1"), "not an HTTP/1.x status line: \"HTX/1.1\""),
        (.notAMessageStart(.response, line: "HTX/1.1"), "not an HTTP/1.x response start line: \"HTX/1.1\""),
        (.hpackEntriesFromBeforeCapture(fields: 1),
         "1 header field referred to HPACK table entries from before the capture; not shown"),
        (.hpackEntriesFromBeforeCapture(fields: 2),
         "2 header fields referred to HPACK table entries from before the capture; not shown"),
        (.http2BytesNeverCaptured(length: 100, from: .serverToClient),
         "100 bytes from the server were never captured; the rest of its HTTP/2 frames on this connection were not decoded"),
        (.http2StreamEnded(.reset(sender: .clientToServer, code: 8, codeName: "CANCEL")), "reset by client: CANCEL (0x8)"),
        (.http2StreamEnded(.goaway(sender: .serverToClient, code: 2, codeName: "INTERNAL_ERROR", lastStreamID: 1)),
         "GOAWAY from server: INTERNAL_ERROR (0x2), last stream 1"),
        (.http2FrameSkipped(.frameOverLimit(length: 100, limit: 50)),
         "frame skipped: frame of 100 bytes is over the 50-byte limit"),
        (.webSocketMessageOverLimit(limit: 16, covered: 10),
         "message over the 16-byte limit; size and sha256 cover its first 10 bytes"),
        (.moreWarningsNotShown(3), "3 more warnings not shown (HTTPDecoderLimits.maxWarningsPerMessage)"),
    ])
    func wording(warning: HTTPWarning, text: String) {
        #expect(warning.description == text)
    }
}
