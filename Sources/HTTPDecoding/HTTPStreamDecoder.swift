import FlowReassembly
import PacketDecoding

/// Turns reassembled TCP streams into paired HTTP/1.x exchanges. Plug it into reassembly as its
/// `StreamConsumer`; every exchange is handed to `onEvent` as soon as its response completes, requests that never
/// got a response when their connection closes (or at `flush`).
public struct HTTPStreamDecoder: StreamConsumer {
    public let limits: HTTPDecoderLimits
    private var connections: [ConnectionID: HTTPConnection] = [:]
    private let sink: EventSink

    public init(limits: HTTPDecoderLimits = HTTPDecoderLimits(), onEvent: @escaping (HTTPEvent) -> Void) {
        self.limits = limits
        sink = EventSink(onEvent)
    }

    /// Connections currently tracked.
    public var openConnections: Int { connections.count }

    public mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        connections[id] = HTTPConnection(id: id, client: client, server: server, limits: limits, sink: sink)
    }

    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp) {
        connections[id]?.parser(for: direction).consume(bytes, at: time)
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        connections[id]?.parser(for: direction).gap(length: length, at: time)
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {
        connections[id]?.parser(for: direction).end(reason: reason.describedForWarnings, at: time)
    }

    public mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        connections.removeValue(forKey: id)?.close(at: time)
    }

    public mutating func warning(_ id: ConnectionID?, _ message: String, at time: Timestamp) {
        sink.emit(.warning(connection: id, message: message, time: time))
    }

    /// Ends every open connection as if the capture ended now: reports bodies in progress as cut short and
    /// requests still waiting without a response. Call at the end of a file or when a live capture stops, if
    /// reassembly has not already closed everything.
    public mutating func flush(at time: Timestamp) {
        let open = connections.values.sorted { $0.id.rawValue < $1.id.rawValue }
        connections.removeAll()
        for connection in open {
            connection.requestParser.end(reason: StreamEndReason.captureEnded.describedForWarnings, at: time)
            connection.responseParser.end(reason: StreamEndReason.captureEnded.describedForWarnings, at: time)
            connection.close(at: time)
        }
    }
}

/// Boxes the callback so connections can share it without copying the decoder.
final class EventSink {
    let emit: (HTTPEvent) -> Void
    init(_ emit: @escaping (HTTPEvent) -> Void) { self.emit = emit }
}

extension StreamEndReason {
    var describedForWarnings: StreamEndReasonText {
        switch self {
        case .fin: return StreamEndReasonText(text: "closed", isOrderly: true)
        case .reset: return StreamEndReasonText(text: "was reset", isOrderly: false)
        case .idleTimeout: return StreamEndReasonText(text: "went idle past the timeout", isOrderly: false)
        case .evicted: return StreamEndReasonText(text: "was dropped to stay within memory limits", isOrderly: false)
        case .captureEnded: return StreamEndReasonText(text: "was still open when the capture ended", isOrderly: false)
        }
    }
}

/// One TCP connection: a parser per direction and the FIFO of requests waiting for their responses.
final class HTTPConnection: MessageParserDelegate {
    let id: ConnectionID
    let client: Endpoint
    let server: Endpoint
    private let limits: HTTPDecoderLimits
    private let sink: EventSink
    let requestParser: HTTPMessageParser
    let responseParser: HTTPMessageParser

    /// Requests in order, the first one being answered next. The last may still be arriving.
    private var waiting: [MessageInProgress] = []
    /// Headers of the trailer section per message, appended after the body in wire order.
    private var trailers: [ObjectIdentifier: [(name: String, value: String)]] = [:]
    /// 1xx responses received for the request at the head of the queue.
    private var interim: [HTTPInterimResponse] = []
    /// The request the response in progress answers (taken when its head arrives).
    private var answering: MessageInProgress?
    private var answeringWithoutRequest = false
    private var upgrade: String?
    private var noticed = false

    init(id: ConnectionID, client: Endpoint, server: Endpoint, limits: HTTPDecoderLimits, sink: EventSink) {
        self.id = id
        self.client = client
        self.server = server
        self.limits = limits
        self.sink = sink
        requestParser = HTTPMessageParser(role: .request, limits: limits, sniffFirst: true)
        responseParser = HTTPMessageParser(role: .response, limits: limits, sniffFirst: false)
        requestParser.delegate = self
        responseParser.delegate = self
    }

    func parser(for direction: StreamDirection) -> HTTPMessageParser {
        direction == .clientToServer ? requestParser : responseParser
    }

    // MARK: MessageParserDelegate

    func parser(_ parser: HTTPMessageParser, sniffFirstBytes bytes: ArraySlice<UInt8>, at time: Timestamp) -> Bool? {
        guard let isTLS = TLSClientHello.looksLikeTLS(bytes) else { return nil }
        guard isTLS else { return false }
        switch TLSClientHello.parse(Array(bytes)) {
        case .needMore:
            return nil
        case .notTLS:
            return false
        case .clientHello(let hello):
            notice(.tls(serverName: hello.serverName, alpn: hello.alpn), at: time)
            responseParser.becomeOpaque()
            return true
        }
    }

    func parser(_ parser: HTTPMessageParser, didParse head: ParsedHead, headSize: Int,
                at time: Timestamp) -> (MessageInProgress, BodyFraming)? {
        let warnings = parser.pendingWarnings
        parser.pendingWarnings = []
        let message = MessageInProgress(head: head, headSize: headSize, start: time, warnings: warnings, limits: limits)
        let headers = head.headers
        let chunked = headers.tokens("Transfer-Encoding").last == "chunked"
        let lengthFields = headers.values("Content-Length")
        let lengthValues: [String]
        if lengthFields.count == 1, let only = lengthFields.first, !only.isEmpty,
           only.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            lengthValues = lengthFields  // one plain number: what splitting and trimming would give, without copies
        } else {
            lengthValues = lengthFields.flatMap { $0.split(separator: ",") }.map { $0.trimmingASCIIWhitespace() }
        }
        let declaredLength: Int? = {
            guard let first = lengthValues.first, lengthValues.allSatisfy({ $0 == first }) else { return nil }
            return Int(first).flatMap { $0 >= 0 ? $0 : nil }
        }()
        if !chunked && !lengthValues.isEmpty && declaredLength == nil {
            message.warnings.append("invalid Content-Length \"\(lengthValues.joined(separator: ", "))\"")
            message.complete = false
        }

        switch head.startLine {
        case .request(let method, _, let version):
            if method == "PRI" && version == "HTTP/2.0" && waiting.isEmpty && parser.messagesParsed == 0 {
                notice(.http2Preface, at: time)
                responseParser.becomeOpaque()
                return nil
            }
            if waiting.count >= limits.maxPendingRequests {
                let oldest = waiting.removeFirst()
                oldest.warnings.append("more than \(limits.maxPendingRequests) requests waiting on this connection; reported without a response")
                emit(request: oldest, response: nil)
            }
            waiting.append(message)
            if chunked { return (message, .chunked) }
            return (message, .length(declaredLength ?? 0))

        case .response(_, let status, _):
            let request: MessageInProgress? = answering ?? waiting.first
            if answering == nil, !waiting.isEmpty { answering = waiting.removeFirst() }
            answeringWithoutRequest = request == nil
            if request == nil {
                message.warnings.append("response without a captured request")
            }
            let method = request?.method ?? "GET"
            if (100...199).contains(status) || status == 204 || status == 304 || method == "HEAD" {
                return (message, .none)
            }
            if method == "CONNECT" && (200...299).contains(status) { return (message, .none) }
            if chunked { return (message, .chunked) }
            if let declaredLength { return (message, .length(declaredLength)) }
            return (message, .untilClose)
        }
    }

    func parser(_ parser: HTTPMessageParser, didFinish message: MessageInProgress, at time: Timestamp) -> AfterMessage {
        if !parser.trailers.isEmpty { trailers[ObjectIdentifier(message)] = parser.trailers }
        switch message.head.startLine {
        case .request(let method, _, _):
            let headers = message.head.headers
            let wantsUpgrade = headers["Upgrade"] != nil && headers.tokens("Connection").contains("upgrade")
            // Wait for the response before reading on: after an accepted upgrade or tunnel the bytes are not HTTP.
            if method == "CONNECT" || wantsUpgrade {
                if upgrade != nil { return .opaque }
                return answering === message || waiting.contains(where: { $0 === message }) ? .hold : .next
            }
            return .next

        case .response(_, let status, let reason):
            if (100...199).contains(status) && status != 101 {
                interim.append(HTTPInterimResponse(status: status, reason: reason, headers: message.head.headers,
                                                   time: message.start))
                return .next
            }
            let request = answering
            answering = nil
            let method = request?.method
            if status == 101 || (method == "CONNECT" && (200...299).contains(status)) {
                upgrade = status == 101 ? (message.head.headers["Upgrade"]?.lowercased() ?? "unknown") : "tunnel"
                emit(request: request, response: message)
                requestParser.becomeOpaque()
                return .opaque
            }
            emit(request: request, response: message)
            // A refused upgrade: the client's held bytes are HTTP after all.
            if case .holding = requestParser.phase { requestParser.releaseHeld(at: time) }
            return .next
        }
    }

    func parser(_ parser: HTTPMessageParser, problem: String, at time: Timestamp) {
        // Trouble before any HTTP was seen means this is probably not HTTP: say nothing.
        guard parser.messagesParsed > 0 || !waiting.isEmpty else { return }
        parser.pendingWarnings.append(problem)
    }

    // MARK: Emitting

    func close(at time: Timestamp) {
        // Trouble noticed in the response stream belongs to the first request left unanswered.
        if let first = answering ?? waiting.first {
            first.warnings += responseParser.pendingWarnings
            responseParser.pendingWarnings = []
        }
        if let answering {
            self.answering = nil
            answering.warnings.append("no response before the connection ended")
            emit(request: answering, response: nil)
        }
        for request in waiting {
            request.warnings.append("no response before the connection ended")
            emit(request: request, response: nil)
        }
        waiting.removeAll()
    }

    private func notice(_ kind: ConnectionNotice.Kind, at time: Timestamp) {
        guard !noticed else { return }
        noticed = true
        sink.emit(.notice(ConnectionNotice(connection: id, client: client, server: server, kind: kind, time: time)))
    }

    private func emit(request: MessageInProgress?, response: MessageInProgress?) {
        var warnings: [String] = []
        var complete = request != nil && response != nil
        var httpRequest: HTTPRequest?
        if let request, case .request(let method, let uri, let version) = request.head.startLine {
            if !request.finished {
                request.warnings.append("response arrived before the request body was complete")
                request.complete = false
            }
            let body = request.finishedBody()
            warnings += request.warnings
            complete = complete && request.complete
            var headers = request.head.headers
            if !trailers.isEmpty { headers.fields += trailers.removeValue(forKey: ObjectIdentifier(request)) ?? [] }
            httpRequest = HTTPRequest(method: method, uri: uri, version: version, headers: headers, body: body,
                                      headSize: request.headSize, start: request.start, end: request.end)
        }
        var httpResponse: HTTPResponse?
        if let response, case .response(let version, let status, let reason) = response.head.startLine {
            let body = response.finishedBody()
            warnings += response.warnings
            complete = complete && response.complete
            var headers = response.head.headers
            if !trailers.isEmpty { headers.fields += trailers.removeValue(forKey: ObjectIdentifier(response)) ?? [] }
            httpResponse = HTTPResponse(status: status, reason: reason, version: version, headers: headers, body: body,
                                        headSize: response.headSize, interim: interim, start: response.start,
                                        end: response.end)
            interim = []
        }
        sink.emit(.exchange(HTTPExchange(connection: id, client: client, server: server, request: httpRequest,
                                         response: httpResponse, complete: complete, warnings: warnings,
                                         upgrade: httpResponse == nil ? nil : upgrade)))
    }
}
