import HTTPModel
import PacketDecoding
import Reports

extension TextOutput {
    /// A buffer that only grows until read (descriptor -1 and no threshold: nothing is flushed away).
    static func memory() -> TextOutput { TextOutput(fileDescriptor: -1, flushThreshold: Int.max) }
}

/// The API's JSON documents (docs/liveview.md), written with the Reports JSON writer: every captured string goes out
/// as an escaped JSON string, never as markup.
enum APIDocuments {
    /// An exchange as `capture --http --json` prints it, plus `id`, `bodies` and, on TLS connections, `tls` (on QUIC
    /// ones, `quic`): the connection's record.
    static func exchange(_ stored: StoredExchange, into json: inout TextOutput) {
        HTTPJSONRenderer.write(stored.exchange, into: &json)
        json.removeLast()  // the object's closing brace: the live view's members follow
        json.append(","); json.key("id"); json.number(stored.id)
        json.append(","); json.key("bodies"); json.append("{")
        json.key("request"); body(stored.requestBody, into: &json)
        json.append(","); json.key("response"); body(stored.responseBody, into: &json)
        json.append("}")
        if let tls = stored.tls {
            json.append(","); json.key("tls")
            TLSJSONRenderer.write(tls, into: &json)
        }
        if let quic = stored.quic {
            json.append(","); json.key("quic")
            QUICJSONRenderer.write(quic, into: &json)
        }
        json.append("}")
    }

    /// A record as `--http --json` prints it, with `id` (and `bodies` on exchanges, `keptBytes` on WebSocket messages).
    static func record(_ record: StoredRecord, into json: inout TextOutput) {
        switch record {
        case .exchange(let stored):
            exchange(stored, into: &json)
        case .tls(let id, let facts):
            TLSJSONRenderer.write(facts, into: &json)
            json.removeLast()
            json.append(","); json.key("id"); json.number(id); json.append("}")
        case .quic(let id, let notice):
            QUICJSONRenderer.write(notice, into: &json)
            json.removeLast()
            json.append(","); json.key("id"); json.number(id); json.append("}")
        case .notHTTP(let id, let notice):
            NotHTTPJSONRenderer.write(notice, into: &json)
            json.removeLast()
            json.append(","); json.key("id"); json.number(id); json.append("}")
        case .webSocket(let id, let message, let kept):
            HTTPJSONRenderer.write(message, into: &json)
            json.removeLast()
            json.append(","); json.key("id"); json.number(id)
            json.append(","); json.key("kept"); body(kept, into: &json)
            json.append("}")
        }
    }

    private static func body(_ body: KeptBody, into json: inout TextOutput) {
        json.append("{"); json.key("kept"); json.bool(body.whole)
        json.append(","); json.key("size"); json.number(body.size)
        json.append(","); json.key("keptBytes"); json.number(body.keptBytes)
        json.append(","); json.key("reason")
        if let loss = body.loss { json.string(loss.description) } else { json.null() }
        json.append("}")
    }

    static func page(_ page: (records: [StoredRecord], next: Int, dropped: Int)) -> [UInt8] {
        var json = TextOutput.memory()
        json.append("{"); json.key("exchanges"); json.append("[")
        for (index, stored) in page.records.enumerated() {
            if index > 0 { json.append(",") }
            record(stored, into: &json)
        }
        json.append("],"); json.key("next"); json.number(page.next)
        json.append(","); json.key("dropped"); json.number(page.dropped)
        json.append("}")
        return json.bytes
    }

    static func throughput(_ buckets: ThroughputBuckets) -> [UInt8] {
        var json = TextOutput.memory()
        json.append("{"); json.key("bucket"); json.number(Int(buckets.bucketSeconds))
        json.append(","); json.key("start")
        if let start = buckets.start { json.number(Int(start)) } else { json.null() }
        json.append(","); json.key("up"); numbers(buckets.up, into: &json)
        json.append(","); json.key("down"); numbers(buckets.down, into: &json)
        json.append("}")
        return json.bytes
    }

    static func numbers(_ values: [Int], into json: inout TextOutput) {
        json.append("[")
        for (index, value) in values.enumerated() {
            if index > 0 { json.append(",") }
            json.number(value)
        }
        json.append("]")
    }
}
