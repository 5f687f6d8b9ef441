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
        json.raw("]")
        // Only HTTP/2 exchanges carry these, so HTTP/1.x lines stay as they were.
        if let http2 = exchange.http2 { json.raw(","); json.key("http2"); write(http2, into: &json) }
        if let grpc = exchange.grpc { json.raw(","); json.key("grpc"); write(grpc, into: &json) }
        if exchange.upgradeDecoded { json.raw(","); json.key("upgrade_decoded"); json.bool(true) }
        json.raw("}")
    }

    private static func write(_ http2: HTTP2StreamFacts, into json: inout JSONText) {
        json.raw("{"); json.key("stream"); json.number(Int(http2.streamID))
        json.raw(","); json.key("pushed_on")
        if let promisedOn = http2.promisedOn { json.number(Int(promisedOn)) } else { json.null() }
        json.raw(","); json.key("outcome")
        switch http2.outcome {
        case .complete: json.string("complete")
        case .unfinished: json.string("unfinished")
        case .reset(let sender, let code, let name):
            json.string("reset"); json.raw(","); json.key("by"); json.string(sender == .clientToServer ? "client" : "server")
            json.raw(","); json.key("error_code"); json.number(Int(code)); json.raw(","); json.key("error"); json.string(name)
        case .goaway(let sender, let code, let name, let last):
            json.string("goaway"); json.raw(","); json.key("by"); json.string(sender == .clientToServer ? "client" : "server")
            json.raw(","); json.key("error_code"); json.number(Int(code)); json.raw(","); json.key("error"); json.string(name)
            json.raw(","); json.key("last_stream"); json.number(Int(last))
        }
        json.raw(","); json.key("header_table_unknown"); json.bool(http2.headerTableUnknown)
        json.raw("}")
    }

    private static func write(_ grpc: GRPCCallFacts, into json: inout JSONText) {
        json.raw("{"); json.key("service"); json.string(grpc.service)
        json.raw(","); json.key("method"); json.string(grpc.method)
        json.raw(","); json.key("status")
        if let status = grpc.status { json.number(status) } else { json.null() }
        json.raw(","); json.key("message")
        if let message = grpc.message { json.string(message) } else { json.null() }
        json.raw(","); json.key("request_messages"); messages(grpc.requestMessages, count: grpc.requestMessageCount, into: &json)
        json.raw(","); json.key("response_messages"); messages(grpc.responseMessages, count: grpc.responseMessageCount, into: &json)
        json.raw("}")
    }

    private static func messages(_ listed: [GRPCCallFacts.Message], count: Int, into json: inout JSONText) {
        json.raw("{"); json.key("count"); json.number(count)
        json.raw(","); json.key("listed"); json.raw("[")
        for (index, message) in listed.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{"); json.key("size"); json.number(message.size)
            json.raw(","); json.key("compressed"); json.bool(message.compressed)
            json.raw(","); json.key("hex_prefix"); json.string(message.hexPrefix); json.raw("}")
        }
        json.raw("]}")
    }

    /// A WebSocket message as its own NDJSON record: `{"type":"websocket",...}` (exchange records have no `type`).
    public static func line(for message: WebSocketMessage) -> String {
        var json = JSONText()
        write(message, into: &json)
        return json.text
    }

    public static func appendLine(for message: WebSocketMessage, to output: inout PacketOutput) {
        var json = JSONText()
        write(message, into: &json)
        json.out.append(UInt8(ascii: "\n"))
        output.append(raw: json.out.bytes)
    }

    private static func write(_ message: WebSocketMessage, into json: inout JSONText) {
        json.raw("{"); json.key("type"); json.string("websocket")
        json.raw(","); json.key("ts"); json.seconds(message.time.secondsSinceEpoch)
        json.raw(","); json.key("client"); json.endpoint(message.client)
        json.raw(","); json.key("server"); json.endpoint(message.server)
        json.raw(","); json.key("from"); json.string(message.direction == .clientToServer ? "client" : "server")
        json.raw(","); json.key("opcode"); json.number(Int(message.opcode))
        json.raw(","); json.key("kind"); json.string(message.kind.rawValue)
        json.raw(","); json.key("size"); json.number(message.size)
        json.raw(","); json.key("sha256"); json.string(message.sha256)
        json.raw(","); json.key("text")
        if message.kind == .text { json.string(String(decoding: message.kept, as: UTF8.self)) } else { json.null() }
        json.raw(","); json.key("text_is_partial"); json.bool(message.kind == .text && message.kept.count < message.size)
        json.raw(","); json.key("frames"); json.number(message.frames)
        json.raw(","); json.key("compressed"); json.bool(message.compressed)
        json.raw(","); json.key("close_code")
        if let code = message.closeCode { json.number(Int(code)) } else { json.null() }
        json.raw(","); json.key("close_reason")
        if let reason = message.closeReason { json.string(reason) } else { json.null() }
        json.raw(","); json.key("warnings"); json.raw("[")
        for (index, warning) in message.warnings.enumerated() {
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
