import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding
import TLSWire

/// Turns reassembled TCP streams into paired HTTP/1.x exchanges. Plug it into reassembly as its
/// `StreamConsumer`; every exchange is handed to `onEvent` as soon as its response completes, requests that never
/// got a response when their connection closes (or at `flush`).
public struct HTTPStreamDecoder: StreamConsumer {
    public let limits: HTTPDecoderLimits
    private var connections: [ConnectionID: HTTPConnection] = [:]
    private let sink: EventSink
    private let takeover: TakeoverFactory?
    /// Decoded bytes left for every body of this capture together.
    public let decodingBudget: DecodedBytesBudget

    /// `takeover`: the decoder for connections that leave HTTP/1.x (HTTP/2, WebSocket); without it such
    /// connections get a notice or an `upgrade` mark and their bytes are not decoded. `budget`: a decoded-bytes
    /// budget to share (a decoder for what a tunnel carries shares its capture's); by default a new one.
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
        connections[id] = HTTPConnection(id: id, client: client, server: server, limits: limits, sink: sink,
                                         budget: decodingBudget, takeoverFactory: takeover)
    }

    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp, acknowledged: Int?) {
        guard let connection = connections[id] else { return }
        if let takeover = connection.takeover {
            takeover.consume(direction, bytes, at: time)
        } else {
            connection.consume(direction, bytes, at: time, acknowledged: acknowledged)
        }
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        guard let connection = connections[id] else { return }
        if let takeover = connection.takeover {
            takeover.gap(direction, length: length, at: time)
        } else {
            connection.gap(direction, length: length, at: time)
        }
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {
        guard let connection = connections[id] else { return }
        if let takeover = connection.takeover {
            takeover.end(direction, reason: reason, at: time)
        } else {
            connection.end(direction, reason: reason, at: time)
        }
    }

    public mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        connections[id]?.negotiated(protocolName, at: time)
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
            if let takeover = connection.takeover {
                takeover.end(.clientToServer, reason: .captureEnded, at: time)
                takeover.end(.serverToClient, reason: .captureEnded, at: time)
                takeover.close(at: time)
                continue
            }
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
    /// Takes the connection's bytes after an accepted upgrade or CONNECT (see `UpgradedStreams`).
    private var upgraded: UpgradedStreamHandler?
    private var noticed = false
    private let budget: DecodedBytesBudget?
    private let takeoverFactory: TakeoverFactory?
    /// The decoder that owns the connection's bytes once it left HTTP/1.x.
    private(set) var takeover: ConnectionTakeover?

    init(id: ConnectionID, client: Endpoint, server: Endpoint, limits: HTTPDecoderLimits, sink: EventSink,
         budget: DecodedBytesBudget? = nil, takeoverFactory: TakeoverFactory? = nil) {
        self.budget = budget
        self.id = id
        self.client = client
        self.server = server
        self.limits = limits
        self.sink = sink
        self.takeoverFactory = takeoverFactory
        requestParser = HTTPMessageParser(role: .request, limits: limits, sniffFirst: true, buffers: budget?.headBuffers)
        responseParser = HTTPMessageParser(role: .response, limits: limits, sniffFirst: false, buffers: budget?.headBuffers)
        requestParser.delegate = self
        responseParser.delegate = self
    }

    func parser(for direction: StreamDirection) -> HTTPMessageParser {
        direction == .clientToServer ? requestParser : responseParser
    }

    /// Bytes of one direction; `acknowledged` is how far into the other direction their segment acknowledged.
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp,
                 acknowledged: Int?) {
        if direction == .clientToServer {
            requestParser.consume(bytes, at: time, offset: requestOffset, acknowledged: acknowledged)
            requestOffset += bytes.count
        } else {
            responseParser.consume(bytes, at: time, offset: responseOffset, acknowledged: acknowledged)
            responseOffset += bytes.count
            responseSeenEnd = responseOffset
        }
    }

    /// Bytes of one direction never seen. One past the end of a message is remembered for pairing: it may have
    /// held whole requests or responses.
    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) {
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
    }

    /// The direction ended: its parser finishes (a body delimited by the close is complete), and so does what a
    /// tunnel carries (its decoder hears of the end too).
    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) {
        parser(for: direction).end(reason: reason, at: time)
        upgraded?.ended(direction, reason: reason, at: time)
    }

    // MARK: MessageParserDelegate

    func parser(_ parser: HTTPMessageParser, sniffFirstBytes bytes: ArraySlice<UInt8>, at time: Timestamp) -> Bool? {
        guard let isTLS = TLSRecordHeader.startsTLS(bytes) else { return nil }
        guard isTLS else { return sniffUnrecognizedStart(bytes, at: time) }
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

    /// First client bytes that are not TLS and cannot start an HTTP/1.x request line (which begins with a
    /// method's letters): a connection picked up mid-way may be HTTP/2, so the takeover decoder may claim it.
    private func sniffUnrecognizedStart(_ bytes: ArraySlice<UInt8>, at time: Timestamp) -> Bool? {
        guard takeoverFactory != nil, let first = bytes.first, !(0x41...0x5a).contains(first) else { return false }
        guard bytes.count >= 9 else { return nil }
        guard startTakeover(.unrecognizedStart(Array(bytes), at: time)) != nil else { return false }
        responseParser.becomeOpaque()
        return true
    }

    func parser(_ parser: HTTPMessageParser, didParse head: ParsedHead, headSize: Int,
                at time: Timestamp) -> (MessageInProgress, BodyFraming)? {
        var warnings = parser.pendingWarnings
        parser.pendingWarnings = []
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
        let message = MessageInProgress(head: head, headSize: headSize, start: start, warnings: warnings + head.anomalies,
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
                if startTakeover(.http2Preface) == nil { notice(.http2Preface, at: time) }
                responseParser.becomeOpaque()
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
                if upgrade != nil { return .opaque }
                return answering === message || waiting.contains(where: { $0 === message }) ? .hold : .next
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
                let kind = status == 101 ? (message.head.headers["Upgrade"]?.lowercased() ?? "unknown") : "tunnel"
                upgrade = kind
                var exchange = makeExchange(request: request, response: message)
                if status == 101, let takeover = startTakeover(.upgrade(exchange)) {
                    exchange.upgradeDecoded = true
                    if !takeover.reportsUpgradeExchange { sink.emit(.exchange(exchange)) }
                } else {
                    // CONNECT, or an upgrade no decoder claims: a tunnel, its bytes counted each way, and read by
                    // a decoder of its own when one is plugged in (TLS inside, with a key log).
                    let inner = kind == "tunnel" ? makeTakeover(.tunnel(exchange)) : nil
                    exchange.upgradeDecoded = inner != nil
                    sink.emit(.exchange(exchange))
                    startUpgradedStream(kind, inner: inner)
                }
                requestParser.becomeOpaque(at: time)
                return .opaque
            }
            emit(request: request, response: message)
            if case .holding = requestParser.phase {
                if method == "CONNECT" {
                    // A refused tunnel: what the client sends next is HTTP, or the bytes it meant to tunnel.
                    requestParser.refusedTunnelBytesFollow = { [weak self] _ in
                        self?.startUpgradedStream("tunnel", refused: (code, reason))
                    }
                    requestParser.releaseHeldAfterRefusedTunnel(at: time)
                } else {
                    // A refused upgrade: the client's held bytes are HTTP after all.
                    requestParser.releaseHeld(at: time)
                }
            }
            return .next
        }
    }

    func parser(_ parser: HTTPMessageParser, problem: HTTPWarning, at time: Timestamp) {
        // Trouble before any HTTP was seen means this is probably not HTTP: say nothing.
        guard parser.messagesParsed > 0 || !waiting.isEmpty else { return }
        parser.pendingWarnings.append(problem)
    }

    /// From now on the connection's bytes go to a handler for the upgraded protocol (a tunnel by default).
    /// `refused`: the status that refused a CONNECT, when these are the client's bytes after it (client side only).
    /// `inner`: a decoder for what the tunnel carries, fed alongside the tunnel's own counting.
    private func startUpgradedStream(_ kind: String, refused: (code: String, reason: String)? = nil,
                                     inner: ConnectionTakeover? = nil) {
        let context = UpgradedStreamContext(
            id: id, client: client, server: server, upgrade: kind, refused: refused, limits: limits, sink: sink,
            notice: { [weak self] kind, time in self?.notice(kind, at: time) }, inner: inner)
        let handler = UpgradedStreams.make(context)
        upgraded = handler
        requestParser.opaqueBytes = { [weak handler] bytes, time in handler?.received(bytes, from: .clientToServer, at: time) }
        responseParser.opaqueBytes = { [weak handler] bytes, time in handler?.received(bytes, from: .serverToClient, at: time) }
        requestParser.opaqueGap = { [weak handler] length, time in handler?.gap(length: length, from: .clientToServer, at: time) }
        responseParser.opaqueGap = { [weak handler] length, time in handler?.gap(length: length, from: .serverToClient, at: time) }
    }

    // MARK: Emitting

    func close(at time: Timestamp) {
        if let takeover {
            takeover.close(at: time)
            return
        }
        if let upgraded {
            self.upgraded = nil
            upgraded.closed(at: time)
        }
        // Trouble noticed in the response stream belongs to the first request left unanswered.
        if let first = answering ?? waiting.first {
            first.warnings += responseParser.pendingWarnings
            responseParser.pendingWarnings = []
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
    }

    /// At most `maxWarningsPerMessage` warnings per message side, plus one that counts the rest.
    private func capped(_ warnings: [HTTPWarning]) -> [HTTPWarning] {
        let limit = max(1, limits.maxWarningsPerMessage) * 2
        guard warnings.count > limit else { return warnings }
        return Array(warnings.prefix(limit - 1))
            + [.moreWarningsNotShown(warnings.count - limit + 1)]
    }

    private func notice(_ kind: ConnectionNotice.Kind, at time: Timestamp) {
        guard !noticed else { return }
        noticed = true
        sink.emit(.notice(ConnectionNotice(connection: id, client: client, server: server, kind: kind, time: time)))
    }

    /// The plugged-in decoder for `trigger`, if any (not yet given the connection's bytes).
    private func makeTakeover(_ trigger: TakeoverTrigger) -> ConnectionTakeover? {
        guard let takeoverFactory else { return nil }
        let context = TakeoverContext(connection: id, client: client, server: server, limits: limits, budget: budget,
                                      emit: sink.emit)
        return takeoverFactory(context, trigger)
    }

    /// Hands the connection to the takeover decoder, if one is plugged in and wants it; from then on every byte
    /// (including the rest of the segment that triggered it and bytes held for an upgrade) goes to it.
    private func startTakeover(_ trigger: TakeoverTrigger) -> ConnectionTakeover? {
        guard takeover == nil, let decoder = makeTakeover(trigger) else { return nil }
        takeover = decoder
        requestParser.opaqueBytes = { [unowned decoder] bytes, time in decoder.consume(.clientToServer, bytes, at: time) }
        responseParser.opaqueBytes = { [unowned decoder] bytes, time in decoder.consume(.serverToClient, bytes, at: time) }
        requestParser.opaqueGap = { [unowned decoder] length, time in decoder.gap(.clientToServer, length: length, at: time) }
        responseParser.opaqueGap = { [unowned decoder] length, time in decoder.gap(.serverToClient, length: length, at: time) }
        return decoder
    }

    /// TLS ALPN (told by the layer that decrypts) chose the protocol before any stream bytes.
    func negotiated(_ protocolName: String, at time: Timestamp) {
        guard takeover == nil, requestParser.messagesParsed == 0, responseParser.messagesParsed == 0,
              startTakeover(.negotiated(protocolName)) != nil else { return }
        requestParser.becomeOpaque()
        responseParser.becomeOpaque()
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
