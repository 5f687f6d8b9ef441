import Reports

/// What the router answers: status, the headers particular to this answer, and the bytes. The server adds the
/// headers every answer carries (`LiveResponse.securityHeaders`).
public struct LiveResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON document made by the Reports JSON writer (every captured string escaped there).
    public static func json(_ bytes: [UInt8], status: Int = 200) -> LiveResponse {
        LiveResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: bytes)
    }

    /// `{"error": "..."}` with the status; the message is escaped as a JSON string.
    public static func error(_ status: Int, _ message: String) -> LiveResponse {
        var json = TextOutput.memory()
        json.append("{"); json.key("error"); json.string(message); json.append("}")
        return .json(json.bytes, status: status)
    }

    /// Captured bytes as they were, as a download: never a type a browser would render or run.
    public static func download(_ bytes: [UInt8], filename: String, type: String = "application/octet-stream") -> LiveResponse {
        LiveResponse(status: 200, headers: [("Content-Type", type),
                                            ("Content-Disposition", "attachment; filename=\"\(filename)\"")], body: bytes)
    }

    /// Every answer, error or not: nothing runs but the page's own files, nothing is sniffed into another type, nothing
    /// is cached or leaks the token through a Referer, and no other site may frame the page.
    public static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
            + "connect-src 'self'; frame-src 'none'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
            + "form-action 'self'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]
}
