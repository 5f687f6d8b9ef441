@testable import HTTPDecoding
import Testing

/// The head parser on its own: field trimming, obsolete folding, bare LF, Latin-1 fallback and the exact error
/// texts, with heads that start at index 0 and heads cut out of a larger array (the parser works on offsets).
@Suite struct HeadParserTests {
    /// `head` as a slice that starts at `offset` inside a larger array.
    static func slice(_ head: [UInt8], offset: Int) -> ArraySlice<UInt8> {
        (Array(repeating: UInt8(ascii: "#"), count: offset) + head)[offset...]
    }

    static func fields(_ head: ParsedHead) -> [String] {
        head.headers.fields.map { "\($0.name)=\($0.value)" }
    }

    @Test(arguments: [0, 5])
    func fieldsAreTrimmedFoldedAndDecoded(offset: Int) throws {
        let head: [UInt8] = Array("GET /x?y=1 HTTP/1.1\r\nHost:  example.com \t\r\nX-Fold: a\r\n  b c \r\n\tdone\r\nX-Empty:\r\n".utf8)
            + Array("X-Latin: caf".utf8) + [0xe9] + Array("\r\nX-Utf8: caf".utf8) + [0xc3, 0xa9] + Array("\r\n\r\n".utf8)
        let parsed = try HTTPHeadParser.parse(Self.slice(head, offset: offset), role: .request)
        #expect(parsed.startLine == .request(method: "GET", uri: "/x?y=1", version: "HTTP/1.1"))
        #expect(Self.fields(parsed) == ["Host=example.com", "X-Fold=a b c done", "X-Empty=", "X-Latin=café", "X-Utf8=café"])
    }

    @Test(arguments: [0, 3])
    func bareLineFeedsAndResponseLines(offset: Int) throws {
        let ok = try HTTPHeadParser.parse(Self.slice(Array("HTTP/1.0 200 OK fine\nA:1\nB:  2\n\n".utf8), offset: offset),
                                          role: .response)
        #expect(ok.startLine == .response(version: "HTTP/1.0", status: 200, reason: "OK fine"))
        #expect(Self.fields(ok) == ["A=1", "B=2"])
        let noReason = try HTTPHeadParser.parse(Self.slice(Array("HTTP/1.1 204\r\n\r\n".utf8), offset: offset), role: .response)
        #expect(noReason.startLine == .response(version: "HTTP/1.1", status: 204, reason: ""))
        #expect(noReason.headers.fields.isEmpty)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", "header line without a name and colon: \"NoColon\""),
        ("GET / HTTP/1.1\r\n: v\r\n\r\n", "header line without a name and colon: \": v\""),
        ("GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", "invalid header name \"Bad Name\""),
        ("GET / HTTP/1.1\r\n  x\r\n\r\n", "header continuation line before any header"),
        ("FOO\r\n\r\n", "not an HTTP/1.x request line: \"FOO\""),
        ("GET /  HTTP/1.1\r\n\r\n", "not an HTTP/1.x request line: \"GET /  HTTP/1.1\""),
        ("\r\n\r\n", "empty message head"),
    ])
    func requestErrorsSayWhatWasWrong(head: String, message: String) {
        for offset in [0, 4] {
            do {
                _ = try HTTPHeadParser.parse(Self.slice(Array(head.utf8), offset: offset), role: .request)
                Issue.record("parsed \(head.debugDescription) without an error")
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test func statusLineErrors() {
        do {
            _ = try HTTPHeadParser.parse(Array("HTTP/1.1 20 OK\r\n\r\n".utf8)[...], role: .response)
            Issue.record("a two-digit status parsed")
        } catch {
            #expect(error.description == "not an HTTP/1.x status line: \"HTTP/1.1 20 OK\"")
        }
        #expect(HTTPHeadParser.looksLikeStartLine(Array("HTTP/1.1 301 Moved\r".utf8)[...], role: .response))
        #expect(!HTTPHeadParser.looksLikeStartLine(Array("HTTP/1.1 3O1 Moved".utf8)[...], role: .response))
        #expect(HTTPHeadParser.looksLikeStartLine(Array("OPTIONS * HTTP/1.1".utf8)[...], role: .request))
        #expect(!HTTPHeadParser.looksLikeStartLine(Array("GET / HTTP/2".utf8)[...], role: .request))
    }
}
