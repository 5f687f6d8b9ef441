import HTTPModel
import PacketDecoding

/// `--json`: one object per exchange, one line each (NDJSON). The field names are a documented contract
/// (docs/http.md); add fields only with the documentation, never rename.
public enum HTTPJSONRenderer {
    /// The line, without a newline.
    public static func line(for exchange: HTTPExchange) -> String {
        var json = TextOutput(fileDescriptor: -1)
        write(exchange, into: &json)
        return json.text
    }

    /// Appends the line and a newline to `output`.
    public static func appendLine(for exchange: HTTPExchange, to output: inout TextOutput) {
        write(exchange, into: &output)
        output.append(UInt8(ascii: "\n"))
    }

    /// The object alone, without a newline (the live view adds its own members before the closing brace).
    public static func write(_ exchange: HTTPExchange, into json: inout TextOutput) {
        json.append("{")
        json.key("ts"); json.time(exchange.time)
        json.append(","); json.key("client"); json.endpoint(exchange.client)
        json.append(","); json.key("server"); json.endpoint(exchange.server)
        json.append(","); json.key("request")
        if let request = exchange.request {
            json.append("{")
            json.key("method"); json.string(request.method)
            json.append(","); json.key("uri"); json.string(request.uri)
            json.append(","); json.key("version"); json.string(request.version)
            json.append(","); json.key("headers"); headers(request.headers, into: &json)
            json.append(","); json.key("body"); json.append("{")
            json.key("size"); json.number(request.body.size)
            json.append(","); json.key("sha256"); digest(request.body.digest, into: &json)
            json.append("}}")
        } else {
            json.null()
        }
        json.append(","); json.key("response")
        if let response = exchange.response {
            json.append("{")
            json.key("status")
            if let status = response.status { json.number(status) } else { json.null() }
            json.append(","); json.key("status_text"); json.string(response.statusText)
            json.append(","); json.key("reason"); json.string(response.reason)
            json.append(","); json.key("version"); json.string(response.version)
            json.append(","); json.key("headers"); headers(response.headers, into: &json)
            json.append(","); json.key("body"); json.append("{")
            json.key("size"); json.number(response.body.size)
            json.append(","); json.key("sha256"); digest(response.body.digest, into: &json)
            json.append(","); json.key("encoding"); json.append("[")
            for (index, coding) in response.body.encoding.enumerated() {
                if index > 0 { json.append(",") }
                json.string(coding)
            }
            json.append("]}")
            // Interim (1xx) responses before this one, in arrival order; only when there were any, so lines without
            // them stay as they were.
            if !response.interim.isEmpty {
                json.append(","); json.key("interim"); json.append("[")
                for (index, interim) in response.interim.enumerated() {
                    if index > 0 { json.append(",") }
                    json.append("{"); json.key("status"); json.number(interim.status)
                    json.append(","); json.key("reason"); json.string(interim.reason)
                    json.append(","); json.key("headers"); headers(interim.headers, into: &json)
                    json.append(","); json.key("ts"); json.time(interim.time)
                    json.append("}")
                }
                json.append("]")
            }
            json.append("}")
        } else {
            json.null()
        }
        json.append(","); json.key("timing"); json.append("{")
        json.key("request_start")
        if let request = exchange.request { json.time(request.start) } else { json.null() }
        json.append(","); json.key("response_start")
        if let response = exchange.response { json.time(response.start) } else { json.null() }
        json.append(","); json.key("response_end")
        if let response = exchange.response { json.time(response.end) } else { json.null() }
        json.append("}")
        json.append(","); json.key("complete"); json.bool(exchange.complete)
        json.append(","); json.key("warnings"); json.append("[")
        for (index, warning) in exchange.warnings.enumerated() {
            if index > 0 { json.append(",") }
            json.string(warning.description)
        }
        json.append("]")
        // Only HTTP/2 and HTTP/3 exchanges carry these, so HTTP/1.x lines stay as they were.
        if let http2 = exchange.http2 { json.append(","); json.key("http2"); write(http2, into: &json) }
        if let http3 = exchange.http3 { json.append(","); json.key("http3"); write(http3, into: &json) }
        if let grpc = exchange.grpc { json.append(","); json.key("grpc"); write(grpc, into: &json) }
        if exchange.upgradeDecoded { json.append(","); json.key("upgrade_decoded"); json.bool(true) }
        json.append("}")
    }

    private static func write(_ http2: HTTP2StreamFacts, into json: inout TextOutput) {
        json.append("{"); json.key("stream"); json.number(Int(http2.streamID))
        json.append(","); json.key("pushed_on")
        if let promisedOn = http2.promisedOn { json.number(Int(promisedOn)) } else { json.null() }
        json.append(","); json.key("outcome")
        switch http2.outcome {
        case .complete: json.string("complete")
        case .unfinished: json.string("unfinished")
        case .reset(let sender, let code, let name):
            json.string("reset"); json.append(","); json.key("by"); json.string(sender == .clientToServer ? "client" : "server")
            json.append(","); json.key("error_code"); json.number(Int(code)); json.append(","); json.key("error"); json.string(name)
        case .goaway(let sender, let code, let name, let last):
            json.string("goaway"); json.append(","); json.key("by"); json.string(sender == .clientToServer ? "client" : "server")
            json.append(","); json.key("error_code"); json.number(Int(code)); json.append(","); json.key("error"); json.string(name)
            json.append(","); json.key("last_stream"); json.number(Int(last))
        }
        json.append(","); json.key("header_table_unknown"); json.bool(http2.headerTableUnknown)
        json.append("}")
    }

    private static func write(_ http3: HTTP3StreamFacts, into json: inout TextOutput) {
        // QUIC stream ids and push IDs go up to 2^62: written as decimal text, not through Int.
        func number(_ value: UInt64?) { if let value { json.append(String(value)) } else { json.null() } }
        json.append("{"); json.key("stream"); number(http3.streamID)
        json.append(","); json.key("push_id"); number(http3.pushID)
        json.append(","); json.key("pushed_on"); number(http3.promisedOn)
        json.append(","); json.key("outcome")
        switch http3.outcome {
        case .complete: json.string("complete")
        case .unfinished: json.string("unfinished")
        case .reset(let sender, let code, let name):
            json.string("reset"); json.append(","); json.key("by"); json.string(sender == .clientToServer ? "client" : "server")
            json.append(","); json.key("error_code"); number(code); json.append(","); json.key("error"); json.string(name)
        case .goaway(let sender, let id):
            json.string("goaway"); json.append(","); json.key("by"); json.string(sender == .clientToServer ? "client" : "server")
            json.append(","); json.key("goaway_id"); number(id)
        }
        json.append(","); json.key("header_table_unknown"); json.bool(http3.headerTableUnknown)
        json.append("}")
    }

    private static func write(_ grpc: GRPCCallFacts, into json: inout TextOutput) {
        json.append("{"); json.key("service"); json.string(grpc.service)
        json.append(","); json.key("method"); json.string(grpc.method)
        json.append(","); json.key("status")
        if let status = grpc.status { json.number(status) } else { json.null() }
        json.append(","); json.key("message")
        if let message = grpc.message { json.string(message) } else { json.null() }
        json.append(","); json.key("request_messages"); messages(grpc.requestMessages, count: grpc.requestMessageCount, into: &json)
        json.append(","); json.key("response_messages"); messages(grpc.responseMessages, count: grpc.responseMessageCount, into: &json)
        json.append("}")
    }

    private static func messages(_ listed: [GRPCCallFacts.Message], count: Int, into json: inout TextOutput) {
        json.append("{"); json.key("count"); json.number(count)
        json.append(","); json.key("listed"); json.append("[")
        for (index, message) in listed.enumerated() {
            if index > 0 { json.append(",") }
            json.append("{"); json.key("size"); json.number(message.size)
            json.append(","); json.key("compressed"); json.bool(message.compressed)
            json.append(","); json.key("hex_prefix"); json.string(message.hexPrefix); json.append("}")
        }
        json.append("]}")
    }

    /// A WebSocket message as its own NDJSON record: `{"type":"websocket",...}` (exchange records have no `type`).
    public static func appendLine(for message: WebSocketMessage, to output: inout TextOutput) {
        write(message, into: &output)
        output.append(UInt8(ascii: "\n"))
    }

    /// The record alone, without a newline.
    public static func write(_ message: WebSocketMessage, into json: inout TextOutput) {
        json.append("{"); json.key("type"); json.string("websocket")
        json.append(","); json.key("ts"); json.time(message.time)
        json.append(","); json.key("client"); json.endpoint(message.client)
        json.append(","); json.key("server"); json.endpoint(message.server)
        json.append(","); json.key("from"); json.string(message.direction == .clientToServer ? "client" : "server")
        json.append(","); json.key("opcode"); json.number(Int(message.opcode))
        json.append(","); json.key("kind"); json.string(message.kind.rawValue)
        json.append(","); json.key("size"); json.number(message.size)
        json.append(","); json.key("sha256"); json.string(message.sha256)
        json.append(","); json.key("text")
        let text = message.textPrefix
        if let text { json.string(text.text) } else { json.null() }
        json.append(","); json.key("text_is_partial"); json.bool(text?.partial ?? false)
        json.append(","); json.key("frames"); json.number(message.frames)
        json.append(","); json.key("compressed"); json.bool(message.compressed)
        json.append(","); json.key("close_code")
        if let code = message.closeCode { json.number(Int(code)) } else { json.null() }
        json.append(","); json.key("close_reason")
        if let reason = message.closeReason { json.string(reason) } else { json.null() }
        json.append(","); json.key("warnings"); json.append("[")
        for (index, warning) in message.warnings.enumerated() {
            if index > 0 { json.append(",") }
            json.string(warning.description)
        }
        json.append("]}")
    }

    /// A body's SHA-256 as a JSON string of hex digits (empty when it was not computed), with no String made.
    private static func digest(_ digest: SHA256Digest?, into json: inout TextOutput) {
        json.append("\"")
        digest?.withHexDigits { json.append(raw: $0) }
        json.append("\"")
    }

    private static func headers(_ headers: HTTPHeaders, into json: inout TextOutput) {
        json.append("[")
        var first = true
        headers.withRawFields { name, value in
            if !first { json.append(",") }
            first = false
            json.append("[")
            json.string(utf8: name)
            json.append(",")
            json.string(utf8: value)
            json.append("]")
        }
        json.append("]")
    }
}
