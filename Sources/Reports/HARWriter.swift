import Foundation
import HTTPModel

/// `--har FILE`: HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/), as Chrome DevTools and
/// Charles import it. Entries are written as exchanges complete, so memory does not grow with the capture;
/// `finish()` closes the JSON.
public final class HARWriter {
    public struct WriteError: Error, CustomStringConvertible {
        public var description: String
    }

    public let path: String
    private var output: TextOutput
    private var entries = 0
    private var finished = false

    public init(path: String, creatorVersion: String) throws(WriteError) {
        self.path = path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw WriteError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        output = TextOutput(fileDescriptor: descriptor)
        Self.head(creatorVersion: creatorVersion, into: &output)
    }

    /// The whole document for `exchanges`, in memory: the same bytes `init`, `add` and `finish` write to a file
    /// (the live view's HAR download).
    public static func document<Exchanges: Sequence<HTTPExchange>>(_ exchanges: Exchanges,
                                                                   creatorVersion: String) -> [UInt8] {
        var output = TextOutput(fileDescriptor: -1, flushThreshold: Int.max)
        head(creatorVersion: creatorVersion, into: &output)
        var first = true
        for exchange in exchanges {
            if !first { output.append(",\n") }
            first = false
            entry(exchange, into: &output)
        }
        output.append(tail)
        return output.bytes
    }

    private static func head(creatorVersion: String, into output: inout TextOutput) {
        output.append("{\"log\":{")
        output.key("version"); output.string("1.2")
        output.append(","); output.key("creator"); output.append("{")
        output.key("name"); output.string("TapKit capture")
        output.append(","); output.key("version"); output.string(creatorVersion)
        output.append("},"); output.key("pages"); output.append("[],")
        output.key("entries"); output.append("[\n")
    }

    private static let tail: StaticString = "\n]}}\n"

    deinit { try? finish() }

    public func add(_ exchange: HTTPExchange) {
        if entries > 0 { output.append(",\n") }
        Self.entry(exchange, into: &output)
        output.flushIfFull()
        entries += 1
    }

    /// Closes the JSON and the file; says why if any write failed (a full disk, say).
    public func finish() throws(WriteError) {
        guard !finished else { return }
        finished = true
        output.append(Self.tail)
        output.flush()
        close(output.fileDescriptor)
        if output.writeFailed {
            throw WriteError(description: "cannot write \(path): \(String(cString: strerror(output.writeError)))")
        }
    }

    private static func entry(_ exchange: HTTPExchange, into json: inout TextOutput) {
        let start = exchange.time
        let send = exchange.request.map { $0.end.seconds(since: $0.start) * 1000 } ?? 0
        var wait = 0.0, receive = 0.0
        if let response = exchange.response {
            let requestEnd = exchange.request?.end ?? response.start
            wait = max(0, response.start.seconds(since: requestEnd) * 1000)
            receive = max(0, response.end.seconds(since: response.start) * 1000)
        }
        json.append("{")
        json.key("startedDateTime"); json.string(ExchangeText.iso8601(start))
        json.append(","); json.key("time"); json.milliseconds(send + wait + receive)
        json.append(","); json.key("request"); request(exchange, into: &json)
        json.append(","); json.key("response"); response(exchange, into: &json)
        json.append(","); json.key("cache"); json.append("{}")
        json.append(","); json.key("timings"); json.append("{")
        json.key("blocked"); json.append("-1,"); json.key("dns"); json.append("-1,"); json.key("connect"); json.append("-1,")
        json.key("send"); json.milliseconds(send)
        json.append(","); json.key("wait"); json.milliseconds(wait)
        json.append(","); json.key("receive"); json.milliseconds(receive)
        json.append(","); json.key("ssl"); json.append("-1}")
        json.append(","); json.key("serverIPAddress"); json.string(exchange.server.address.description)
        json.append(","); json.key("connection"); json.string(String(exchange.connection.rawValue))
        var notes = exchange.warnings.map(\.description)
        if !exchange.complete { notes.insert("incomplete", at: 0) }
        if let upgrade = exchange.upgrade {
            notes.append(exchange.upgradeDecoded ? "connection switched to \(upgrade)" : "connection switched to \(upgrade); later bytes not decoded")
        }
        if let http2 = exchange.http2 {
            notes.append("HTTP/2 stream \(http2.streamID)" + (http2.promisedOn.map { ", pushed on stream \($0)" } ?? ""))
        }
        if let http3 = exchange.http3 {
            let stream = http3.streamID.map { " stream \($0)" } ?? ""
            notes.append(http3.pushID.map { "HTTP/3 push \($0) on\(stream)" + (http3.promisedOn.map { ", promised on stream \($0)" } ?? "") }
                         ?? "HTTP/3\(stream)")
        }
        if let grpc = exchange.grpc { notes.append(ExchangeText.grpcSummary(grpc)) }
        if !notes.isEmpty { json.append(","); json.key("comment"); json.string(notes.joined(separator: "; ")) }
        json.append("}")
    }

    private static func headers(_ headers: HTTPHeaders, into json: inout TextOutput) {
        json.append("[")
        var first = true
        headers.withRawFields { name, value in
            if !first { json.append(",") }
            first = false
            json.append("{"); json.key("name"); json.string(utf8: name)
            json.append(","); json.key("value"); json.string(utf8: value); json.append("}")
        }
        json.append("]")
    }

    private static func nameValues(_ pairs: [(String, String)], into json: inout TextOutput) {
        json.append("[")
        for (index, pair) in pairs.enumerated() {
            if index > 0 { json.append(",") }
            json.append("{"); json.key("name"); json.string(pair.0)
            json.append(","); json.key("value"); json.string(pair.1); json.append("}")
        }
        json.append("]")
    }

    private static func request(_ exchange: HTTPExchange, into json: inout TextOutput) {
        json.append("{")
        let request = exchange.request
        // No request captured (lost in a gap, or before the capture began): HAR requires a method and a version;
        // empty strings say they were not seen rather than inventing a GET.
        json.key("method"); json.string(request?.method ?? "")
        json.append(","); json.key("url"); json.string(ExchangeText.url(exchange))
        json.append(","); json.key("httpVersion"); json.string(request?.version ?? "")
        json.append(","); json.key("cookies"); HARCookie.write(HARCookie.fromRequest(request?.headers ?? HTTPHeaders()), into: &json)
        json.append(","); json.key("headers"); headers(request?.headers ?? HTTPHeaders(), into: &json)
        json.append(","); json.key("queryString"); nameValues(queryPairs(request?.uri ?? ""), into: &json)
        if let request, request.body.size > 0 {
            let mimeType = request.body.contentType ?? "application/octet-stream"
            json.append(","); json.key("postData"); json.append("{")
            json.key("mimeType"); json.string(mimeType)
            if mimeType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
                json.append(","); json.key("params")
                nameValues(formPairs(String(decoding: request.body.kept, as: UTF8.self)), into: &json)
            }
            content(request.body, into: &json)
            json.append("}")
        }
        json.append(","); json.key("headersSize"); json.number(request?.headSize ?? -1)
        json.append(","); json.key("bodySize"); json.number(request?.body.transferSize ?? -1)
        if request == nil { json.append(","); json.key("comment"); json.string("no request captured") }
        json.append("}")
    }

    private static func response(_ exchange: HTTPExchange, into json: inout TextOutput) {
        json.append("{")
        guard let response = exchange.response else {
            json.key("status"); json.number(0)
            json.append(","); json.key("statusText"); json.string("")
            json.append(","); json.key("httpVersion"); json.string("")
            json.append(","); json.key("cookies"); json.append("[]")
            json.append(","); json.key("headers"); json.append("[]")
            json.append(","); json.key("content"); json.append("{\"size\":0,\"mimeType\":\"x-unknown\"}")
            json.append(","); json.key("redirectURL"); json.string("")
            json.append(","); json.key("headersSize"); json.number(-1)
            json.append(","); json.key("bodySize"); json.number(-1)
            json.append(","); json.key("comment"); json.string("no response captured")
            json.append("}")
            return
        }
        // HAR's status is a number: 0 when the status sent was not one (`2XX`) or there was none (HTTP/0.9), with
        // a comment that says so; never a made-up code.
        json.key("status"); json.number(response.status ?? 0)
        json.append(","); json.key("statusText"); json.string(response.reason)
        json.append(","); json.key("httpVersion"); json.string(response.version)
        json.append(","); json.key("cookies"); HARCookie.write(HARCookie.fromResponse(response.headers), into: &json)
        json.append(","); json.key("headers"); headers(response.headers, into: &json)
        json.append(","); json.key("content"); json.append("{")
        json.key("size"); json.number(response.body.size)
        if !response.body.encoding.isEmpty {
            json.append(","); json.key("compression"); json.number(response.body.size - response.body.transferSize)
        }
        json.append(","); json.key("mimeType"); json.string(response.body.contentType ?? "x-unknown")
        content(response.body, into: &json)
        json.append("}")
        json.append(","); json.key("redirectURL"); json.string(response.headers["Location"] ?? "")
        json.append(","); json.key("headersSize"); json.number(response.headSize)
        json.append(","); json.key("bodySize"); json.number(response.body.transferSize)
        if response.status == nil {
            json.append(","); json.key("comment")
            json.string(response.statusText.isEmpty
                        ? "no status line (\(response.version)); status 0 written because HAR requires a number"
                        : "status code \"\(response.statusText)\" is not a number; status 0 written because HAR "
                          + "requires a number")
        }
        json.append("}")
    }

    /// `text` (and `encoding: base64` for binary), plus a comment when only part of the body was kept.
    private static func content(_ body: HTTPBody, into json: inout TextOutput) {
        guard body.size > 0 else { return }
        switch BodyPresentation.of(body, limit: Int.max) {
        case .text:
            let media = BodyPresentation.MediaType(body.contentType)
            json.append(","); json.key("text"); json.string(BodyPresentation.decode(body.kept, charset: media.charset) ?? "")
        case .binary, .empty:
            json.append(","); json.key("text"); json.string(Data(body.kept).base64EncodedString())
            json.append(","); json.key("encoding"); json.string("base64")
        }
        if body.keptIsPartial {
            json.append(","); json.key("comment"); json.string("body cut to its first \(body.kept.count) of \(body.size) bytes")
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
