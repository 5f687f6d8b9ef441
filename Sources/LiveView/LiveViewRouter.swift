import Foundation
import Reports
import SystemSupport

/// Answers one request: the guard first (Host, Origin, token), then the page's files and the API
/// (docs/liveview.md). A value in, a value out, no I/O: the NIO handler does the talking, and the fuzz target
/// calls this directly.
public struct LiveViewRouter: Sendable {
    public let requestGuard: RequestGuard
    public let store: RecordStore
    public let source: LiveViewSource
    public let started: Date
    public let conditioner: ConditionerPanel
    /// Set once the source has been read to its end (a file, a command that ended).
    let ended: @Sendable () -> Bool

    public init(requestGuard: RequestGuard, store: RecordStore, source: LiveViewSource, started: Date,
                conditioner: ConditionerPanel, ended: @escaping @Sendable () -> Bool = { false }) {
        self.requestGuard = requestGuard
        self.store = store
        self.source = source
        self.started = started
        self.conditioner = conditioner
        self.ended = ended
    }

    public func respond(to request: LiveRequest) -> LiveResponse {
        if let refusal = requestGuard.refusal(request) { return .error(403, refusal.description) }
        let path = request.path
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        switch (request.method, path) {
        case ("GET", "/"), ("GET", "/index.html"):
            var response = LiveResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
                                        body: PageFiles.files["index.html"] ?? [])
            // The token from the printed URL becomes a cookie, so downloads and links carry it without the URL.
            if let token = request.queryValue("token"), requestGuard.token.matches(token) {
                response.headers.append(("Set-Cookie", "\(RequestGuard.cookieName)=\(token); HttpOnly; SameSite=Strict; Path=/"))
            }
            return response
        case ("GET", _) where parts.count == 3 && parts[1] == "page":
            guard let file = PageFiles.file(parts[2]) else { return .error(404, "no page file \(parts[2])") }
            return LiveResponse(status: 200, headers: [("Content-Type", file.type)], body: file.bytes)
        case ("GET", "/api/info"):
            return .json(info())
        case ("GET", "/api/exchanges"):
            let since = request.queryValue("since") ?? "0"
            guard let first = Int(since), first >= 0 else {
                return .error(400, "since must be an exchange id (a whole number of 0 or more), not \"\(since)\"")
            }
            return .json(APIDocuments.page(store.page(since: first)))
        case ("GET", _) where parts.count == 5 && parts[1] == "api" && parts[2] == "exchanges":
            return body(id: parts[3], which: parts[4])
        case ("GET", "/api/har"):
            // `since`: only what the page shows after a Clear, as DevTools' "Save all as HAR" does.
            let since = request.queryValue("since") ?? "0"
            guard let first = Int(since), first >= 0 else {
                return .error(400, "since must be an exchange id (a whole number of 0 or more), not \"\(since)\"")
            }
            return .download(HARWriter.document(store.exchanges(since: first).lazy.map(\.exchange), creatorVersion: TapKitVersion.current), filename: "capture.har",
                             type: "application/json; charset=utf-8")
        case ("GET", "/api/throughput"):
            return .json(APIDocuments.throughput(store.throughput))
        case ("GET", "/api/conditioner"):
            return .json(conditioner.stateDocument())
        case ("POST", "/api/conditioner"):
            return conditioner.respond(toSwitch: request.body)
        case (_, "/api/live"):
            return .error(400, "/api/live is a WebSocket: connect with an Upgrade: websocket request")
        case (let method, _) where method != "GET":
            return .error(405, "\(method) is not served here (GET, and POST to /api/conditioner)")
        default:
            return .error(404, "nothing at \(path)")
        }
    }

    private func body(id text: Substring, which: Substring) -> LiveResponse {
        guard which == "request-body" || which == "response-body" else {
            return .error(404, "ask for request-body or response-body, not \(which)")
        }
        guard let id = Int(text), let stored = store.exchange(id: id) else {
            return .error(404, "no exchange \(text) (dropped, or not captured yet)")
        }
        let isRequest = which == "request-body"
        let kept = isRequest ? stored.requestBody : stored.responseBody
        let bytes = (isRequest ? stored.exchange.request?.body.kept : stored.exchange.response?.body.kept) ?? []
        if bytes.isEmpty && kept.size > 0 || kept.loss == .noMessage {
            return .error(404, "body of exchange \(id) not kept: \(kept.loss?.description ?? "empty")")
        }
        var response = LiveResponse.download(bytes, filename: "exchange-\(id)-\(which)")
        if let loss = kept.loss { response.headers.append(("X-TapKit-Body-Partial", loss.description)) }
        return response
    }

    private func info() -> [UInt8] {
        var json = TextOutput.memory()
        json.append("{"); json.key("source"); json.append("\""); json.append(source.kind); json.append("\"")
        json.append(","); json.key("name"); json.string(source.name)
        json.append(","); json.key("started"); json.seconds(started.timeIntervalSince1970)
        json.append(","); json.key("ended"); json.bool(ended())
        json.append(","); json.key("bodyLimit"); json.number(store.limits.bodyBytes)
        json.append(","); json.key("sessionLimit"); json.number(store.limits.sessionBodyBytes)
        json.append(","); json.key("exchangeLimit"); json.number(store.limits.exchanges)
        json.append(","); json.key("conditioner"); json.append(conditioner.stateDocument())
        json.append("}")
        return json.bytes
    }
}
