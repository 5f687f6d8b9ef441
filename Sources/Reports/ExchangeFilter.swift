#if canImport(Glibc)
import Glibc
#endif
import HTTPModel

/// Filters beside BPF: `--host`, `--path`, `--method`, `--status`. Each given filter must match (AND); within one
/// filter, comma-separated alternatives match if any does (OR).
public struct ExchangeFilter: Sendable {
    /// Glob patterns (`*`, `?`, `[...]`) for the host: the Host header without its port, or the server address.
    public var hosts: [String] = []
    /// Glob patterns for the request path, without the query string (`/api/*`, `*.png`).
    public var paths: [String] = []
    /// Methods, compared case-insensitively.
    public var methods: [String] = []
    public var statuses: [StatusPattern] = []

    public init() {}

    public var isEmpty: Bool { hosts.isEmpty && paths.isEmpty && methods.isEmpty && statuses.isEmpty }

    /// `404`, `4xx`, `200-299`.
    public struct StatusPattern: Sendable, Hashable, CustomStringConvertible {
        public var range: ClosedRange<Int>
        public var description: String { range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range)" }

        public init(parsing text: String) throws(FilterError) {
            let trimmed = text.trimmingCharacters(in: " ")
            let lower = trimmed.lowercased()
            if lower.count == 3, lower.hasSuffix("xx"), let digit = Int(lower.prefix(1)), (1...5).contains(digit) {
                range = (digit * 100)...(digit * 100 + 99)
                return
            }
            let bounds = lower.split(separator: "-", omittingEmptySubsequences: false)
            if bounds.count == 2, let low = Int(bounds[0]), let high = Int(bounds[1]), (100...999).contains(low),
               (100...999).contains(high), low <= high {
                range = low...high
                return
            }
            if bounds.count == 1, let code = Int(lower), (100...999).contains(code) {
                range = code...code
                return
            }
            throw FilterError(message: "invalid --status \"\(text)\": use a code (404), a class (4xx) or a range (200-299)")
        }
    }

    public struct FilterError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses comma-separated `--status` values.
    public static func statusPatterns(_ text: String) throws(FilterError) -> [StatusPattern] {
        var patterns: [StatusPattern] = []
        for part in text.split(separator: ",") { patterns.append(try StatusPattern(parsing: String(part))) }
        if patterns.isEmpty { throw FilterError(message: "--status needs a value such as 404, 4xx or 200-299") }
        return patterns
    }

    public func matches(_ exchange: HTTPExchange) -> Bool {
        if !hosts.isEmpty {
            let candidates = [ExchangeText.hostWithoutPort(exchange), exchange.server.address.description]
            guard hosts.contains(where: { pattern in candidates.contains { glob(pattern.lowercased(), $0.lowercased()) } })
            else { return false }
        }
        if !paths.isEmpty {
            guard let request = exchange.request else { return false }
            let path = ExchangeText.path(of: request.uri)
            guard paths.contains(where: { glob($0, path) }) else { return false }
        }
        if !methods.isEmpty {
            guard let method = exchange.request?.method.uppercased(),
                  methods.contains(where: { $0.uppercased() == method }) else { return false }
        }
        if !statuses.isEmpty {
            guard let status = exchange.response?.status, statuses.contains(where: { $0.range.contains(status) })
            else { return false }
        }
        return true
    }

    private func glob(_ pattern: String, _ text: String) -> Bool {
        fnmatch(pattern, text, 0) == 0
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var view = Substring(self)
        while view.first == set { view = view.dropFirst() }
        while view.last == set { view = view.dropLast() }
        return String(view)
    }
}
