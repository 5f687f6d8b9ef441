@testable import HTTPDecoding
import HTTPModel
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

    /// Fields parsed from the wire are kept as UTF-8 bytes (Latin-1 transcoded, folding joined with one space), and
    /// equal the same fields built from Strings; lookups ignore the name's case and find the first value.
    @Test func parsedFieldsAreUTF8BytesEqualToTheSameStrings() throws {
        let head: [UInt8] = Array("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=iso-8859-1\r\nX-Latin: caf".utf8)
            + [0xe9] + Array("\r\n  au lait\r\nx-latin: second\r\n\r\n".utf8)
        let headers = try HTTPHeadParser.parse(head[...], role: .response).headers
        var raw: [String] = []
        headers.withRawFields { name, value in
            raw.append(String(validating: name, as: UTF8.self)! + "=" + String(validating: value, as: UTF8.self)!)
        }
        #expect(raw == ["Content-Type=text/html; charset=iso-8859-1", "X-Latin=café au lait", "x-latin=second"])
        let built = HTTPHeaders([("Content-Type", "text/html; charset=iso-8859-1"), ("X-Latin", "café au lait"),
                                 ("x-latin", "second")])
        #expect(headers == built)
        #expect(headers.hashValue == built.hashValue)
        #expect(headers != HTTPHeaders([("Content-Type", "text/html; charset=iso-8859-1"), ("X-Latin", "café au lait")]))
        #expect(headers["CONTENT-type"] == "text/html; charset=iso-8859-1")
        #expect(headers["x-LATIN"] == "café au lait")
        #expect(headers.values("X-Latin") == ["café au lait", "second"])
        #expect(headers.tokens("content-type") == ["text/html; charset=iso-8859-1"])
        #expect(headers["X-Missing"] == nil)
        #expect(headers.count == 3 && Array(headers).map(\.name) == ["Content-Type", "X-Latin", "x-latin"])
    }

    /// List elements across repeated fields: split at commas, spaces and tabs around them removed, lower-cased,
    /// empty elements left out; a field folded onto the next line is one value.
    @Test func tokensAreTheListElementsOfEveryValue() throws {
        let headers = HTTPHeaders([("Content-Encoding", " GZip ,\t, br"), ("Accept", "x"), ("content-encoding", ",,"),
                                   ("CONTENT-ENCODING", "Zstd"), ("Content-Encoding", "")])
        #expect(headers.tokens("content-encoding") == ["gzip", "br", "zstd"])
        #expect(headers.tokens("Accept") == ["x"])
        #expect(headers.tokens("Missing").isEmpty)
        let folded = try HTTPHeadParser.parse(Array("HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n Upgrade\r\nZ: 1\r\n\r\n".utf8)[...],
                                              role: .response).headers
        #expect(folded.tokens("connection") == ["keep-alive", "upgrade"])
        #expect(folded == HTTPHeaders([("Connection", "keep-alive, Upgrade"), ("Z", "1")]))
        #expect(folded.count == 2 && folded["z"] == "1")
    }

    /// A Content-Length read in place is the one plain number; every other form is left to the checks that name it.
    @Test func plainDecimalValueIsOnlyTheOnePlainNumber() {
        func value(_ fields: [(String, String)]) -> Int? { HTTPHeaders(fields).plainDecimalValue("content-length") }
        #expect(value([("Content-Length", "1234")]) == 1234)
        #expect(value([("CONTENT-LENGTH", "0")]) == 0)
        #expect(value([("Content-Length", "9223372036854775807")]) == Int.max)
        for odd in ["", "00", "012", " 12", "12 ", "+5", "-5", "1,1", "12a", "9223372036854775808",
                    "99999999999999999999999"] {
            #expect(value([("Content-Length", odd)]) == nil, "\"\(odd)\"")
        }
        #expect(value([("Content-Length", "5"), ("Content-Length", "5")]) == nil)
        #expect(value([("Content-Type", "5")]) == nil)
        #expect(value([]) == nil)
    }

    @Test(arguments: [0, 3])
    func bareLineFeedsAndResponseLines(offset: Int) throws {
        let ok = try HTTPHeadParser.parse(Self.slice(Array("HTTP/1.0 200 OK fine\nA:1\nB:  2\n\n".utf8), offset: offset),
                                          role: .response)
        #expect(ok.startLine == .response(version: "HTTP/1.0", status: 200, code: "200", reason: "OK fine"))
        #expect(Self.fields(ok) == ["A=1", "B=2"])
        let noReason = try HTTPHeadParser.parse(Self.slice(Array("HTTP/1.1 204\r\n\r\n".utf8), offset: offset), role: .response)
        #expect(noReason.startLine == .response(version: "HTTP/1.1", status: 204, code: "204", reason: ""))
        #expect(noReason.headers.fields.isEmpty)
    }

    @Test(arguments: [
        ("FOO\r\n\r\n", HTTPWarning.notAStartLine(.request, line: "FOO")),
        ("G\u{1}T / HTTP/1.1\r\n\r\n", .notAStartLine(.request, line: "G.T / HTTP/1.1")),
        ("\r\n\r\n", .emptyHead),
    ])
    func requestErrorsSayWhatWasWrong(head: String, problem: HTTPWarning) {
        for offset in [0, 4] {
            do {
                _ = try HTTPHeadParser.parse(Self.slice(Array(head.utf8), offset: offset), role: .request)
                Issue.record("parsed \(head.debugDescription) without an error")
            } catch {
                #expect(error.warning == problem)
            }
        }
    }

    /// RFC 9112 recipient leniency (issue 9): odd heads are read, each oddity named.
    @Test(arguments: [
        ("GET / HTTP/1.1\r\nNoColon\r\nA: 1\r\n\r\n", HTTPWarning.headerLineWithoutColon("NoColon"), "GET / HTTP/1.1"),
        ("GET / HTTP/1.1\r\n: v\r\n\r\n", .headerLineWithoutColon(": v"), "GET / HTTP/1.1"),
        ("GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", .invalidHeaderName("Bad Name"), "GET / HTTP/1.1"),
        ("GET / HTTP/1.1\r\nHost : v\r\n\r\n", .whitespaceBeforeColon("Host : v"), "GET / HTTP/1.1"),
        ("GET / HTTP/1.1\r\n  x\r\n\r\n", .continuationLineBeforeAnyHeader("  x"), "GET / HTTP/1.1"),
        ("GET / HTTP/1.1\r\nA: 1\r\n  more\r\n\r\n", .obsoleteLineFolding, "GET / HTTP/1.1"),
        ("GET / HTTP/1.1\nA: 1\n\n", .bareLineFeeds, "GET / HTTP/1.1"),
        ("GET /  HTTP/1.1\r\n\r\n", .extraWhitespaceInStartLine(.request), "GET / HTTP/1.1"),
        ("GET\t/ HTTP/1.1 \r\n\r\n", .extraWhitespaceInStartLine(.request), "GET / HTTP/1.1"),
        ("GET / http/1.1\r\n\r\n", .versionNotUpperCase("http/1.1"), "GET / http/1.1"),
        ("GET / HTTP/1.\r\n\r\n", .truncatedVersion("HTTP/1."), "GET / HTTP/1."),
        ("GET HTTP/1.1\r\n\r\n", .requestLineWithoutTarget, "GET  HTTP/1.1"),
        ("CONNECT a b:443 HTTP/1.1\r\n\r\n", .spacesInRequestTarget, "CONNECT a b:443 HTTP/1.1"),
        ("GET /old\r\n", .http09Request, "GET /old HTTP/0.9"),
        // A method with `_` or `-` (Zeek's methods.pcap sends CCM_POST), as the request parser reads it with a version.
        ("CCM_POST /HTTP/1.1\r\n", .http09Request, "CCM_POST /HTTP/1.1 HTTP/0.9"),
        ("M-SEARCH *\r\n", .http09Request, "M-SEARCH * HTTP/0.9"),
    ])
    func oddRequestsAreReadWithTheOddityNamed(head: String, anomaly: HTTPWarning, startLine: String) throws {
        let parsed = try HTTPHeadParser.parse(Array(head.utf8)[...], role: .request)
        #expect(parsed.anomalies.contains(anomaly), "\(parsed.anomalies)")
        guard case .request(let method, let uri, let version) = parsed.startLine else {
            Issue.record("not a request")
            return
        }
        #expect("\(method) \(uri) \(version)" == startLine)
    }

    @Test(arguments: [
        ("HTTP/1.1 20 OK\r\n\r\n", HTTPWarning.statusCodeNotThreeDigits("20"), Int?(20), "OK"),
        ("HTTP/1.1 2XX Fine\r\n\r\n", .nonNumericStatusCode("2XX"), nil, "Fine"),
        ("HTTP/1.1 999 Odd\r\n\r\n", .statusCodeOutOfRange(999), 999, "Odd"),
        ("HTTP/1.1\r\n\r\n", .statusLineWithoutCode, nil, ""),
        ("http/1.1 200 OK\r\n\r\n", .versionNotUpperCase("http/1.1"), 200, "OK"),
        ("HTTP/1.1  200  OK then \r\n\r\n", .extraWhitespaceInStartLine(.response), 200, "OK then"),
    ])
    func oddStatusLinesAreRead(head: String, anomaly: HTTPWarning, status: Int?, reason: String) throws {
        let parsed = try HTTPHeadParser.parse(Array(head.utf8)[...], role: .response)
        #expect(parsed.anomalies.contains(anomaly), "\(parsed.anomalies)")
        guard case .response(_, let number, let code, let text) = parsed.startLine else {
            Issue.record("not a response")
            return
        }
        // A number only when the code was one: nothing made up for `2XX` or a missing code.
        #expect(number == status)
        let sent = head.split(separator: "\r\n")[0].split(separator: " ", omittingEmptySubsequences: true)
        #expect(code == (sent.count > 1 ? String(sent[1]) : ""))
        #expect(text == reason)
    }

    /// Issue 36 (Suricata's gzip-uncompressed sends it): `HTTP/1.1 200 ` with no reason is RFC 9112 section 4's own
    /// form, so its one space is no oddity; two are, and so is a space after a reason.
    @Test func anEmptyReasonsSpaceIsNoOddity() throws {
        for (head, odd) in [("HTTP/1.1 200 \r\n\r\n", false), ("HTTP/1.1 200  \r\n\r\n", true), ("HTTP/1.1 200 OK \r\n\r\n", true),
                            ("HTTP/1.1 200\r\n\r\n", false)] {
            let parsed = try HTTPHeadParser.parse(Array(head.utf8)[...], role: .response)
            #expect(parsed.anomalies.contains(.extraWhitespaceInStartLine(.response)) == odd, "\(head.debugDescription): \(parsed.anomalies)")
        }
        // A method must start with a letter to be read without a version: `_X /` is not a request.
        #expect(throws: (any Error).self) { try HTTPHeadParser.parse(Array("_X /\r\n".utf8)[...], role: .request) }
    }

    @Test func statusLineStrictnessForResync() {
        #expect(HTTPHeadParser.looksLikeStartLine(Array("HTTP/1.1 301 Moved\r".utf8)[...], role: .response))
        #expect(!HTTPHeadParser.looksLikeStartLine(Array("HTTP/1.1 3O1 Moved".utf8)[...], role: .response))
        #expect(HTTPHeadParser.looksLikeStartLine(Array("OPTIONS * HTTP/1.1".utf8)[...], role: .request))
        #expect(!HTTPHeadParser.looksLikeStartLine(Array("GET / HTTP/2".utf8)[...], role: .request))
    }
}
