/// What tcpdump's one-line HTTP summary (print-http.c via txtproto_print) finds at the start of a TCP payload on
/// port 80 or 8080: a request or status line, printed up to its end, with tcpdump's rules for cut and odd bytes.
public enum HTTPFirstLine {
    /// Neither a known method nor a three-digit status as the first two tokens: tcpdump prints just `HTTP`.
    case unrecognised
    /// Recognised, but the snap length cut the first line before its end.
    case cutFirstLine
    /// The line's bytes to print (possibly empty), and whether tcpdump marks it `[|http]` (cut by the snap length).
    case line(UnsafeRawBufferPointer, cut: Bool)

    private static let methods: [StaticString] = [
        "GET", "PUT", "COPY", "HEAD", "LOCK", "MOVE", "POLL", "POST", "BCOPY", "BMOVE", "MKCOL", "TRACE", "LABEL",
        "MERGE", "DELETE", "SEARCH", "UNLOCK", "REPORT", "UPDATE", "NOTIFY", "BDELETE", "CONNECT", "OPTIONS",
        "CHECKIN", "PROPFIND", "CHECKOUT", "CCM_POST", "SUBSCRIBE", "PROPPATCH", "BPROPFIND", "BPROPPATCH",
        "UNCHECKOUT", "MKACTIVITY", "MKWORKSPACE", "UNSUBSCRIBE", "RPC_CONNECT", "VERSION-CONTROL", "BASELINE-CONTROL",
    ]

    /// `payload` holds the captured bytes of a segment that carried `length` bytes.
    public init(payload: UnsafeRawBufferPointer, length: Int) {
        let limit = payload.count
        var recognised = false
        if let (first, next) = Self.token(payload, from: 0, limit: limit, length: length) {
            let word = payload.slice(first.lowerBound, first.upperBound)
            for method in Self.methods where method.utf8CodeUnitCount == word.count {
                let matches = method.withUTF8Buffer { name in
                    zip(name, word).allSatisfy { a, b in a == (b >= 0x61 && b <= 0x7a ? b - 0x20 : b) }
                }
                if matches { recognised = true; break }
            }
            if let (second, _) = Self.token(payload, from: next, limit: limit, length: length), second.count == 3,
               payload[second].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                recognised = true
            }
        }
        guard recognised else { self = .unrecognised; return }
        let lineEnd = payload.firstIndex { $0 == 0x0a || $0 == 0x0d }
        if limit < length && (lineEnd == nil || (payload[lineEnd!] == 0x0d && lineEnd! + 1 == limit)) {
            self = .cutFirstLine
            return
        }
        let empty = payload.slice(0, 0)
        var index = 0
        while index < limit {
            let c = payload[index]
            if c == 0x0a { self = .line(payload.slice(0, index), cut: false); return }
            if c == 0x0d {
                guard index + 1 < limit, payload[index + 1] == 0x0a else {
                    self = .line(empty, cut: index + 1 < length && index + 1 >= limit)
                    return
                }
                self = .line(payload.slice(0, index), cut: false)
                return
            }
            if !Self.isPrint(c) && c != 0x09 { self = .line(empty, cut: false); return }
            index += 1
        }
        // Printable to the end of what was captured, without a line ending.
        self = .line(payload.slice(0, limit), cut: true)
    }

    /// How tcpdump's -v text lines ended.
    public enum VerboseLinesEnd: Equatable, Sendable {
        /// At a byte that is not printable text, a CR without LF, or a line ending at the segment's end.
        case stopped
        /// The last line had no ending within the segment: it is handed over and marked cut (`[|http]`).
        case segmentEndedMidLine
        /// The snap length cut the line being read: it is not handed over; `[|http]`, and tcpdump's printer has
        /// run out of captured bytes (it long-jumps out; -x then dumps the whole frame).
        case captureEndedMidLine
    }

    /// tcpdump -v (txtproto_print): every text line from the start of the payload, handed to `line` without its
    /// line ending, until a byte that is not printable text, a CR without LF, or the end.
    public static func forEachVerboseLine(payload: UnsafeRawBufferPointer, length: Int,
                                          _ line: (UnsafeRawBufferPointer) -> Void) -> VerboseLinesEnd {
        let captured = payload.count
        var start = 0
        while start < length {
            var index = start
            while true {
                if index >= length {
                    line(payload.slice(start, index))
                    return .segmentEndedMidLine
                }
                if index >= captured { return .captureEndedMidLine }
                let c = payload[index]
                if c == 0x0a {
                    line(payload.slice(start, index))
                    start = index + 1
                    break
                }
                if c == 0x0d {
                    if index + 1 >= length { return .stopped }
                    if index + 1 >= captured { return .captureEndedMidLine }
                    guard payload[index + 1] == 0x0a else { return .stopped }
                    line(payload.slice(start, index))
                    start = index + 2
                    break
                }
                if !isPrint(c) && c != 0x09 { return .stopped }
                index += 1
            }
        }
        return .stopped
    }

    @inline(__always) private static func isPrint(_ c: UInt8) -> Bool { c >= 0x20 && c < 0x7f }

    /// The token at `start`: its range and the index after trailing blanks, or nil (tcpdump's fetch_token).
    private static func token(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int,
                              length: Int) -> (Range<Int>, Int)? {
        var index = start
        while true {
            guard index < limit else {
                if limit < length { return nil }  // ran past the captured bytes
                break
            }
            let c = bytes[index]
            if c >= 0x80 { return nil }
            if c == 0x20 || c == 0x09 || c == 0x0d || c == 0x0a { break }
            if !isPrint(c) { return nil }
            if index - start + 2 > 129 { return nil }
            index += 1
        }
        guard index > start else { return nil }
        let range = start..<index
        while index < limit {
            let c = bytes[index]
            if c == 0x0d || c == 0x0a || !isPrint(c) || (c != 0x20 && c != 0x09) { break }
            index += 1
        }
        return (range, index)
    }
}
