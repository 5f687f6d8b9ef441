#if canImport(Glibc)
import Glibc
#endif
import HTTPModel

/// The start line and header fields of one message, parsed from its complete head.
enum ParsedStartLine: Sendable, Hashable {
    case request(method: String, uri: String, version: String)
    /// `status`: the status code as a number, nil when it was not one (`2XX`) or absent (HTTP/0.9); `code`: the
    /// status code as sent, empty when there was none; `reason`: the reason phrase as sent, empty when absent.
    case response(version: String, status: Int?, code: String, reason: String)
}

struct ParsedHead {
    var startLine: ParsedStartLine
    var headers: HTTPHeaders
    /// Oddities read past (RFC 9112 recipient leniency), each a warning for the message.
    var anomalies: [HTTPWarning] = []
    /// An HTTP/0.9 request: no version, no header fields.
    var isHTTP09 = false
}

struct HeadParseError: Error {
    var warning: HTTPWarning
}

private let cr: UInt8 = 0x0d, lf: UInt8 = 0x0a, space: UInt8 = 0x20, tab: UInt8 = 0x09, colon: UInt8 = 0x3a

enum HTTPHeadParser {
    /// Parses a complete head (start line, fields, blank line). Accepts bare LF line ends and obsolete line
    /// folding, as real servers and clients send both.
    static func parse(_ head: ArraySlice<UInt8>, role: MessageRole) throws(HeadParseError) -> ParsedHead {
        // Fields are cut out of the head through a buffer pointer: slicing the ArraySlice for every line, name
        // and value retained and released the array's storage each time.
        let result: Result<ParsedHead, HeadParseError> = head.withUnsafeBufferPointer { buffer in
            do throws(HeadParseError) {
                return .success(try parse(buffer, head: head, role: role))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// `buffer` holds `head`'s bytes; offsets into it are `head`'s indices minus its start index.
    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>, head: ArraySlice<UInt8>,
                              role: MessageRole) throws(HeadParseError) -> ParsedHead {
        var startLine: ParsedStartLine?
        var anomalies: [HTTPWarning] = []
        var isHTTP09 = false
        var sawBareLF = false
        var headers = HTTPHeaders()
        headers.reserveCapacity(bytes: buffer.count, fields: 16)
        let base = head.startIndex
        let count = buffer.count
        var lineStart = 0
        var index = 0
        while index <= count {
            index = firstLF(head, from: base + index).map { $0 - base } ?? count
            var end = index
            if end > lineStart && buffer[end - 1] == cr {
                end -= 1
            } else if index < count && !sawBareLF {
                sawBareLF = true
                anomalies.append(.bareLineFeeds)
            }
            let line = lineStart..<end
            lineStart = index + 1
            index += 1
            if line.isEmpty { if startLine == nil { continue } else { break } }
            guard startLine != nil else {
                let lineBytes = head[(base + line.lowerBound)..<(base + line.upperBound)]
                guard let lenient = LenientStartLine.read(lineBytes, role: role) else {
                    throw HeadParseError(warning: .notAStartLine(role, line: preview(lineBytes)))
                }
                startLine = lenient.startLine
                anomalies += lenient.anomalies
                isHTTP09 = lenient.isHTTP09
                if isHTTP09 { break }  // HTTP/0.9 has no header fields
                continue
            }
            // Header trouble is read past, as RFC 9112 allows a recipient and Zeek and libhtp do: each kind is
            // named once in the message's warnings.
            let shown = { preview(head[(base + line.lowerBound)..<(base + line.upperBound)]) }
            let lead = buffer[line.lowerBound]
            if lead == space || lead == tab {
                // Obsolete line folding: a continuation of the previous field's value.
                guard !headers.isEmpty else {
                    anomalies.append(.continuationLineBeforeAnyHeader(shown()))
                    continue
                }
                if !anomalies.contains(.obsoleteLineFolding) { anomalies.append(.obsoleteLineFolding) }
                headers.continueLastValue(wire: raw(buffer, trimmed(buffer, line)))
                continue
            }
            var colonIndex = line.lowerBound
            while colonIndex < line.upperBound && buffer[colonIndex] != colon { colonIndex += 1 }
            guard colonIndex < line.upperBound, colonIndex > line.lowerBound else {
                anomalies.append(.headerLineWithoutColon(shown()))
                continue
            }
            var nameEnd = colonIndex
            while nameEnd > line.lowerBound && (buffer[nameEnd - 1] == space || buffer[nameEnd - 1] == tab) { nameEnd -= 1 }
            if nameEnd < colonIndex {
                anomalies.append(.whitespaceBeforeColon(shown()))
            }
            let name = line.lowerBound..<nameEnd
            if name.isEmpty || name.contains(where: { !isTokenByte(buffer[$0]) }) {
                anomalies.append(.invalidHeaderName(preview(head[(base + name.lowerBound)..<(base + name.upperBound)])))
            }
            let value = trimmed(buffer, (colonIndex + 1)..<line.upperBound)
            headers.append(wireName: raw(buffer, name), value: raw(buffer, value))
        }
        guard let startLine else { throw HeadParseError(warning: .emptyHead) }
        if anomalies.count > 16 {
            anomalies = Array(anomalies.prefix(15)) + [.moreHeadOddities(anomalies.count - 15)]
        }
        return ParsedHead(startLine: startLine, headers: headers, anomalies: anomalies, isHTTP09: isHTTP09)
    }

    /// `range` of `buffer` without leading and trailing spaces and tabs.
    private static func trimmed(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper && (buffer[lower] == space || buffer[lower] == tab) { lower += 1 }
        while upper > lower && (buffer[upper - 1] == space || buffer[upper - 1] == tab) { upper -= 1 }
        return lower..<upper
    }

    private static func raw(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[range]))
    }

    /// Index of the first LF in `bytes` at or after `start` (memchr: heads are scanned a line at a time).
    @inline(__always)
    static func firstLF(_ bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            let offset = start - bytes.startIndex
            guard offset < buffer.count, let base = buffer.baseAddress,
                  let found = memchr(base + offset, Int32(lf), buffer.count - offset) else { return nil }
            return bytes.startIndex + (UnsafeRawPointer(found) - UnsafeRawPointer(base))
        }
    }

    /// Without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == space || first == tab { slice = slice.dropFirst() }
        while let last = slice.last, last == space || last == tab { slice = slice.dropLast() }
        return slice
    }

    /// Trailer fields (no start line); lines that are not fields are skipped.
    static func parseFields(_ bytes: ArraySlice<UInt8>) -> [(name: String, value: String)] {
        bytes.split(separator: lf).compactMap { line in
            var line = line
            if line.last == cr { line = line.dropLast() }
            guard let colonIndex = line.firstIndex(of: colon), colonIndex > line.startIndex else { return nil }
            return (text(line[line.startIndex..<colonIndex]), text(trimmed(line[(colonIndex + 1)...])))
        }
    }

    /// Where a valid start line's parts are: method, target, version (request) or version, status code,
    /// reason (response, reason nil when the line has no second space). Nil when the line is not a start line.
    /// Up to three space-separated parts, the last taking the rest of the line, as
    /// `split(separator: space, maxSplits: 2, omittingEmptySubsequences: false)` would, without an array.
    private static func startLineParts(_ line: ArraySlice<UInt8>, role: MessageRole)
        -> (first: Range<Int>, second: Range<Int>, third: Range<Int>?)? {
        guard let firstSpace = line.firstIndex(of: space) else { return nil }
        let secondSpace = line[(firstSpace + 1)...].firstIndex(of: space)
        switch role {
        case .request:
            guard let secondSpace else { return nil }
            let method = line[..<firstSpace], uri = line[(firstSpace + 1)..<secondSpace]
            let version = line[(secondSpace + 1)...]
            guard !method.isEmpty, method.allSatisfy(isTokenByte), !uri.isEmpty, isVersion(version) else { return nil }
            return (method.indices, uri.indices, version.indices)
        case .response:
            let version = line[..<firstSpace]
            let code = line[(firstSpace + 1)..<(secondSpace ?? line.endIndex)]
            guard isVersion(version), code.count == 3, code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return (version.indices, code.indices, secondSpace.map { ($0 + 1)..<line.endIndex })
        }
    }

    static func parseStartLine(_ line: ArraySlice<UInt8>, role: MessageRole) throws(HeadParseError) -> ParsedStartLine {
        guard let parts = startLineParts(line, role: role) else {
            throw HeadParseError(warning: .notAStartLine(role, line: preview(line)))
        }
        switch role {
        case .request:
            return .request(method: text(line[parts.first]), uri: text(line[parts.second]),
                            version: parts.third.map { text(line[$0]) } ?? "")  // always there for a request
        case .response:
            let status = line[parts.second].reduce(0) { $0 * 10 + Int($1 - 0x30) }
            return .response(version: text(line[parts.first]), status: status, code: text(line[parts.second]),
                             reason: parts.third.map { text(line[$0]) } ?? "")
        }
    }

    /// Whether a line could start a message: used to find the next message after a gap.
    static func looksLikeStartLine(_ line: ArraySlice<UInt8>, role: MessageRole) -> Bool {
        var trimmed = line
        if trimmed.last == cr { trimmed = trimmed.dropLast() }
        return startLineParts(trimmed, role: role) != nil
    }

    /// `HTTP/` followed by digit `.` digit.
    static func isVersion(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 8 else { return false }
        let s = bytes.startIndex
        @inline(__always) func b(_ i: Int) -> UInt8 { bytes[s + i] }
        return b(0) == 0x48 && b(1) == 0x54 && b(2) == 0x54 && b(3) == 0x50 && b(4) == 0x2f
            && (0x30...0x39).contains(b(5)) && b(6) == 0x2e && (0x30...0x39).contains(b(7))
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    /// UTF-8 when valid, else Latin-1 (RFC 9110 says field values are historically ISO-8859-1).
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBufferPointer { text($0) }
    }

    private static func text(_ buffer: UnsafeBufferPointer<UInt8>) -> String {
        // Header bytes are nearly always ASCII, which needs no validation.
        if HTTPHeaders.isASCII(UnsafeRawBufferPointer(buffer)) { return String(decoding: buffer, as: UTF8.self) }
        if let utf8 = String(validating: buffer, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(buffer.map { Unicode.Scalar($0) }))
    }

    static func preview(_ bytes: ArraySlice<UInt8>) -> String {
        let cut = bytes.prefix(60).map { $0 >= 0x20 && $0 < 0x7f ? $0 : UInt8(ascii: ".") }
        return String(decoding: cut, as: UTF8.self) + (bytes.count > 60 ? "..." : "")
    }
}
