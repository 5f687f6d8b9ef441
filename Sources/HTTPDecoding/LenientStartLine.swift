import HTTPModel

/// Reads start lines the way RFC 9112 tells a recipient it may and the way Zeek, libhtp and browsers do: odd
/// lines are read, not dropped, and every oddity is named in a warning (an anomaly) on the message.
///
/// Oddities read: HTTP/0.9 requests (no version), a version in lower case or cut short (`HTTP/1.`), a missing
/// request target, spaces inside the target (a CONNECT authority with a space), runs of spaces or tabs between
/// the parts, and status codes that are not three digits or not numeric at all (`2XX`, kept as text with no
/// number) or outside 100-599.
/// What is not read: a line whose method is not a token, or a status line that does not begin with `HTTP/`
/// (in any case); those are not HTTP.
struct LenientStartLine {
    var startLine: ParsedStartLine
    var anomalies: [HTTPWarning]
    /// A request without a version: HTTP/0.9 has no header fields, so the head ends with this line.
    var isHTTP09: Bool

    private static let space: UInt8 = 0x20, tab: UInt8 = 0x09, cr: UInt8 = 0x0d

    /// `line` without its LF (a trailing CR is ignored).
    static func read(_ line: ArraySlice<UInt8>, role: MessageRole) -> LenientStartLine? {
        var line = line
        if line.last == cr { line = line.dropLast() }
        guard let words = Words(line) else { return nil }
        let first = words.first
        var anomalies: [HTTPWarning] = []
        // `HTTP/1.1 200 ` is what RFC 9112 section 4 asks for when the reason is empty: its one space is no oddity.
        let emptyReason = role == .response && words.count == 2 && line.count >= 2 && line[line.endIndex - 1] == space
            && !isBlank(line[line.endIndex - 2])
        let extraWhitespace = line.contains(tab) || isBlank(line[line.startIndex])
            || (isBlank(line[line.endIndex - 1]) && !emptyReason) || words.wideGap
        if extraWhitespace { anomalies.append(.extraWhitespaceInStartLine(role)) }

        switch role {
        case .request:
            let method = line[first]
            guard method.count <= 32, method.allSatisfy(HTTPHeadParser.isTokenByte) else { return nil }
            // Capital letters, and `-` or `_` after the first (M-SEARCH, CCM_POST), as the request parser takes them.
            let plainMethod = (0x41...0x5a).contains(method[method.startIndex])
                && method.allSatisfy { (0x41...0x5a).contains($0) || $0 == 0x2d || $0 == 0x5f }
            let last = words.last
            if words.count >= 2 && isVersionLike(line[last]) {
                if let note = versionAnomaly(line[last]) { anomalies.append(note) }
                let uri: String
                if words.count == 2 {
                    anomalies.append(.requestLineWithoutTarget)
                    uri = ""
                } else {
                    if words.count > 3 { anomalies.append(.spacesInRequestTarget) }
                    uri = HTTPHeadParser.text(line[words.second.lowerBound..<words.beforeLast.upperBound])
                }
                return LenientStartLine(startLine: .request(method: HTTPHeadParser.text(method), uri: uri,
                                                            version: HTTPHeadParser.text(line[last])),
                                        anomalies: anomalies, isHTTP09: false)
            }
            // No version: HTTP/0.9 ("GET /path"), accepted for plain upper-case methods only, so that binary junk
            // is not read as requests.
            guard plainMethod, words.count >= 2 else { return nil }
            let uri = HTTPHeadParser.text(line[words.second.lowerBound..<last.upperBound])
            anomalies.append(.http09Request)
            if let glued = gluedVersion(line[last]) {
                // `GET /HTTP/1.1`: browsers and Zeek read the whole word as the target of an HTTP/0.9 request, and
                // so do servers that answer HTTP/0.9; say what it most likely was meant to be.
                anomalies.append(.versionGluedToTarget(HTTPHeadParser.preview(glued)))
            }
            return LenientStartLine(startLine: .request(method: HTTPHeadParser.text(method), uri: uri, version: "HTTP/0.9"),
                                    anomalies: anomalies, isHTTP09: true)

        case .response:
            guard isVersionLike(line[first]) else { return nil }
            if let note = versionAnomaly(line[first]) { anomalies.append(note) }
            let version = HTTPHeadParser.text(line[first])
            guard words.count >= 2 else {
                anomalies.append(.statusLineWithoutCode)
                return LenientStartLine(startLine: .response(version: version, status: nil, code: "", reason: ""),
                                        anomalies: anomalies, isHTTP09: false)
            }
            let code = line[words.second]
            let status: Int?
            if code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) && code.count <= 9 {
                let number = code.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                status = number
                if code.count != 3 {
                    anomalies.append(.statusCodeNotThreeDigits(HTTPHeadParser.preview(code)))
                } else if !(100...599).contains(number) {
                    anomalies.append(.statusCodeOutOfRange(number))
                }
            } else {
                // `2XX`: not a number, so none is made up (Zeek's reply code is 0 then, libhtp's invalid); the
                // code is shown as sent, and the body framed as for any final response.
                status = nil
                anomalies.append(.nonNumericStatusCode(HTTPHeadParser.preview(code)))
            }
            var reasonStart = words.second.upperBound
            while reasonStart < line.endIndex && isBlank(line[reasonStart]) { reasonStart += 1 }
            var reasonEnd = line.endIndex
            while reasonEnd > reasonStart && isBlank(line[reasonEnd - 1]) { reasonEnd -= 1 }
            return LenientStartLine(startLine: .response(version: version, status: status,
                                                         code: HTTPHeadParser.text(code),
                                                         reason: HTTPHeadParser.text(line[reasonStart..<reasonEnd])),
                                    anomalies: anomalies, isHTTP09: false)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// The blank-separated words of a line, as far as a start line needs them: the first two, the last two, how
    /// many, and whether any two were more than one blank apart. No array: this runs for every message.
    private struct Words {
        var count = 0
        var first = 0..<0, second = 0..<0, beforeLast = 0..<0, last = 0..<0
        var wideGap = false

        /// Nil when the line has no word.
        init?(_ line: ArraySlice<UInt8>) {
            var index = line.startIndex
            while index < line.endIndex {
                while index < line.endIndex && isBlank(line[index]) { index += 1 }
                let start = index
                while index < line.endIndex && !isBlank(line[index]) { index += 1 }
                guard index > start else { continue }
                let word = start..<index
                if count > 0 && word.lowerBound - last.upperBound > 1 { wideGap = true }
                if count == 0 { first = word } else if count == 1 { second = word }
                beforeLast = last
                last = word
                count += 1
            }
            if count == 0 { return nil }
        }
    }

    /// The `HTTP/d.d` (any case) a word ends with, when something comes before it (`/HTTP/1.1`).
    private static func gluedVersion(_ word: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard word.count > 8 else { return nil }
        let tail = word.suffix(8)
        var upper = tail
        for i in tail.startIndex..<(tail.startIndex + 4) { upper[i] &= ~0x20 }
        return HTTPHeadParser.isVersion(upper) ? tail : nil
    }

    /// `HTTP/` in any case, then anything.
    private static func isVersionLike(_ word: ArraySlice<UInt8>) -> Bool {
        guard word.count >= 5 else { return false }
        let s = word.startIndex
        return word[s] | 0x20 == 0x68 && word[s + 1] | 0x20 == 0x74 && word[s + 2] | 0x20 == 0x74
            && word[s + 3] | 0x20 == 0x70 && word[s + 4] == 0x2f
    }

    /// What is odd about a version-like word, or nil for `HTTP/d.d`.
    private static func versionAnomaly(_ word: ArraySlice<UInt8>) -> HTTPWarning? {
        if HTTPHeadParser.isVersion(word) { return nil }
        let shown = HTTPHeadParser.preview(word)
        let s = word.startIndex
        if !(word[s] == 0x48 && word[s + 1] == 0x54 && word[s + 2] == 0x54 && word[s + 3] == 0x50) {
            var upper = word
            for i in s..<(s + 4) { upper[i] &= ~0x20 }
            if HTTPHeadParser.isVersion(upper) { return .versionNotUpperCase(shown) }
        }
        let number = word[(s + 5)...]
        let isDigit: (UInt8) -> Bool = { $0 >= 0x30 && $0 <= 0x39 }
        if number.isEmpty || (number.count <= 2 && isDigit(number[number.startIndex])
                              && (number.count == 1 || number[number.startIndex + 1] == 0x2e)) {
            return .truncatedVersion(shown)
        }
        return .unusualVersion(shown)
    }
}
