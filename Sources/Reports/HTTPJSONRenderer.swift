import HTTPDecoding
import PacketDecoding

/// `--json`: one object per exchange, one line each (NDJSON). The field names are a documented contract
/// (docs/http.md); add fields only with the documentation, never rename.
public enum HTTPJSONRenderer {
    public static func line(for exchange: HTTPExchange) -> String {
        String(decoding: bytes(for: exchange), as: UTF8.self)
    }

    /// The line's UTF-8 bytes, without a newline (what `line(for:)` returns, without building a String).
    public static func bytes(for exchange: HTTPExchange) -> [UInt8] {
        var json = JSONText()
        write(exchange, into: &json)
        return json.bytes
    }

    /// Appends the line and a newline to `output`.
    public static func appendLine(for exchange: HTTPExchange, to output: inout PacketOutput) {
        var json = JSONText()
        write(exchange, into: &json)
        json.out.append(UInt8(ascii: "\n"))
        output.append(raw: json.out.bytes)
    }

    private static func write(_ exchange: HTTPExchange, into json: inout JSONText) {
        json.raw("{")
        json.key("ts"); json.seconds(exchange.time.secondsSinceEpoch)
        json.raw(","); json.key("client"); json.endpoint(exchange.client)
        json.raw(","); json.key("server"); json.endpoint(exchange.server)
        json.raw(","); json.key("request")
        if let request = exchange.request {
            json.raw("{")
            json.key("method"); json.string(request.method)
            json.raw(","); json.key("uri"); json.string(request.uri)
            json.raw(","); json.key("version"); json.string(request.version)
            json.raw(","); json.key("headers"); headers(request.headers, into: &json)
            json.raw(","); json.key("body"); json.raw("{")
            json.key("size"); json.number(request.body.size)
            json.raw(","); json.key("sha256"); json.string(request.body.sha256)
            json.raw("}}")
        } else {
            json.null()
        }
        json.raw(","); json.key("response")
        if let response = exchange.response {
            json.raw("{")
            json.key("status"); json.number(response.status)
            json.raw(","); json.key("reason"); json.string(response.reason)
            json.raw(","); json.key("headers"); headers(response.headers, into: &json)
            json.raw(","); json.key("body"); json.raw("{")
            json.key("size"); json.number(response.body.size)
            json.raw(","); json.key("sha256"); json.string(response.body.sha256)
            json.raw(","); json.key("encoding"); json.raw("[")
            for (index, coding) in response.body.encoding.enumerated() {
                if index > 0 { json.raw(",") }
                json.string(coding)
            }
            json.raw("]}}")
        } else {
            json.null()
        }
        json.raw(","); json.key("timing"); json.raw("{")
        json.key("request_start")
        if let request = exchange.request { json.seconds(request.start.secondsSinceEpoch) } else { json.null() }
        json.raw(","); json.key("response_start")
        if let response = exchange.response { json.seconds(response.start.secondsSinceEpoch) } else { json.null() }
        json.raw(","); json.key("response_end")
        if let response = exchange.response { json.seconds(response.end.secondsSinceEpoch) } else { json.null() }
        json.raw("}")
        json.raw(","); json.key("complete"); json.bool(exchange.complete)
        json.raw(","); json.key("warnings"); json.raw("[")
        for (index, warning) in exchange.warnings.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(warning)
        }
        json.raw("]}")
    }

    private static func headers(_ headers: HTTPHeaders, into json: inout JSONText) {
        json.raw("[")
        for (index, field) in headers.fields.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("[")
            json.string(field.name)
            json.raw(",")
            json.string(field.value)
            json.raw("]")
        }
        json.raw("]")
    }
}
