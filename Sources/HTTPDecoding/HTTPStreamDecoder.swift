import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding
import TLSWire

/// Turns reassembled TCP streams into paired HTTP/1.x exchanges. Plug it into reassembly as its
/// `StreamConsumer`; every exchange is handed to `onEvent` as soon as its response completes, requests that never
/// got a response when their connection closes (or at `flush`). Each connection's bytes go through its
/// `ConnectionRouter`, which hands the connection to another decoder when it leaves HTTP/1.x.
public struct HTTPStreamDecoder: StreamConsumer {
    public let limits: HTTPDecoderLimits
    private var connections: [ConnectionID: ConnectionRouter] = [:]
    private let sink: EventSink
    private let takeover: TakeoverFactory?
    /// Decoded bytes left for every body of this capture together.
    public let decodingBudget: DecodedBytesBudget

    /// `takeover`: the decoders for connections that leave HTTP/1.x (HTTP/2, WebSocket, what a tunnel carries);
    /// without it such connections get a notice or an `upgrade` mark and their bytes are not decoded. `budget`: a
    /// decoded-bytes budget to share (a decoder for what a tunnel carries shares its capture's); by default a new one.
    public init(limits: HTTPDecoderLimits = HTTPDecoderLimits(), takeover: TakeoverFactory? = nil,
                budget: DecodedBytesBudget? = nil, onEvent: @escaping (HTTPEvent) -> Void) {
        self.limits = limits
        self.takeover = takeover
        sink = EventSink(onEvent)
        decodingBudget = budget ?? DecodedBytesBudget(limit: limits.maxDecodedBytesPerCapture)
    }

    /// Connections currently tracked.
    public var openConnections: Int { connections.count }

    public mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        let context = TakeoverContext(connection: id, client: client, server: server, limits: limits,
                                      budget: decodingBudget, emit: sink.emit)
        connections[id] = ConnectionRouter(context: context, sink: sink, decoders: takeover)
    }

    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp, acknowledged: Int?) {
        connections[id]?.consume(direction, bytes, at: time, acknowledged: acknowledged)
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        connections[id]?.gap(direction, length: length, at: time)
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {
        connections[id]?.end(direction, reason: reason, at: time)
    }

    public mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        connections[id]?.negotiated(protocolName, at: time)
    }

    public mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        connections.removeValue(forKey: id)?.close(at: time)
    }

    public mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        sink.emit(.warning(connection: id, warning: AnyConnectionWarning(warning), time: time))
    }

    /// Ends every open connection as if the capture ended now: reports bodies in progress as cut short and
    /// requests still waiting without a response. Call at the end of a file or when a live capture stops, if
    /// reassembly has not already closed everything.
    public mutating func flush(at time: Timestamp) {
        let open = connections.sorted { $0.key.rawValue < $1.key.rawValue }
        connections.removeAll()
        for (_, connection) in open {
            connection.end(.clientToServer, reason: .captureEnded, at: time)
            connection.end(.serverToClient, reason: .captureEnded, at: time)
            connection.close(at: time)
        }
    }
}

/// Boxes the callback so connections can share it without copying the decoder.
final class EventSink {
    let emit: (HTTPEvent) -> Void
    init(_ emit: @escaping (HTTPEvent) -> Void) { self.emit = emit }
}

/// One TCP connection read as HTTP/1.x: a parser per direction and the FIFO of requests waiting for their
/// responses. When the connection leaves HTTP/1.x (an accepted upgrade or CONNECT, the HTTP/2 preface) it stops
/// reading and returns a `Handover`; its `ConnectionRouter` gives the rest to the next layer.
final class HTTPConnection: MessageParserDelegate, ConnectionHandler {
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
    /// Each direction's offset so far (bytes and gaps), and the end of the response bytes actually seen.
    private var requestOffset = 0, responseOffset = 0, responseSeenEnd = 0
    /// After gaps, the ACK numbers say which queued request the next response answers (`GapPairing`).
    private var responseGap: ResponseGap?
    private var requestGapSeen = false
    /// The client sent a request before the previous one's response had arrived (it pipelines).
    private var clientPipelines = false
    /// 1xx responses past `maxInterimResponses` for the current request, counted for one warning.
    private var droppedInterim = 0
    private var upgrade: String?
    private let budget: DecodedBytesBudget?
    /// What a parser found that ends HTTP/1.x here, returned from the call that found it.
    private var found: NextLayer?
    /// A refusal read by the response parser, acted on once its call returns: the client's held bytes are
    /// released (read as HTTP, or after a refused CONNECT perhaps the bytes it meant to tunnel).
    private var refusal: Refusal?
    /// After a refused CONNECT, the client's bytes that are not HTTP: counted, and summarised at the close.
    private var refusedTunnel: TunnelSession?
    /// The Upgrade or CONNECT request whose answer the client's held bytes wait for: only its refusal releases them
    /// (a response to a request pipelined before it does not).
    private var holdingFor: MessageInProgress?

    private enum Refusal {
        case upgrade
        case tunnel(code: String, reason: String)
    }

    init(id: ConnectionID, client: Endpoint, server: Endpoint, limits: HTTPDecoderLimits, sink: EventSink,
         budget: DecodedBytesBudget? = nil) {
        self.budget = budget
        self.id = id
        self.client = client
        self.server = server
        self.limits = limits
        self.sink = sink
        requestParser = HTTPMessageParser(role: .request, limits: limits, buffers: budget?.headBuffers)
        responseParser = HTTPMessageParser(role: .response, limits: limits, buffers: budget?.headBuffers)
        requestParser.delegate = self
        responseParser.delegate = self
    }

    func parser(for direction: StreamDirection) -> HTTPMessageParser {
        direction == .clientToServer ? requestParser : responseParser
    }

    /// Whether any message was read either way (a protocol negotiated out of band applies only before that).
    var hasParsedMessages: Bool { requestParser.messagesParsed > 0 || responseParser.messagesParsed > 0 }

    // MARK: ConnectionHandler

    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
        consume(direction, bytes, at: time, acknowledged: nil)
    }

    /// Bytes of one direction; `acknowledged` is how far into the other direction their segment acknowledged.
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp,
                 acknowledged: Int?) -> Handover? {
        if direction == .clientToServer, let refusedTunnel { return refusedTunnel.consume(direction, bytes, at: time) }
        let parser = parser(for: direction)
        let offset = direction == .clientToServer ? requestOffset : responseOffset
        // Every byte of the call counts towards the direction's offset, also those left to the next layer.
        defer {
            if direction == .clientToServer {
                requestOffset += bytes.count
            } else {
                responseOffset += bytes.count
                responseSeenEnd = responseOffset
            }
        }
        if parser.gaveUp {
            parser.noteUnparsed(bytes.count, at: time)
            return nil
        }
        var read = 0
        // The parser returns early when it found something the connection must act on before it reads on.
        while read < bytes.count && found == nil {
            read += parser.consume(UnsafeRawBufferPointer(rebasing: bytes[read...]), at: time, offset: offset + read,
                                   acknowledged: acknowledged)
            if found != nil { break }
            settle(at: time)
            if parser.isOpaque {
                // Not HTTP from here on: after a refused CONNECT the client's bytes are counted, else dropped.
                if direction == .clientToServer, let refusedTunnel, read < bytes.count {
                    _ = refusedTunnel.consume(direction, UnsafeRawBufferPointer(rebasing: bytes[read...]), at: time)
                } else if parser.gaveUp {
                    parser.noteUnparsed(bytes.count - read, at: time)
                }
                return nil
            }
        }
        return handover(consumed: read)
    }

    /// Bytes of one direction never seen. One past the end of a message is remembered for pairing: it may have
    /// held whole requests or responses.
    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
        if direction == .clientToServer, let refusedTunnel { return refusedTunnel.gap(direction, length: length, at: time) }
        let parser = parser(for: direction)
        if case .pastMessageEnd(let toEnd, let lostWhole) = parser.place(ofGap: length) {
            if direction == .clientToServer {
                requestGapSeen = true
            } else if responseGap == nil {
                responseGap = ResponseGap(start: responseOffset + (toEnd ?? 0), length: length,
                                          lostWholeMessages: lostWhole)
            }
        }
        parser.gap(length: length, at: time)
        if direction == .clientToServer { requestOffset += length } else { responseOffset += length }
        settle(at: time)
        // The gap decided that the client's bytes after a refused CONNECT are not HTTP: it is the tunnel's.
        if direction == .clientToServer, let refusedTunnel { _ = refusedTunnel.gap(direction, length: length, at: time) }
        return handover(consumed: 0)
    }

    /// The direction ended: its parser finishes (a body delimited by the close is complete), and so does what a
    /// refused tunnel carried.
    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
        parser(for: direction).end(reason: reason, at: time)
        settle(at: time)
        if direction == .clientToServer, let refusedTunnel { _ = refusedTunnel.end(direction, reason: reason, at: time) }
        return handover(consumed: 0)
    }

    /// What a parser found that the connection acts on now that the parser's call has returned: a refusal releases
    /// the client's held bytes; bytes after a refused CONNECT that are not HTTP go to a tunnel of their own.
    private func settle(at time: Timestamp) {
        guard refusal != nil || requestParser.hasNotHTTP else { return }  // nearly always: nothing to act on
        switch refusal {
        case .upgrade?:
            refusal = nil
            requestParser.releaseHeld(at: time)
        case .tunnel(let code, let reason)?:
            refusal = nil
            refusedWith = (code, reason)
            requestParser.releaseHeldAfterRefusedTunnel(at: time)
        case nil:
            break
        }
        if let notHTTP = requestParser.takeNotHTTP(), refusedTunnel == nil {
            let context = TakeoverContext(connection: id, client: client, server: server, limits: limits, budget: budget,
                                          emit: sink.emit)
            let tunnel = TunnelSession(context: context, kind: "tunnel", refused: refusedWith)
            refusedTunnel = tunnel
            notHTTP.withUnsafeBytes { _ = tunnel.consume(.clientToServer, $0, at: time) }
        }
    }

    /// The status and reason of the last refused CONNECT, for the summary of what the client sent after it.
    private var refusedWith: (code: String, reason: String)?

    /// The finding of the call that just returned, with the client's held bytes, for the router.
    private func handover(consumed: Int) -> Handover? {
        guard let next = found else { return nil }
        found = nil
        let held = requestParser.takeHeld()
        return Handover(next: next, consumed: consumed, held: held.bytes, heldGap: held.gap)
    }

    // MARK: MessageParserDelegate

    func parser(_ parser: HTTPMessageParser, didParse head: ParsedHead, headSize: Int, warnings: [HTTPWarning],
                at time: Timestamp) -> (MessageInProgress, BodyFraming)? {
        var warnings = warnings
        var answersNone = false
        if case .response = head.startLine, answering == nil, responseGap != nil || requestGapSeen {
            answersNone = !settlePairingAfterGap(responseStart: parser.headOffset,
                                                 acknowledged: parser.headAcknowledged, warnings: &warnings)
        }
        // A response never starts before the request it answers, whatever the capture's clock did.
        var start = time
        if case .response = head.startLine, !answersNone, let request = answering ?? waiting.first,
           request.start > start {
            start = request.start
        }
        let message = MessageInProgress(head: head, headSize: headSize, start: start, warnings: warnings.isEmpty ? head.anomalies : warnings + head.anomalies,
                                        limits: limits, budget: budget)
        message.streamOffset = parser.headOffset
        message.acknowledged = parser.headAcknowledged
        let headers = head.headers
        let transferCodings = headers.tokens("Transfer-Encoding")
        let chunked = transferCodings.last == "chunked"
        // One plain number, as nearly every message has: read in place. Anything else is split, trimmed and checked.
        let hasLength: Bool
        let declaredLength: Int?
        if let plain = headers.plainDecimalValue("Content-Length") {
            hasLength = true
            declaredLength = plain
        } else {
            let lengthValues = headers.values("Content-Length").flatMap { $0.split(separator: ",") }
                .map { $0.trimmingASCIIWhitespace() }
            declaredLength = {
                guard let first = lengthValues.first, lengthValues.allSatisfy({ $0 == first }),
                      !first.isEmpty, first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                return Int(first)  // nil when it overflows
            }()
            message.warnings += Self.lengthAnomalies(lengthValues, declared: declaredLength)
            hasLength = !lengthValues.isEmpty
        }
        if !transferCodings.isEmpty && hasLength {
            message.warnings.append(.transferEncodingWithContentLength)
        } else if !transferCodings.isEmpty && !chunked, case .request = head.startLine {
            message.warnings.append(.transferEncodingNotEndingInChunked(transferCodings))
        }
        if !chunked && hasLength && declaredLength == nil {
            message.complete = false
        }

        switch head.startLine {
        case .request(let method, _, let version):
            if method == "PRI" && version == "HTTP/2.0" && waiting.isEmpty && parser.messagesParsed == 0 {
                found = .http2Preface
                return nil
            }
            if !clientPipelines, answering != nil || !waiting.isEmpty, let seen = message.acknowledged,
               seen <= responseSeenEnd {
                // Sent with an earlier request still unanswered, before anything past the responses seen so far.
                clientPipelines = true
            }
            if waiting.count >= limits.maxPendingRequests {
                let oldest = waiting.removeFirst()
                oldest.warnings.append(.tooManyPendingRequests(limit: limits.maxPendingRequests))
                emit(request: oldest, response: nil)
            }
            if !chunked, hasLength ? declaredLength == 0 : true,
               headers.tokens("Expect").contains("100-continue") {
                message.warnings.append(.continueExpectedWithoutContent)
            }
            waiting.append(message)
            if chunked { return (message, .chunked) }
            return (message, .length(declaredLength ?? 0))

        case .response(_, let status, _, _):
            let request: MessageInProgress? = answersNone ? nil : answering ?? waiting.first
            if answering == nil, !answersNone, !waiting.isEmpty { answering = waiting.removeFirst() }
            answeringWithoutRequest = request == nil
            if answersNone {
                message.warnings.append(.responseToLostRequest)
            } else if request == nil {
                message.warnings.append(.responseWithoutRequest)
            }
            let method = request?.method ?? "GET"
            // Without a numeric status (`2XX`, HTTP/0.9) the response is framed as a final one with a body.
            if let status, (100...199).contains(status) || status == 204 || status == 304 { return (message, .none) }
            if method == "HEAD" { return (message, .none) }
            if method == "CONNECT", let status, (200...299).contains(status) { return (message, .none) }
            if chunked { return (message, .chunked) }
            if let declaredLength { return (message, .length(declaredLength)) }
            return (message, .untilClose)
        }
    }

    /// A response head after a gap in either direction: reports the queued requests whose responses the gap
    /// swallowed (`GapPairing` reads the ACK numbers), with `warnings` (the parser's note about the gap, which
    /// explains them rather than this response). Returns false when the response answers none of the queued
    /// requests (its own was lost).
    private func settlePairingAfterGap(responseStart: Int, acknowledged: Int?, warnings: inout [HTTPWarning]) -> Bool {
        let gap = responseGap
        responseGap = nil
        let answer = GapPairing.answer(
            queued: waiting.count, start: { waiting[$0].streamOffset }, acknowledged: { waiting[$0].acknowledged },
            responseStart: responseStart, responseAcknowledged: acknowledged, gap: gap,
            requestGapSeen: requestGapSeen, clientPipelines: clientPipelines)
        guard case .request(let lost) = answer else { return waiting.isEmpty }
        guard lost > 0, let gap else { return true }
        for index in 0..<lost {
            let request = waiting.removeFirst()
            if index == 0 { request.warnings += warnings }
            request.warnings.append(.responseLostInGap(length: gap.length))
            emit(request: request, response: nil)
        }
        warnings = []
        return true
    }

    /// Content-Length oddities, each named: several fields, leading zeros, signs, overflow, conflicts.
    static func lengthAnomalies(_ values: [String], declared: Int?) -> [HTTPWarning] {
        guard !values.isEmpty else { return [] }
        var notes: [HTTPWarning] = []
        if values.count > 1 && declared != nil { notes.append(.duplicateContentLength(values)) }
        if declared == nil {
            if Set(values).count > 1 {
                notes.append(.conflictingContentLength(values))
            } else if let only = values.first, only.hasPrefix("-") {
                notes.append(.negativeContentLength(only))
            } else if let only = values.first, !only.isEmpty, only.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                notes.append(.contentLengthTooLarge(only))
            } else {
                notes.append(.invalidContentLength(values))
            }
        } else if let only = values.first, only.count > 1, only.hasPrefix("0") {
            notes.append(.contentLengthWithLeadingZeros(only))
        }
        return notes
    }

    func parserExpectsHTTP09Response(_ parser: HTTPMessageParser) -> Bool {
        guard let request = answering ?? waiting.first else { return false }
        return request.head.isHTTP09
    }

    func parser(_ parser: HTTPMessageParser, didFinish message: MessageInProgress, at time: Timestamp) -> AfterMessage {
        if !parser.trailers.isEmpty { trailers[ObjectIdentifier(message)] = parser.trailers }
        switch message.head.startLine {
        case .request(let method, _, _):
            let headers = message.head.headers
            let wantsUpgrade = headers["Upgrade"] != nil && headers.tokens("Connection").contains("upgrade")
            // Wait for the response before reading on: after an accepted upgrade or tunnel the bytes are not HTTP.
            if method == "CONNECT" || wantsUpgrade {
                guard answering === message || waiting.contains(where: { $0 === message }) else { return .next }
                holdingFor = message
                return .hold
            }
            return .next

        case .response(_, let status, let code, let reason):
            if let status, (100...199).contains(status) && status != 101 {
                if interim.count < limits.maxInterimResponses {
                    interim.append(HTTPInterimResponse(status: status, reason: reason, headers: message.head.headers,
                                                       time: message.start))
                } else {
                    droppedInterim += 1
                }
                return .next
            }
            let request = answering
            answering = nil
            let method = request?.method
            let acceptedTunnel = method == "CONNECT" && status.map { (200...299).contains($0) } == true
            if status == 101 || acceptedTunnel {
                // HTTP/1.x ends here: the router hands the rest of the connection on, and reports this exchange
                // or lets the next layer report it (h2c's upgrade request is HTTP/2 stream 1's).
                let kind = status == 101 ? (message.head.headers["Upgrade"]?.lowercased() ?? "unknown") : "tunnel"
                upgrade = kind
                let exchange = makeExchange(request: request, response: message)
                switch kind {
                case "tunnel": found = .tunnel(exchange)
                case "h2c": found = .h2c(exchange)
                case "websocket": found = .webSocket(exchange)
                default: found = .upgrade(exchange)
                }
                return .opaque
            }
            emit(request: request, response: message)
            guard case .holding = requestParser.phase, let request, request === holdingFor else { return .next }
            holdingFor = nil
            // A refused upgrade: the client's held bytes are HTTP after all; after a refused CONNECT, HTTP or the
            // bytes it meant to tunnel. Released once this call returns, before the next response is read.
            refusal = method == "CONNECT" ? .tunnel(code: code, reason: reason) : .upgrade
            return .nextAfterReturn
        }
    }

    func parserWarnsOfProblems(_ parser: HTTPMessageParser) -> Bool {
        // Trouble before any HTTP was seen means this is probably not HTTP: say nothing.
        parser.messagesParsed > 0 || !waiting.isEmpty
    }

    // MARK: Emitting

    func close(at time: Timestamp) {
        if let refusedTunnel {
            self.refusedTunnel = nil
            refusedTunnel.close(at: time)
        }
        // Trouble noticed in the response stream belongs to the first request left unanswered, and so do the
        // server's bytes that made no response (`<html>hi</html>` without a status line, after a cut request line).
        if let first = answering ?? waiting.first {
            first.warnings += responseParser.pendingWarnings
            responseParser.pendingWarnings = []
            if responseParser.unparsedBytes > 0 {
                first.warnings.append(.bytesNotParsed(.response, bytes: responseParser.unparsedBytes))
                responseParser.unparsedBytesReported()
            }
        }
        if let answering {
            self.answering = nil
            answering.warnings.append(.noResponseBeforeEnd)
            emit(request: answering, response: nil)
        }
        for request in waiting {
            request.warnings.append(.noResponseBeforeEnd)
            emit(request: request, response: nil)
        }
        waiting.removeAll()
        noticeUnparsedBytes()
    }

    /// Bytes either way that made no exchange and were not counted on one: one notice for the connection, so
    /// nothing that reached the decoder goes unmentioned.
    private func noticeUnparsedBytes() {
        let clientBytes = requestParser.unparsedBytes, serverBytes = responseParser.unparsedBytes
        guard clientBytes > 0 || serverBytes > 0 else { return }
        let times = [requestParser.firstUnparsed, responseParser.firstUnparsed].compactMap { $0 }
        guard let time = times.min() else { return }
        requestParser.unparsedBytesReported()
        responseParser.unparsedBytesReported()
        sink.emit(.notice(ConnectionNotice(connection: id, client: client, server: server,
                                           kind: .notParsedAsHTTP(clientBytes: clientBytes, serverBytes: serverBytes),
                                           time: time)))
    }

    /// At most `maxWarningsPerMessage` warnings per message side, plus one that counts the rest.
    private func capped(_ warnings: [HTTPWarning]) -> [HTTPWarning] {
        let limit = max(1, limits.maxWarningsPerMessage) * 2
        guard warnings.count > limit else { return warnings }
        return Array(warnings.prefix(limit - 1))
            + [.moreWarningsNotShown(warnings.count - limit + 1)]
    }

    private func emit(request: MessageInProgress?, response: MessageInProgress?) {
        sink.emit(.exchange(makeExchange(request: request, response: response)))
    }

    private func makeExchange(request: MessageInProgress?, response: MessageInProgress?) -> HTTPExchange {
        var warnings: [HTTPWarning] = []
        var complete = request != nil && response != nil
        var httpRequest: HTTPRequest?
        if let request, case .request(let method, let uri, let version) = request.head.startLine {
            if !request.finished {
                request.warnings.append(.responseBeforeRequestBodyComplete)
                request.complete = false
            }
            let body = request.finishedBody()
            warnings += request.warnings
            complete = complete && request.complete
            var headers = request.head.headers
            if !trailers.isEmpty { headers.append(contentsOf: trailers.removeValue(forKey: ObjectIdentifier(request)) ?? []) }
            httpRequest = HTTPRequest(method: method, uri: uri, version: version, headers: headers, body: body,
                                      headSize: request.headSize, start: request.start, end: request.end)
        }
        var httpResponse: HTTPResponse?
        if let response, case .response(let version, let status, let code, let reason) = response.head.startLine {
            let body = response.finishedBody()
            warnings += response.warnings
            complete = complete && response.complete
            var headers = response.head.headers
            if !trailers.isEmpty { headers.append(contentsOf: trailers.removeValue(forKey: ObjectIdentifier(response)) ?? []) }
            if droppedInterim > 0 {
                warnings.append(.interimResponsesDropped(total: interim.count + droppedInterim,
                                                         kept: limits.maxInterimResponses))
            }
            httpResponse = HTTPResponse(status: status, statusText: code, reason: reason, version: version,
                                        headers: headers, body: body,
                                        headSize: response.headSize, interim: interim, start: response.start,
                                        end: response.end)
            interim = []
            droppedInterim = 0
        }
        warnings = capped(warnings)
        return HTTPExchange(connection: id, client: client, server: server, request: httpRequest,
                            response: httpResponse, complete: complete, warnings: warnings,
                            upgrade: httpResponse == nil ? nil : upgrade)
    }
}
