import BodyDecoding
import FlowReassembly
import HTTPModel
import PacketDecoding
import TLSWire

/// Decodes one HTTP/3 connection (RFC 9114) from the in-order bytes of its QUIC streams: the control streams'
/// SETTINGS and GOAWAY, QPACK (RFC 9204) per sending side with its encoder and decoder streams, and every request
/// stream (and server push) as an `HTTPExchange` with `http3` facts: pseudo-headers, headers, bodies decoded like
/// HTTP/1 and HTTP/2, trailers, resets and gaps as typed warnings. An exchange is reported when both sides ended
/// (FIN), when a side is reset, or when the connection ends.
///
/// The QUIC layer (in CaptureEngine) calls it on one thread in capture order; bytes are borrowed for the call.
public final class HTTP3Connection {
    private let connection: ConnectionID
    private let client: Endpoint
    private let server: Endpoint
    private let limits: HTTPDecoderLimits
    private let http3Limits: HTTP3Limits
    private let budget: DecodedBytesBudget?
    private let emit: (HTTPEvent) -> Void

    /// Unidirectional streams by id, once their type is known.
    private var uni: [UInt64: UniStream] = [:]
    private var requests: [UInt64: HTTP3Exchange] = [:]
    private var pushes: [UInt64: HTTP3Exchange] = [:]
    /// Request streams and pushes already reported: later bytes for them change nothing (bounded).
    private var closedRequests: Set<UInt64> = []
    private var closedPushes: Set<UInt64> = []
    /// Per sending side (0 client, 1 server): its QPACK decoder once the other side's SETTINGS sized it.
    private var qpack: [QPACKDecoder?] = [nil, nil]
    private var earlyEncoderBytes: [[UInt8]] = [[], []]
    private var settingsSeen = [false, false]
    /// Per sending side: which exchange side waits under a QPACK stream key.
    private var waiting: [[UInt64: (HTTP3Exchange, StreamDirection)]] = [[:], [:]]
    private var goaway: (sender: StreamDirection, id: UInt64)?
    private var nextOrder = 0
    private var warned: Set<String> = []
    private var currentTime = Timestamp(seconds: 0, nanoseconds: 0)

    private enum UniStream {
        /// The stream type varint (and a push stream's push ID) are still being read.
        case preamble(VarIntAccumulator, type: UInt64?)
        case control(HTTP3FrameReader)
        case push(pushID: UInt64)
        case encoder
        case decoder(QPACKDecoderStreamReader)
        /// Unknown or reserved types, and streams lost to a gap before their type: skipped.
        case ignored
    }

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, limits: HTTPDecoderLimits,
                http3Limits: HTTP3Limits = HTTP3Limits(), budget: DecodedBytesBudget?,
                emit: @escaping (HTTPEvent) -> Void) {
        self.connection = connection
        self.client = client
        self.server = server
        self.limits = limits
        self.http3Limits = http3Limits
        self.budget = budget
        self.emit = emit
    }

    private static func direction(_ fromClient: Bool) -> StreamDirection { fromClient ? .clientToServer : .serverToClient }
    private static func index(_ direction: StreamDirection) -> Int { direction == .clientToServer ? 0 : 1 }

    // MARK: The QUIC layer's calls

    public func streamData(_ stream: UInt64, fromClient: Bool, bytes: UnsafeRawBufferPointer, fin: Bool, at time: Timestamp) {
        currentTime = time
        let direction = Self.direction(fromClient)
        if stream & 0x2 != 0 {
            uniData(stream, from: stream & 0x1 == 0 ? .clientToServer : .serverToClient, bytes, fin: fin, at: time)
        } else if stream & 0x1 == 0 {
            guard let exchange = request(stream, at: time) else { return }
            feed(exchange, direction, qpackStream: stream, bytes, fin: fin, at: time)
        } else {
            warnOnce("server-bidi", .serverBidirectionalStream(stream))
        }
        // A block that failed may have lost a table other blocks were waiting on: they are told now.
        for side in 0...1 where qpack[side]?.hasLostBlocks == true { resumeUnblocked(side, at: time) }
    }

    public func streamGap(_ stream: UInt64, fromClient: Bool, length: Int, at time: Timestamp) {
        currentTime = time
        let direction = Self.direction(fromClient)
        if stream & 0x2 == 0 {
            guard stream & 0x1 == 0, let exchange = request(stream, at: time) else { return }
            lose(exchange, direction, length: length)
            return
        }
        switch uni[stream] {
        case .push(let pushID)?:
            if let exchange = pushes[pushID] { lose(exchange, .serverToClient, length: length) }
        case .encoder?:
            let side = stream & 0x1 == 0 ? 0 : 1
            warnConnection(.encoderStreamGap(sender: side == 0 ? .clientToServer : .serverToClient, length: length))
            qpack[side]?.markTableLost()
            resumeUnblocked(side, at: time)
        case .control?:
            warnConnection(.controlStreamGap(length: length))
            uni[stream] = .ignored
        default:
            uni[stream] = .ignored
        }
    }

    public func streamReset(_ stream: UInt64, fromClient: Bool, errorCode: UInt64, at time: Timestamp) {
        currentTime = time
        let direction = Self.direction(fromClient)
        guard let exchange = exchange(onStream: stream) else {
            switch uni[stream] {
            case nil, .ignored?, .push?: break
            default: warnConnection(.criticalStreamReset(stream: stream, sender: direction, code: errorCode,
                                                         codeName: HTTP3ErrorCode.name(errorCode)))
            }
            return
        }
        var qpackStream = stream
        if let blocked = exchange.side(direction).blocked { qpackStream = blocked.qpackStream }
        qpack[Self.index(direction)]?.cancel(stream: qpackStream)
        waiting[Self.index(direction)][qpackStream] = nil
        exchange.outcome = .reset(sender: direction, code: errorCode, codeName: HTTP3ErrorCode.name(errorCode))
        exchange.side(direction).end = time
        report(exchange)
    }

    public func stopSending(_ stream: UInt64, fromClient: Bool, errorCode: UInt64, at time: Timestamp) {
        currentTime = time
        exchange(onStream: stream)?.warnings.append(.http3StopSending(sender: Self.direction(fromClient), code: errorCode,
                                                  codeName: HTTP3ErrorCode.name(errorCode)))
    }

    public func connectionClosed(fromClient: Bool, errorCode: UInt64, application: Bool, reason: String, at time: Timestamp) {
        currentTime = time
        guard errorCode != 0 && !(application && errorCode == 0x100) else { return }
        let name = application ? HTTP3ErrorCode.name(errorCode) : "QUIC transport error"
        warnConnection(.connectionClosed(sender: Self.direction(fromClient), code: errorCode, codeName: name, reason: reason))
    }

    public func end(at time: Timestamp) {
        currentTime = time
        let open = (Array(requests.values) + Array(pushes.values)).sorted { $0.order < $1.order }
        for exchange in open {
            for direction in [StreamDirection.clientToServer, .serverToClient] {
                if let blocked = exchange.side(direction).blocked, let decoder = qpack[Self.index(direction)] {
                    let required = decoder.blocked.first { $0.stream == blocked.qpackStream }?.required ?? 0
                    exchange.warnings.append(.qpackNeverUnblocked(required: required, inserted: decoder.insertCount))
                }
            }
            if case .complete = exchange.outcome {
                if let goaway, let id = exchange.streamID, exchange.pushID == nil, id >= goaway.id {
                    exchange.outcome = .goaway(sender: goaway.sender, id: goaway.id)
                } else if !exchange.isDone {
                    exchange.outcome = .unfinished
                }
            }
            report(exchange)
        }
    }

    // MARK: Streams

    /// The open exchange a request stream or push stream belongs to.
    private func exchange(onStream stream: UInt64) -> HTTP3Exchange? {
        if stream & 0x2 == 0 { return requests[stream] }
        if case .push(let pushID)? = uni[stream] { return pushes[pushID] }
        return nil
    }

    /// The exchange of a request stream; nil when it was already reported.
    private func request(_ stream: UInt64, at time: Timestamp) -> HTTP3Exchange? {
        if let exchange = requests[stream] { return exchange }
        guard !closedRequests.contains(stream) else { return nil }
        makeRoom()
        let exchange = HTTP3Exchange(streamID: stream, order: nextOrder, maxBufferedFrameBytes: http3Limits.maxBufferedFrameBytes)
        nextOrder += 1
        requests[stream] = exchange
        return exchange
    }

    private func push(_ pushID: UInt64) -> HTTP3Exchange? {
        if let exchange = pushes[pushID] { return exchange }
        guard !closedPushes.contains(pushID) else { return nil }
        makeRoom()
        let exchange = HTTP3Exchange(streamID: nil, pushID: pushID, order: nextOrder,
                                     maxBufferedFrameBytes: http3Limits.maxBufferedFrameBytes)
        nextOrder += 1
        pushes[pushID] = exchange
        return exchange
    }

    private func makeRoom() {
        guard requests.count + pushes.count >= http3Limits.maxOpenStreams,
              let oldest = (Array(requests.values) + Array(pushes.values)).min(by: { $0.order < $1.order }) else { return }
        oldest.outcome = .unfinished
        oldest.warnings.append(.http3TooManyStreams(limit: http3Limits.maxOpenStreams))
        warnOnce("streams", .tooManyStreams(limit: http3Limits.maxOpenStreams))
        report(oldest)
    }

    private func uniData(_ stream: UInt64, from direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, fin: Bool,
                         at time: Timestamp) {
        var input = bytes[...]
        var state = uni[stream] ?? .preamble(VarIntAccumulator(), type: nil)
        while case .preamble(var accumulator, let type) = state, let byte = input.popFirst() {
            guard let value = accumulator.feed(byte) else {
                state = .preamble(accumulator, type: type)
                continue
            }
            if type == 0x01 {
                state = .push(pushID: value)
                push(value)?.streamID = stream
                continue
            }
            switch value {
            case 0x00: state = .control(HTTP3FrameReader(maxBufferedFrameBytes: http3Limits.maxBufferedFrameBytes))
            case 0x01: state = .preamble(VarIntAccumulator(), type: 0x01)
            case 0x02: state = .encoder
            case 0x03: state = .decoder(QPACKDecoderStreamReader())
            default: state = .ignored  // reserved (0x1f * N + 0x21) and unknown types are skipped (section 6.2)
            }
        }
        uni[stream] = state
        let rest = UnsafeRawBufferPointer(rebasing: input)
        let side = Self.index(direction)
        switch uni[stream] {
        case .control(var reader)?:
            uni[stream] = .ignored  // while it runs: a frame handler never reenters this stream
            _ = reader.consume(rest) { piece in controlFrame(piece, from: direction, at: time); return true }
            uni[stream] = .control(reader)
        case .push(let pushID)?:
            guard let exchange = pushes[pushID] else { return }
            feed(exchange, .serverToClient, qpackStream: stream, rest, fin: fin, at: time)
        case .encoder?:
            guard !rest.isEmpty else { return }
            guard settingsSeen[side], let decoder = qpack[side] else {
                if earlyEncoderBytes[side].count + rest.count > http3Limits.maxEarlyEncoderBytes {
                    earlyEncoderBytes[side] = []
                    warnOnce("early-encoder-\(side)", .earlyEncoderBytesOverLimit(sender: direction, limit: http3Limits.maxEarlyEncoderBytes))
                    settingsArrived(for: side, capacity: UInt64.max, blockedStreams: 0, at: time)
                } else {
                    earlyEncoderBytes[side] += rest
                }
                return
            }
            if let failure = decoder.readEncoderStream(rest) {
                warnOnce("encoder-\(side)", .encoderStreamFailed(sender: direction, reason: failure.description))
            }
            resumeUnblocked(side, at: time)
        case .decoder(var reader)?:
            if let failure = reader.consume(rest) {
                warnOnce("decoder-\(side)", .decoderStreamFailed(sender: direction, reason: failure.description))
            }
            uni[stream] = .decoder(reader)
        default:
            break
        }
    }

    // MARK: Control streams

    private func controlFrame(_ piece: HTTP3FrameReader.Piece, from direction: StreamDirection, at time: Timestamp) {
        let who = direction == .clientToServer ? "client" : "server"
        switch piece {
        case .data:
            warnOnce("control-data-\(who)", .dataOnControlStream(sender: direction))
        case .skipped(let type, let length):
            warnOnce("control-skip-\(who)", .controlFrameOverLimit(sender: direction, type: type, length: length))
        case .frame(let type, let payload):
            var cursor = ByteCursor(payload)
            switch type {
            case 0x04:  // SETTINGS: size the QPACK table of the OTHER side's encoder.
                var capacity: UInt64 = 0, blocked: UInt64 = 0
                while let identifier = cursor.quicVarInt(), let value = cursor.quicVarInt() {
                    if identifier == 0x01 { capacity = value }
                    if identifier == 0x07 { blocked = value }
                }
                settingsArrived(for: 1 - Self.index(direction), capacity: capacity, blockedStreams: blocked, at: time)
            case 0x07:  // GOAWAY: a stream id from the server, a push ID from the client.
                guard let id = cursor.quicVarInt() else { return }
                goaway = (direction, id)
            case 0x03, 0x0d:
                break  // CANCEL_PUSH, MAX_PUSH_ID change no exchange.
            case 0x01, 0x05, 0x02, 0x06, 0x08, 0x09:
                warnOnce("control-\(type)-\(who)", .controlFrameNotAllowed(sender: direction, type: type))
            default:
                break  // Unknown and reserved types are skipped (section 9).
            }
        }
    }

    /// SETTINGS from the side that decodes what `side` sends: `side`'s QPACK decoder can be made. Encoder bytes
    /// that came first are read now.
    private func settingsArrived(for side: Int, capacity: UInt64, blockedStreams: UInt64, at time: Timestamp) {
        guard !settingsSeen[side] else { return }
        settingsSeen[side] = true
        let decoder = QPACKDecoder(maxTableCapacity: capacity, limit: http3Limits.maxQPACKTableBytes,
                                   maxBlockedStreams: Int(min(blockedStreams, UInt64(http3Limits.maxBlockedStreams))),
                                   maxHeaderListBytes: http3Limits.maxHeaderListBytes)
        qpack[side] = decoder
        if !decoder.tableTracked && capacity != UInt64.max {
            warnOnce("capacity-\(side)", .tableCapacityOverLimit(encoder: side == 0 ? .clientToServer : .serverToClient, capacity: capacity,
                                                         limit: http3Limits.maxQPACKTableBytes))
        }
        let early = earlyEncoderBytes[side]
        earlyEncoderBytes[side] = []
        if !early.isEmpty, let failure = early.withUnsafeBytes({ decoder.readEncoderStream($0) }) {
            warnOnce("encoder-\(side)", .encoderStreamFailed(sender: side == 0 ? .clientToServer : .serverToClient,
                                                      reason: failure.description))
        }
    }

    /// The decoder for what `side` sends; before the SETTINGS that size it, one without a dynamic table (a block
    /// sent that early cannot refer to the table), replaced when they arrive.
    private func decoderForBlock(_ side: Int) -> QPACKDecoder {
        if let decoder = qpack[side] { return decoder }
        let provisional = QPACKDecoder(maxTableCapacity: 0, limit: 0, maxBlockedStreams: 0,
                                       maxHeaderListBytes: http3Limits.maxHeaderListBytes)
        qpack[side] = provisional
        return provisional
    }

    // MARK: Request and push streams

    /// Reads one side's bytes as frames; held back while a header block of that side waits for QPACK entries.
    private func feed(_ exchange: HTTP3Exchange, _ direction: StreamDirection, qpackStream: UInt64,
                      _ bytes: UnsafeRawBufferPointer, fin: Bool, at time: Timestamp) {
        let side = exchange.side(direction)
        guard !exchange.reported, !side.lost, !side.ended else { return }
        if side.blocked != nil {
            hold(exchange, side, bytes, fin: fin)
            return
        }
        let read = side.reader.consume(bytes) { piece in
            handle(piece, exchange, direction, qpackStream: qpackStream, at: time)
        }
        if side.blocked != nil {
            hold(exchange, side, UnsafeRawBufferPointer(rebasing: bytes[read...]), fin: fin)
            return
        }
        if fin { finish(exchange, direction, at: time) }
    }

    private func hold(_ exchange: HTTP3Exchange, _ side: HTTP3Exchange.Side, _ bytes: UnsafeRawBufferPointer, fin: Bool) {
        if side.held.count + bytes.count > http3Limits.maxHeldBytes {
            side.held = []
            side.lost = true
            exchange.warnings.append(.http3HeldBytesOverLimit(limit: http3Limits.maxHeldBytes))
            return
        }
        side.held += bytes
        if fin { side.finHeld = true }
    }

    private func finish(_ exchange: HTTP3Exchange, _ direction: StreamDirection, at time: Timestamp) {
        let side = exchange.side(direction)
        if !side.reader.atFrameBoundary { exchange.warnings.append(.http3FrameCutByFIN(from: direction)) }
        side.ended = true
        side.end = time
        if side.start == nil { side.start = time }
        if exchange.isDone { report(exchange) }
    }

    private func lose(_ exchange: HTTP3Exchange, _ direction: StreamDirection, length: Int) {
        let side = exchange.side(direction)
        guard !side.lost, !side.ended else { return }
        side.lost = true
        side.held = []
        exchange.warnings.append(.http3BytesNeverCaptured(length: length, from: direction))
        side.body?.gap(length: length)
    }

    /// One frame piece of a request or push stream side; false stops reading (a header block now waits).
    private func handle(_ piece: HTTP3FrameReader.Piece, _ exchange: HTTP3Exchange, _ direction: StreamDirection,
                        qpackStream: UInt64, at time: Timestamp) -> Bool {
        let side = exchange.side(direction)
        side.end = time
        switch piece {
        case .data(let bytes, _):
            guard side.fields != nil else {
                if !bytes.isEmpty { noteOnce(exchange, .http3FrameUnexpected(type: HTTP3FrameReader.dataType)) }
                return true
            }
            if !bytes.isEmpty { side.body(limits: limits, budget: budget).append(bytes) }
        case .skipped(let type, let length):
            exchange.warnings.append(.http3FrameOverLimit(type: type, length: length, limit: http3Limits.maxBufferedFrameBytes))
            if type == 0x01 || type == 0x05 {
                exchange.headerTableUnknown = true
                if side.fields == nil { side.fields = [] }
            }
        case .frame(let type, let payload):
            switch type {
            case 0x01:
                if side.start == nil { side.start = time }
                return decodeBlock(Array(payload), promise: nil, exchange, direction, qpackStream: qpackStream, at: time)
            case 0x05 where direction == .serverToClient:
                var cursor = ByteCursor(payload)
                guard let pushID = cursor.quicVarInt() else {
                    exchange.warnings.append(.http3FrameUnexpected(type: type))
                    return true
                }
                return decodeBlock(Array(cursor.rest()), promise: pushID, exchange, direction,
                                   qpackStream: qpackStream, at: time)
            case 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0d:
                exchange.warnings.append(.http3FrameUnexpected(type: type))
            default:
                break  // Unknown and reserved types are skipped (section 9).
            }
        }
        return true
    }

    private func noteOnce(_ exchange: HTTP3Exchange, _ warning: HTTPWarning) {
        if !exchange.warnings.contains(warning) { exchange.warnings.append(warning) }
    }

    /// A HEADERS or PUSH_PROMISE field section of `direction`'s side; false when it waits for QPACK entries.
    private func decodeBlock(_ block: [UInt8], promise: UInt64?, _ exchange: HTTP3Exchange, _ direction: StreamDirection,
                             qpackStream: UInt64, at time: Timestamp) -> Bool {
        let side = Self.index(direction)
        // A promise's block waits under a key of its own, so the stream's own HEADERS never collide with it.
        let key = promise.map { UInt64.max - $0 } ?? qpackStream
        let outcome = decoderForBlock(side).decode(block, stream: key)
        if case .blocked = outcome {
            exchange.side(direction).blocked = HTTP3Exchange.BlockedBlock(bytes: block.count, promise: promise, qpackStream: key)
            waiting[side][key] = (exchange, direction)
            return false
        }
        apply(outcome, bytes: block.count, promise: promise, exchange, direction, at: time)
        return true
    }

    private func apply(_ outcome: QPACKDecoder.Outcome, bytes: Int, promise: UInt64?, _ exchange: HTTP3Exchange,
                       _ direction: StreamDirection, at time: Timestamp) {
        var fields: [(name: String, value: String)] = []
        switch outcome {
        case .decoded(let decoded): fields = decoded
        case .failed(let warning):
            exchange.warnings.append(warning)
            if warning == .qpackTableNotTracked { exchange.headerTableUnknown = true }
        case .blocked: return
        }
        if let promise {
            guard let pushed = push(promise) else { return }
            pushed.promisedOn = exchange.streamID
            pushed.request.fields = fields
            pushed.request.headBytes += bytes
            pushed.request.start = time
            pushed.request.end = time
            pushed.request.ended = true
            if case .failed(.qpackTableNotTracked) = outcome { pushed.headerTableUnknown = true }
            if pushed.isDone { report(pushed) }
            return
        }
        let side = exchange.side(direction)
        if direction == .serverToClient, side.fields == nil,
           let status = fields.first(where: { $0.name == ":status" }).flatMap({ Int($0.value) }), (100...199).contains(status) {
            exchange.interim.append(HTTPInterimResponse(status: status, reason: "", headers: HTTPHeaders(fields), time: time))
        } else if side.fields == nil {
            side.fields = fields
            side.headBytes += bytes
        } else {
            side.trailers += fields
            side.headBytes += bytes
        }
    }

    /// After encoder stream bytes of `side`: blocks that can now be decoded are, and what waited behind them is read.
    private func resumeUnblocked(_ side: Int, at time: Timestamp) {
        // What a resumed side reads may fail another block and lose the table: repeat until nothing is left to tell.
        while let decoder = qpack[side] {
            let results = decoder.unblocked()
            if results.isEmpty { return }
            resume(results, side, at: time)
        }
    }

    private func resume(_ results: [(stream: UInt64, outcome: QPACKDecoder.Outcome)], _ side: Int, at time: Timestamp) {
        for (key, outcome) in results {
            guard let (exchange, direction) = waiting[side].removeValue(forKey: key),
                  let blocked = exchange.side(direction).blocked else { continue }
            let messageSide = exchange.side(direction)
            messageSide.blocked = nil
            apply(outcome, bytes: blocked.bytes, promise: blocked.promise, exchange, direction, at: time)
            let held = messageSide.held, fin = messageSide.finHeld
            messageSide.held = []
            messageSide.finHeld = false
            held.withUnsafeBytes { feed(exchange, direction, qpackStream: exchange.streamID ?? key, $0, fin: fin, at: time) }
        }
    }

    // MARK: Reporting

    private func report(_ exchange: HTTP3Exchange) {
        guard !exchange.reported else { return }
        exchange.reported = true
        if let id = exchange.pushID {
            pushes[id] = nil
            if closedPushes.count >= 4 * http3Limits.maxOpenStreams { closedPushes.removeAll() }
            closedPushes.insert(id)
        } else if let id = exchange.streamID {
            requests[id] = nil
            if closedRequests.count >= 4 * http3Limits.maxOpenStreams { closedRequests.removeAll() }
            closedRequests.insert(id)
        }
        for direction in [StreamDirection.clientToServer, .serverToClient] {
            if let blocked = exchange.side(direction).blocked {
                qpack[Self.index(direction)]?.cancel(stream: blocked.qpackStream)
                waiting[Self.index(direction)][blocked.qpackStream] = nil
            }
        }
        var warnings = exchange.warnings
        var complete = exchange.outcome == .complete && !exchange.headerTableUnknown
        var request: HTTPRequest?
        if let fields = exchange.request.fields {
            let headers = HTTPHeaders(fields)
            let body = exchange.request.body(limits: limits, budget: budget)
            warnings += body.warnings
            if body.sawGap { complete = false }
            let method = headers[":method"] ?? "(unknown)"
            let target = method == "CONNECT" ? (headers[":authority"] ?? "") : (headers[":path"] ?? "(unknown)")
            let start = exchange.request.start ?? currentTime
            request = HTTPRequest(method: method, uri: target, version: "HTTP/3", headers: HTTPHeaders(fields + exchange.request.trailers),
                                  body: body.finish(), headSize: exchange.request.headBytes, start: start,
                                  end: exchange.request.end ?? start)
        } else {
            complete = false
        }
        var response: HTTPResponse?
        if let fields = exchange.response.fields {
            let headers = HTTPHeaders(fields)
            let body = exchange.response.body(limits: limits, budget: budget)
            warnings += body.warnings
            if body.sawGap { complete = false }
            let start = exchange.response.start ?? currentTime
            let code = headers[":status"]
            response = HTTPResponse(status: code.flatMap { Int($0) }, statusText: code ?? "", reason: "", version: "HTTP/3",
                                    headers: HTTPHeaders(fields + exchange.response.trailers), body: body.finish(),
                                    headSize: exchange.response.headBytes, interim: exchange.interim, start: start,
                                    end: exchange.response.end ?? start)
        } else {
            complete = false
        }
        if exchange.request.lost || exchange.response.lost { complete = false }
        if exchange.outcome != .complete { warnings.append(.http3StreamEnded(exchange.outcome)) }
        warnings.keepWithin(limits.maxWarningsPerMessage)
        var event = HTTPExchange(connection: connection, client: client, server: server, request: request, response: response,
                                 complete: complete, warnings: warnings, upgrade: nil)
        event.http3 = HTTP3StreamFacts(streamID: exchange.streamID, pushID: exchange.pushID, promisedOn: exchange.promisedOn,
                                       outcome: exchange.outcome, headerTableUnknown: exchange.headerTableUnknown)
        emit(.exchange(event))
    }

    private func warnConnection(_ kind: HTTP3ConnectionWarning.Kind) {
        let warning = HTTP3ConnectionWarning(client: client, server: server, kind: kind)
        emit(.warning(connection: connection, warning: AnyConnectionWarning(warning), time: currentTime))
    }

    /// Once per connection for each key (a kind of trouble, per side), however often it happens.
    private func warnOnce(_ key: String, _ warning: HTTP3ConnectionWarning.Kind) {
        guard warned.insert(key).inserted else { return }
        warnConnection(warning)
    }
}
