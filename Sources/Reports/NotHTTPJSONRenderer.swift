import HTTPModel

/// `--json`: one object for a connection whose bytes (some or all) made no HTTP exchange, on the same NDJSON stream
/// as the exchanges, with a `not_http` member where exchanges have `request`/`response`, so nothing that reached
/// the HTTP decoder is dropped unmentioned (docs/http.md, "Bytes that are not HTTP").
public enum NotHTTPJSONRenderer {
    public static func isRecord(_ notice: ConnectionNotice) -> Bool {
        if case .notParsedAsHTTP = notice.kind { return true }
        return false
    }

    public static func appendLine(for notice: ConnectionNotice, to json: inout TextOutput) {
        guard isRecord(notice) else { return }
        write(notice, into: &json)
        json.append(UInt8(ascii: "\n"))
    }

    /// The object alone, without a newline (the live view adds its own members).
    public static func write(_ notice: ConnectionNotice, into json: inout TextOutput) {
        guard case .notParsedAsHTTP(let clientBytes, let serverBytes) = notice.kind else { return }
        json.append("{")
        json.key("ts"); json.time(notice.time)
        json.append(","); json.key("client"); json.endpoint(notice.client)
        json.append(","); json.key("server"); json.endpoint(notice.server)
        json.append(","); json.key("not_http"); json.append("{")
        json.key("client_bytes"); json.number(clientBytes)
        json.append(","); json.key("server_bytes"); json.number(serverBytes)
        json.append("}}")
    }
}
