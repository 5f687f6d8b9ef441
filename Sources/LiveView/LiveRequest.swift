/// One request as the server received it, before any check: what the router and the guard read. Built by the NIO
/// handler from the parsed head; nothing in it has been trusted yet.
public struct LiveRequest: Sendable {
    public var method: String
    /// The request target as sent (`/api/exchanges?since=10`).
    public var target: String
    /// Header fields in the order sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The path without the query, as sent (no percent-decoding: no route needs it, and none is fooled by it).
    public var path: Substring { target.prefix { $0 != "?" && $0 != "#" } }

    /// The query's `name=value` pairs, in order; values percent-decoded where that is valid, else as sent.
    public var query: [(name: String, value: String)] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        let query = target[target.index(after: mark)...].prefix { $0 != "#" }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1]) : ""
            return (String(parts[0]), value.removingPercentEscapes() ?? value)
        }
    }

    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// Every value of the header `name` (case-insensitive).
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// The value of the header when it was sent exactly once; nil when absent or repeated (a repeated Host or
    /// Origin is refused rather than guessed at).
    public func singleHeader(_ name: String) -> String?? {
        let values = headerValues(name)
        if values.isEmpty { return .some(nil) }
        return values.count == 1 ? .some(values[0]) : nil
    }

    /// The value of cookie `name` from the Cookie headers (`a=1; b=2`).
    public func cookie(_ name: String) -> String? {
        for line in headerValues("Cookie") {
            for pair in line.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts[0].trimmingSpaces == name { return parts.count > 1 ? String(parts[1].trimmingSpaces) : "" }
            }
        }
        return nil
    }
}

extension StringProtocol {
    var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    /// `%41` -> `A`, `+` left alone; nil when an escape is broken or the bytes are not UTF-8.
    func removingPercentEscapes() -> String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}
