import Foundation
import HTTPDecoding

/// `--har FILE`: HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/), as Chrome DevTools and
/// Charles import it. Entries are written as exchanges complete, so memory does not grow with the capture;
/// `finish()` closes the JSON.
public final class HARWriter {
    public struct WriteError: Error, CustomStringConvertible {
        public var description: String
    }

    private let handle: FileHandle
    public let path: String
    private var entries = 0
    private var finished = false

    public init(path: String, creatorVersion: String = "0.1") throws(WriteError) {
        self.path = path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw WriteError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        self.handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var json = JSONText()
        json.raw("{\"log\":{")
        json.key("version"); json.string("1.2")
        json.raw(","); json.key("creator"); json.raw("{")
        json.key("name"); json.string("TapKit capture")
        json.raw(","); json.key("version"); json.string(creatorVersion)
        json.raw("},"); json.key("pages"); json.raw("[],")
        json.key("entries"); json.raw("[\n")
        write(json.text)
    }

    deinit { finish() }

    public func add(_ exchange: HTTPExchange) {
        write((entries > 0 ? ",\n" : "") + Self.entry(exchange))
        entries += 1
    }

    public func finish() {
        guard !finished else { return }
        finished = true
        write("\n]}}\n")
        try? handle.close()
    }

    private func write(_ text: String) {
        try? handle.write(contentsOf: Data(text.utf8))
    }

    static func entry(_ exchange: HTTPExchange) -> String {
        var json = JSONText()
        let start = exchange.time
        let send = exchange.request.map { $0.end.seconds(since: $0.start) * 1000 } ?? 0
        var wait = 0.0, receive = 0.0
        if let response = exchange.response {
            let requestEnd = exchange.request?.end ?? response.start
            wait = max(0, response.start.seconds(since: requestEnd) * 1000)
            receive = max(0, response.end.seconds(since: response.start) * 1000)
        }
        json.raw("{")
        json.key("startedDateTime"); json.string(ExchangeText.iso8601(start))
        json.raw(","); json.key("time"); json.milliseconds(send + wait + receive)
        json.raw(","); json.key("request"); request(exchange, into: &json)
        json.raw(","); json.key("response"); response(exchange, into: &json)
        json.raw(","); json.key("cache"); json.raw("{}")
        json.raw(","); json.key("timings"); json.raw("{")
        json.key("blocked"); json.raw("-1,"); json.key("dns"); json.raw("-1,"); json.key("connect"); json.raw("-1,")
        json.key("send"); json.milliseconds(send)
        json.raw(","); json.key("wait"); json.milliseconds(wait)
        json.raw(","); json.key("receive"); json.milliseconds(receive)
        json.raw(","); json.key("ssl"); json.raw("-1}")
        json.raw(","); json.key("serverIPAddress"); json.string(exchange.server.address.description)
        json.raw(","); json.key("connection"); json.string(String(exchange.connection.rawValue))
        var notes = exchange.warnings
        if !exchange.complete { notes.insert("incomplete", at: 0) }
        if let upgrade = exchange.upgrade {
            notes.append(exchange.upgradeDecoded ? "connection switched to \(upgrade)" : "connection switched to \(upgrade); later bytes not decoded")
        }
        if let http2 = exchange.http2 {
            notes.append("HTTP/2 stream \(http2.streamID)" + (http2.promisedOn.map { ", pushed on stream \($0)" } ?? ""))
        }
        if let grpc = exchange.grpc { notes.append(ExchangeText.grpcSummary(grpc)) }
        if !notes.isEmpty { json.raw(","); json.key("comment"); json.string(notes.joined(separator: "; ")) }
        json.raw("}")
        return json.text
    }

    private static func headers(_ headers: HTTPHeaders, into json: inout JSONText) {
        json.raw("[")
        for (index, field) in headers.fields.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{"); json.key("name"); json.string(field.name)
            json.raw(","); json.key("value"); json.string(field.value); json.raw("}")
        }
        json.raw("]")
    }

    private static func nameValues(_ pairs: [(String, String)], into json: inout JSONText) {
        json.raw("[")
        for (index, pair) in pairs.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{"); json.key("name"); json.string(pair.0)
            json.raw(","); json.key("value"); json.string(pair.1); json.raw("}")
        }
        json.raw("]")
    }

    private static func request(_ exchange: HTTPExchange, into json: inout JSONText) {
        json.raw("{")
        let request = exchange.request
        json.key("method"); json.string(request?.method ?? "GET")
        json.raw(","); json.key("url"); json.string(ExchangeText.url(exchange))
        json.raw(","); json.key("httpVersion"); json.string(request?.version ?? "HTTP/1.1")
        json.raw(","); json.key("cookies"); HARCookie.write(HARCookie.fromRequest(request?.headers ?? HTTPHeaders()), into: &json)
        json.raw(","); json.key("headers"); headers(request?.headers ?? HTTPHeaders(), into: &json)
        json.raw(","); json.key("queryString"); nameValues(queryPairs(request?.uri ?? ""), into: &json)
        if let request, request.body.size > 0 {
            let mimeType = request.body.contentType ?? "application/octet-stream"
            json.raw(","); json.key("postData"); json.raw("{")
            json.key("mimeType"); json.string(mimeType)
            if mimeType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
                json.raw(","); json.key("params")
                nameValues(formPairs(String(decoding: request.body.kept, as: UTF8.self)), into: &json)
            }
            content(request.body, into: &json)
            json.raw("}")
        }
        json.raw(","); json.key("headersSize"); json.number(request?.headSize ?? -1)
        json.raw(","); json.key("bodySize"); json.number(request?.body.transferSize ?? -1)
        json.raw("}")
    }

    private static func response(_ exchange: HTTPExchange, into json: inout JSONText) {
        json.raw("{")
        guard let response = exchange.response else {
            json.key("status"); json.number(0)
            json.raw(","); json.key("statusText"); json.string("")
            json.raw(","); json.key("httpVersion"); json.string("")
            json.raw(","); json.key("cookies"); json.raw("[]")
            json.raw(","); json.key("headers"); json.raw("[]")
            json.raw(","); json.key("content"); json.raw("{\"size\":0,\"mimeType\":\"x-unknown\"}")
            json.raw(","); json.key("redirectURL"); json.string("")
            json.raw(","); json.key("headersSize"); json.number(-1)
            json.raw(","); json.key("bodySize"); json.number(-1)
            json.raw(","); json.key("comment"); json.string("no response captured")
            json.raw("}")
            return
        }
        json.key("status"); json.number(response.status)
        json.raw(","); json.key("statusText"); json.string(response.reason)
        json.raw(","); json.key("httpVersion"); json.string(response.version)
        json.raw(","); json.key("cookies"); HARCookie.write(HARCookie.fromResponse(response.headers), into: &json)
        json.raw(","); json.key("headers"); headers(response.headers, into: &json)
        json.raw(","); json.key("content"); json.raw("{")
        json.key("size"); json.number(response.body.size)
        if !response.body.encoding.isEmpty {
            json.raw(","); json.key("compression"); json.number(response.body.size - response.body.transferSize)
        }
        json.raw(","); json.key("mimeType"); json.string(response.body.contentType ?? "x-unknown")
        content(response.body, into: &json)
        json.raw("}")
        json.raw(","); json.key("redirectURL"); json.string(response.headers["Location"] ?? "")
        json.raw(","); json.key("headersSize"); json.number(response.headSize)
        json.raw(","); json.key("bodySize"); json.number(response.body.transferSize)
        json.raw("}")
    }

    /// `text` (and `encoding: base64` for binary), plus a comment when only part of the body was kept.
    private static func content(_ body: HTTPBody, into json: inout JSONText) {
        guard body.size > 0 else { return }
        switch BodyPresentation.of(body, limit: Int.max) {
        case .text:
            let media = BodyPresentation.MediaType(body.contentType)
            json.raw(","); json.key("text"); json.string(BodyPresentation.decode(body.kept, charset: media.charset) ?? "")
        case .binary, .empty:
            json.raw(","); json.key("text"); json.string(Data(body.kept).base64EncodedString())
            json.raw(","); json.key("encoding"); json.string("base64")
        }
        if body.keptIsPartial {
            json.raw(","); json.key("comment"); json.string("body cut to its first \(body.kept.count) of \(body.size) bytes")
        }
    }

    static func queryPairs(_ uri: String) -> [(String, String)] {
        guard let question = uri.firstIndex(of: "?") else { return [] }
        let query = uri[uri.index(after: question)...].prefix { $0 != "#" }
        return formPairs(String(query))
    }

    static func formPairs(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                let spaced = s.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
