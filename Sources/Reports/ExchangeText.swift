import Foundation
import HTTPModel
import PacketDecoding

/// Small text helpers shared by the renderers.
public enum ExchangeText {
    /// The status as sent and its reason phrase (`200 OK`, `2XX Odd Status`), or what stood in for it: an HTTP/0.9
    /// response has no status line, a status line may have no code. Never a code or phrase that was not sent.
    public static func status(_ response: HTTPResponse) -> String {
        var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
        appendStatus(response, to: &out)
        return out.text
    }

    /// `status(_:)` written into `out`; a status line of printable ASCII (nearly all) is copied as it is, since
    /// `BodyPresentation.terminalSafe` would leave it unchanged.
    static func appendStatus(_ response: HTTPResponse, to out: inout TextOutput) {
        func printable(_ text: String) -> Bool { text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f } }
        if !response.statusText.isEmpty && printable(response.statusText) && printable(response.reason) {
            out.append(response.statusText)
            if !response.reason.isEmpty {
                out.append(UInt8(ascii: " "))
                out.append(response.reason)
            }
            return
        }
        out.append(terminalSafeStatus(response))
    }

    private static func terminalSafeStatus(_ response: HTTPResponse) -> String {
        if response.statusText.isEmpty {
            return response.version == "HTTP/0.9" ? "HTTP/0.9 (no status line)" : "(no status code)"
        }
        return BodyPresentation.terminalSafe(response.statusText
                                             + (response.reason.isEmpty ? "" : " \(response.reason)"))
    }

    /// The Host header without its port, else the server address.
    static func hostWithoutPort(_ exchange: HTTPExchange) -> String {
        guard let host = exchange.request.flatMap(authority), !host.isEmpty else { return exchange.server.address.description }
        if host.hasPrefix("[") { return String(host.dropFirst().prefix { $0 != "]" }) }
        return String(host.prefix { $0 != ":" })
    }

    /// What the default line shows: `example.com/v1/items?page=2`.
    public static func hostAndTarget(_ exchange: HTTPExchange) -> String {
        guard let request = exchange.request else { return exchange.server.description }
        var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
        appendHostAndTarget(exchange, request: request, to: &out)
        return out.text
    }

    static func appendHostAndTarget(_ exchange: HTTPExchange, request: HTTPRequest, to out: inout TextOutput) {
        let uri = request.uri
        if request.method == "CONNECT" { return out.append(uri) }
        if let range = uri.range(of: "://") { return out.append(String(uri[range.upperBound...])) }
        if let host = authority(request), !host.isEmpty { out.append(host) } else { out.append(exchange.server) }
        if uri == "*" { out.append(" *") } else { out.append(uri) }
    }

    /// The path of a request-target, without query or fragment.
    static func path(of uri: String) -> String {
        var target = Substring(uri)
        if let range = target.range(of: "://") {
            target = target[range.upperBound...]
            target = target.firstIndex(of: "/").map { target[$0...] } ?? "/"
        }
        return String(target.prefix { $0 != "?" && $0 != "#" })
    }

    /// The Host header, or HTTP/2's `:authority` pseudo-header.
    static func authority(_ request: HTTPRequest) -> String? {
        request.headers["Host"] ?? request.headers[":authority"]
    }

    /// `http://host/path?query` for HAR.
    static func url(_ exchange: HTTPExchange) -> String {
        guard let request = exchange.request else { return "http://\(exchange.server)/" }
        if request.uri.contains("://") { return request.uri }
        if request.method == "CONNECT" { return "https://\(request.uri)/" }
        let host = authority(request).flatMap { $0.isEmpty ? nil : $0 } ?? exchange.server.description
        let scheme = request.headers[":scheme"].flatMap { $0 == "https" ? $0 : nil } ?? "http"
        return "\(scheme)://\(host)\(request.uri.hasPrefix("/") ? request.uri : "/" + request.uri)"
    }

    /// `h3 #4`, or for a server push `h3 push 0 #15 on #4` (the push stream and the request stream that promised it).
    public static func http3Label(_ http3: HTTP3StreamFacts) -> String {
        guard let pushID = http3.pushID else { return "h3 #\(http3.streamID.map(String.init) ?? "?")" }
        return "h3 push \(pushID)" + (http3.streamID.map { " #\($0)" } ?? "") + (http3.promisedOn.map { " on #\($0)" } ?? "")
    }

    /// `gRPC Inventory/Lookup OK 1→1 msgs`, with the status message when there is one.
    public static func grpcSummary(_ grpc: GRPCCallFacts) -> String {
        var out = "gRPC \(grpc.service)/\(grpc.method) "
        out += grpc.status.map { GRPCCallFacts.statusName($0) } ?? "(no status)"
        if let message = grpc.message, !message.isEmpty { out += " " + quoted(message) }
        out += " \(grpc.requestMessageCount)→\(grpc.responseMessageCount) msg"
        return out + (grpc.responseMessageCount == 1 && grpc.requestMessageCount == 1 ? "" : "s")
    }

    /// `"text"`, made safe for a terminal.
    static func quoted(_ text: String) -> String {
        "\"" + BodyPresentation.terminalSafe(text.replacingOccurrences(of: "\n", with: "\\n")) + "\""
    }

    /// `00 01 02 …` for the first `count` bytes.
    static func hexSummary(_ bytes: [UInt8], count: Int) -> String {
        let shown = bytes.prefix(count).map { String(format: "%02x", $0) }.joined(separator: " ")
        return bytes.count > count ? shown + " …" : shown
    }

    /// A connection's bytes that made no exchange: `12 bytes not parsed as HTTP (12 from the client, 0 from the
    /// server)`.
    public static func notParsedAsHTTP(clientBytes: Int, serverBytes: Int) -> String {
        let total = clientBytes + serverBytes
        return "\(total) byte\(total == 1 ? "" : "s") not parsed as HTTP (\(clientBytes) from the client, "
            + "\(serverBytes) from the server)"
    }

    /// `v1`, `v2`, `draft-29`, or the number in hex.
    public static func quicVersion(_ version: UInt32) -> String {
        switch version {
        case 0x0000_0001: return "v1"
        case 0x6b33_43cf: return "v2"
        case 0: return "version negotiation"
        case 0xff00_001d: return "draft-29"
        // RFC 9000 section 15: versions of this pattern are reserved, sent to make a server negotiate.
        case let reserved where reserved & 0x0f0f_0f0f == 0x0a0a_0a0a:
            return String(format: "version 0x%08x (reserved, to force version negotiation)", version)
        default: return String(format: "version 0x%08x", version)
        }
    }

    /// Why a QUIC connection in a version not read shows nothing but its line.
    public static let quicUnknownVersionProblem = "a QUIC version TapKit does not read: nothing decoded"

    /// `312 B`, `4.1 KB`, `12.0 MB` (powers of 1000, as browsers show transfer sizes).
    public static func size(_ bytes: Int) -> String {
        var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
        out.append(size: bytes)
        return out.text
    }

    /// `183 ms`, `3.4 ms`, `12.3 s`.
    public static func duration(_ seconds: Double) -> String {
        var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
        out.append(duration: seconds)
        return out.text
    }

    /// `14:02:03.123` in local time (or UTC).
    public static func timeOfDay(_ time: Timestamp, utc: Bool) -> String {
        var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
        var cache = TimeOfDayCache()
        out.append(timeOfDay: time, utc: utc, cache: &cache)
        return out.text
    }

    /// `2026-11-21T14:02:03.123Z` for HAR.
    static func iso8601(_ time: Timestamp) -> String {
        var seconds = time_t(time.seconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int(time.nanoseconds) / 1_000_000)
    }
}
