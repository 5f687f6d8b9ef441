import FlowReassembly
import HTTPDecoding
import HTTPModel
import PacketDecoding
import TLSWire

/// Decodes one HTTP/2 connection (RFC 9113) from both directions' bytes: frames, HPACK per direction, and
/// every stream as an `HTTPExchange` (request and response, bodies de-framed and content-decoded, trailers,
/// RST_STREAM and GOAWAY as what happened to it, PUSH_PROMISE as a pushed exchange, gRPC calls summarised).
/// An exchange is reported when both sides ended the stream, when it is reset, or when the connection ends.
final class HTTP2Connection: ConnectionHandler {
    private let context: TakeoverContext
    private let limits: HTTP2Limits

    private static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// Client preface bytes still expected before the first frame.
    private var prefaceLeft: ArraySlice<UInt8>
    private var splitters: [FrameSplitter]
    private var headerDecoders: [HeaderBlockDecoder]
    /// Per direction: the header block being assembled from HEADERS/PUSH_PROMISE and CONTINUATION frames.
    private var pendingBlocks: [PendingBlock?] = [nil, nil]
    /// Per direction: stopped after a gap (frame boundaries lost).
    private var lost = [false, false]
    private var streams: [UInt32: HTTP2Stream] = [:]
    /// Highest client-initiated (odd) and server-initiated (even) stream ids opened so far. Stream ids only grow,
    /// so a frame for a lower id that is not open belongs to a closed stream (DATA in flight after a reset).
    private var highestOdd: UInt32 = 0
    private var highestEven: UInt32 = 0
    private var goaway: (sender: StreamDirection, code: UInt32, lastStreamID: UInt32)?
    private var warnedLimits: Set<String> = []
    private var currentTime = Timestamp(seconds: 0, nanoseconds: 0)

    private struct PendingBlock {
        var streamID: UInt32
        var bytes: [UInt8]
        var endStream: Bool
        /// PUSH_PROMISE: the stream it promises.
        var promised: UInt32?
        var tooLarge = false
    }

    /// `upgrade`: the h2c exchange whose request becomes stream 1's. `midConnection`: picked up without the
    /// preface, so the HPACK tables' earlier contents are unknown.
    init(context: TakeoverContext, limits: HTTP2Limits, expectsPreface: ArraySlice<UInt8>, upgrade: HTTPExchange? = nil,
         midConnection: Bool = false, at time: Timestamp? = nil) {
        self.context = context
        self.limits = limits
        prefaceLeft = expectsPreface
        splitters = [FrameSplitter(maxBufferedFrameBytes: limits.maxBufferedFrameBytes),
                     FrameSplitter(maxBufferedFrameBytes: limits.maxBufferedFrameBytes)]
        let decoder = HeaderBlockDecoder(maxHeaderListBytes: limits.maxHeaderListBytes,
                                         maxTableBytes: limits.maxHeaderTableBytes, tableUnknown: midConnection)
        headerDecoders = [decoder, decoder]
        if midConnection {
            warnConnection(.pickedUpWithoutStart, at: time ?? upgrade?.time ?? Timestamp(seconds: 0, nanoseconds: 0))
        }
        if let upgrade, let request = upgrade.request, let response = upgrade.response {
            let stream = HTTP2Stream(id: 1)
            stream.upgradeRequest = request
            stream.request.ended = true
            stream.request.start = request.start
            stream.request.end = request.end
            // Only a numeric 101 starts a takeover, so `status` is there.
            stream.interim = response.interim + [HTTPInterimResponse(status: response.status ?? 101, reason: response.reason,
                                                                       headers: response.headers, time: response.start)]
            stream.warnings = upgrade.warnings
            streams[1] = stream
            highestOdd = 1
        }
    }

    static func fullPreface() -> ArraySlice<UInt8> { preface[...] }
    static func prefaceAfterRequestLine() -> ArraySlice<UInt8> { preface[18...] }

    private func index(_ direction: StreamDirection) -> Int { direction == .clientToServer ? 0 : 1 }

    // MARK: ConnectionHandler (HTTP/2 is the last layer: it never hands the connection on)

    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
        read(direction, bytes, at: time)
        return nil
    }

    private func read(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) {
        currentTime = time
        let side = index(direction)
        guard !lost[side] else { return }
        var input = bytes[...]
        if direction == .clientToServer && !prefaceLeft.isEmpty {
            let take = min(prefaceLeft.count, input.count)
            if !input.prefix(take).elementsEqual(prefaceLeft.prefix(take)) {
                warnConnection(.noPreface)
                prefaceLeft = []
            } else {
                prefaceLeft = prefaceLeft.dropFirst(take)
                input = input.dropFirst(take)
            }
        }
        guard !input.isEmpty else { return }
        splitters[side].consume(UnsafeRawBufferPointer(rebasing: input)) { piece in
            handle(piece, from: direction, at: time)
        }
    }

    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
        let side = index(direction)
        guard !lost[side] else { return nil }
        lost[side] = true
        for stream in streams.values.sorted(by: { $0.id < $1.id }) where !stream.side(direction).ended {
            stream.warnings.append(.http2BytesNeverCaptured(length: length, from: direction))
            stream.side(direction).body?.gap(length: length)
        }
        warnConnection(.bytesNeverCaptured(length: length, from: direction))
        return nil
    }

    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
        currentTime = time
        return nil
    }

    func close(at time: Timestamp) {
        currentTime = time
        for stream in streams.values.sorted(by: { $0.id < $1.id }) {
            if case .complete = stream.outcome {
                if let goaway, stream.id > goaway.lastStreamID || !stream.isDone {
                    stream.outcome = .goaway(sender: goaway.sender, code: goaway.code,
                                             codeName: HTTP2ErrorCode.name(goaway.code), lastStreamID: goaway.lastStreamID)
                } else if !stream.isDone {
                    stream.outcome = .unfinished
                }
            }
            report(stream)
        }
        streams.removeAll()
    }

    // MARK: Frames

    private func handle(_ piece: FrameSplitter.Piece, from direction: StreamDirection, at time: Timestamp) {
        switch piece {
        case .skipped(let header, let reason):
            if header.type == FrameType.headers || header.type == FrameType.pushPromise || header.type == FrameType.continuation {
                headerDecoders[index(direction)].markTableUnknown()
            }
            streams[header.streamID]?.warnings.append(.http2FrameSkipped(reason))
            warnOnce("skip-\(header.type)", .frameSkipped(reason))
        case .data(let header, let bytes, let last):
            data(header, bytes, last: last, from: direction, at: time)
        case .frame(let header, let payload):
            frame(header, payload, from: direction, at: time)
        }
    }

    private func data(_ header: FrameHeader, _ bytes: UnsafeRawBufferPointer, last: Bool, from direction: StreamDirection,
                      at time: Timestamp) {
        guard header.streamID != 0, let stream = stream(header.streamID, creating: false) else { return }
        let side = stream.side(direction)
        if side.start == nil { side.start = time }
        side.end = time
        if !bytes.isEmpty {
            side.body(limits: context.limits, budget: context.budget).append(bytes)
            side.grpc?.consume(bytes)
        }
        if last && header.has(FrameType.endStream) { endSide(stream, direction, at: time) }
    }

    private func frame(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer, from direction: StreamDirection,
                       at time: Timestamp) {
        let side = index(direction)
        if let pending = pendingBlocks[side], header.type != FrameType.continuation || header.streamID != pending.streamID {
            pendingBlocks[side] = nil
            headerDecoders[side].markTableUnknown()
            streams[pending.streamID]?.warnings.append(.http2HeaderBlockUnfinished)
        }
        switch header.type {
        case FrameType.headers:
            guard header.streamID != 0 else { return }
            var offset = 0, end = payload.count
            if header.has(FrameType.padded) {
                guard payload.count >= 1 else { return malformed(header, .headersPaddedButEmpty, direction) }
                end -= Int(payload[0])
                offset = 1
            }
            if header.has(FrameType.priorityFlag) { offset += 5 }
            guard offset <= end else { return malformed(header, .headersPaddingOrPriorityTooLong, direction) }
            startBlock(PendingBlock(streamID: header.streamID, bytes: [], endStream: header.has(FrameType.endStream)),
                       fragment: payload, offset, end, endHeaders: header.has(FrameType.endHeaders), from: direction, at: time)
        case FrameType.pushPromise:
            var offset = 0, end = payload.count
            if header.has(FrameType.padded) {
                guard payload.count >= 1 else { return malformed(header, .pushPromisePaddedButEmpty, direction) }
                end -= Int(payload[0])
                offset = 1
            }
            guard end - offset >= 4 else { return malformed(header, .pushPromiseTooShort, direction) }
            var cursor = ByteCursor(payload)
            cursor.offset = offset
            let promised = cursor.u32()! & 0x7fff_ffff  // four bytes are there (checked above)
            startBlock(PendingBlock(streamID: header.streamID, bytes: [], endStream: false, promised: promised),
                       fragment: payload, offset + 4, end, endHeaders: header.has(FrameType.endHeaders), from: direction, at: time)
        case FrameType.continuation:
            guard var pending = pendingBlocks[side] else {
                return malformed(header, .continuationWithoutHeaderBlock, direction)
            }
            appendFragment(&pending, payload, 0, payload.count)
            if header.has(FrameType.endHeaders) {
                pendingBlocks[side] = nil
                finishBlock(pending, from: direction, at: time)
            } else {
                pendingBlocks[side] = pending
            }
        case FrameType.rstStream:
            var cursor = ByteCursor(payload)
            guard payload.count == 4, let code = cursor.u32(), let stream = streams[header.streamID] else { return }
            stream.outcome = .reset(sender: direction, code: code, codeName: HTTP2ErrorCode.name(code))
            stream.side(direction).end = time
            report(stream)
            streams[stream.id] = nil
        case FrameType.settings:
            guard !header.has(FrameType.ack), header.streamID == 0 else { return }
            var cursor = ByteCursor(payload)
            while let identifier = cursor.u16(), let value = cursor.u32() {
                // SETTINGS_HEADER_TABLE_SIZE bounds the table of the OTHER side's encoder.
                if identifier == 0x1 { headerDecoders[1 - side].peerAllowsTable(bytes: Int(value)) }
            }
        case FrameType.goaway:
            var cursor = ByteCursor(payload)
            guard let lastField = cursor.u32(), let code = cursor.u32() else { return }
            let last = lastField & 0x7fff_ffff
            goaway = (direction, code, last)
            if code != 0 {
                let debug = String(decoding: UnsafeRawBufferPointer(rebasing: payload[8...]).prefix(200), as: UTF8.self)
                warnConnection(.goAway(from: direction, code: code, lastStream: last, debug: debug))
            }
        default:
            break  // PRIORITY, PING, WINDOW_UPDATE and unknown types change no exchange.
        }
    }

    private func malformed(_ header: FrameHeader, _ reason: HTTP2FrameTrouble, _ direction: StreamDirection) {
        headerDecoders[index(direction)].markTableUnknown()
        streams[header.streamID]?.warnings.append(.http2MalformedFrame(reason))
        warnOnce("malformed-\(header.type)", .malformedFrame(reason, stream: header.streamID))
    }

    private func startBlock(_ block: PendingBlock, fragment payload: UnsafeRawBufferPointer, _ from: Int, _ to: Int,
                            endHeaders: Bool, from direction: StreamDirection, at time: Timestamp) {
        var block = block
        appendFragment(&block, payload, from, to)
        if endHeaders {
            finishBlock(block, from: direction, at: time)
        } else {
            pendingBlocks[index(direction)] = block
        }
    }

    private func appendFragment(_ block: inout PendingBlock, _ payload: UnsafeRawBufferPointer, _ from: Int, _ to: Int) {
        guard !block.tooLarge else { return }
        if block.bytes.count + (to - from) > limits.maxHeaderBlockBytes {
            block.tooLarge = true
            block.bytes = []
            return
        }
        block.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[from..<to]))
    }

    private func finishBlock(_ block: PendingBlock, from direction: StreamDirection, at time: Timestamp) {
        let side = index(direction)
        let targetID = block.promised ?? block.streamID
        guard let stream = stream(targetID, creating: true) else { return }
        if block.promised != nil { stream.promisedOn = block.streamID }
        if block.tooLarge {
            headerDecoders[side].markTableUnknown()
            stream.warnings.append(.http2HeaderBlockOverLimit(limit: limits.maxHeaderBlockBytes))
            warnOnce("block-limit", .headerBlockOverLimit(limit: limits.maxHeaderBlockBytes))
            if block.endStream { endSide(stream, direction, at: time) }
            return
        }
        let decoded = headerDecoders[side].decode(block.bytes)
        if headerDecoders[side].tableUnknown { stream.headerTableUnknown = true }
        if let failure = decoded.failure { stream.warnings.append(failure) }
        if decoded.unknownFields > 0 {
            stream.warnings.append(.hpackEntriesFromBeforeCapture(fields: decoded.unknownFields))
        }
        let fields = decoded.fields
        if block.promised != nil {
            // The promised request, sent by the server on the client's behalf.
            stream.request.fields = fields
            stream.request.headBytes += block.bytes.count
            stream.request.start = time
            stream.request.end = time
            stream.request.ended = true
            return
        }
        let messageSide = stream.side(direction)
        if direction == .serverToClient, let status = fields.first(where: { $0.name == ":status" }).flatMap({ Int($0.value) }),
           (100...199).contains(status), messageSide.fields == nil {
            stream.interim.append(HTTPInterimResponse(status: status, reason: "", headers: HTTPHeaders(fields), time: time))
        } else if messageSide.fields == nil {
            messageSide.fields = fields
            messageSide.headBytes += block.bytes.count
            messageSide.start = messageSide.start ?? time
            if direction == .clientToServer, HTTPHeaders(fields)["content-type"]?.lowercased().hasPrefix("application/grpc") == true {
                stream.isGRPC = true
                stream.request.grpc = GRPCMessageCounter(maxListed: limits.maxListedGRPCMessages)
                stream.response.grpc = GRPCMessageCounter(maxListed: limits.maxListedGRPCMessages)
            }
        } else {
            messageSide.trailers += fields
            messageSide.headBytes += block.bytes.count
        }
        messageSide.end = time
        if block.endStream { endSide(stream, direction, at: time) }
    }

    private func endSide(_ stream: HTTP2Stream, _ direction: StreamDirection, at time: Timestamp) {
        let side = stream.side(direction)
        side.ended = true
        side.end = time
        if stream.isDone {
            report(stream)
            streams[stream.id] = nil
        }
    }

    /// The stream with `id`; new streams are created (within the limit) when `creating`, or for DATA on a
    /// stream never seen (picked up mid-connection).
    private func stream(_ id: UInt32, creating: Bool) -> HTTP2Stream? {
        if let stream = streams[id] { return stream }
        if id % 2 == 1 {
            guard id > highestOdd else { return nil }
            highestOdd = id
        } else {
            guard id > highestEven else { return nil }
            highestEven = id
        }
        if streams.count >= limits.maxOpenStreams, let oldest = streams.keys.min(), let evicted = streams.removeValue(forKey: oldest) {
            evicted.outcome = .unfinished
            evicted.warnings.append(.http2TooManyStreams(limit: limits.maxOpenStreams))
            warnOnce("streams", .tooManyStreams(limit: limits.maxOpenStreams))
            report(evicted)
        }
        let stream = HTTP2Stream(id: id)
        if !creating {
            stream.warnings.append(.http2DataWithoutHeaders)
            stream.headerTableUnknown = true
        }
        streams[id] = stream
        return stream
    }

    // MARK: Reporting

    private func report(_ stream: HTTP2Stream) {
        var warnings = stream.warnings
        var complete = true
        if case .complete = stream.outcome {} else { complete = false }
        var request: HTTPRequest?
        if let upgraded = stream.upgradeRequest {
            request = upgraded
        } else if let fields = stream.request.fields {
            let headers = HTTPHeaders(fields)
            let body = stream.request.body(limits: context.limits, budget: context.budget)
            warnings += body.warnings
            if body.sawGap { complete = false }
            let method = headers[":method"] ?? "(unknown)"
            let target = method == "CONNECT" ? (headers[":authority"] ?? "") : (headers[":path"] ?? "(unknown)")
            let start = stream.request.start ?? currentTime
            request = HTTPRequest(method: method, uri: target, version: "HTTP/2.0",
                                  headers: HTTPHeaders(fields + stream.request.trailers), body: body.finish(),
                                  headSize: stream.request.headBytes, start: start, end: stream.request.end ?? start)
        } else {
            complete = false
        }
        var response: HTTPResponse?
        if let fields = stream.response.fields {
            let headers = HTTPHeaders(fields)
            let body = stream.response.body(limits: context.limits, budget: context.budget)
            warnings += body.warnings
            if body.sawGap { complete = false }
            let start = stream.response.start ?? currentTime
            // `:status` as sent; nil (never a made-up 0) when it is missing or not a number.
            let code = headers[":status"]
            response = HTTPResponse(status: code.flatMap { Int($0) }, statusText: code ?? "", reason: "",
                                    version: "HTTP/2.0",
                                    headers: HTTPHeaders(fields + stream.response.trailers), body: body.finish(),
                                    headSize: stream.response.headBytes, interim: stream.interim, start: start,
                                    end: stream.response.end ?? start)
        } else {
            complete = false
        }
        if stream.headerTableUnknown { complete = false }
        if stream.outcome != .complete { warnings.append(.http2StreamEnded(stream.outcome)) }
        var exchange = HTTPExchange(connection: context.connection, client: context.client, server: context.server,
                                    request: request, response: response, complete: complete, warnings: warnings,
                                    upgrade: nil)
        exchange.http2 = HTTP2StreamFacts(streamID: stream.id, promisedOn: stream.promisedOn, outcome: stream.outcome,
                                          headerTableUnknown: stream.headerTableUnknown)
        if stream.isGRPC { exchange.grpc = grpcFacts(stream, request: request, response: response) }
        context.emit(.exchange(exchange))
    }

    private func grpcFacts(_ stream: HTTP2Stream, request: HTTPRequest?, response: HTTPResponse?) -> GRPCCallFacts {
        let path = request?.uri ?? ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        let service = parts.count >= 2 ? String(parts[parts.count - 2]) : ""
        let method = parts.last.map(String.init) ?? ""
        // grpc-status is in the trailers, or in the headers of a trailers-only response: the last one wins.
        let status = response?.headers.values("grpc-status").last.flatMap { Int($0) }
        let message = response?.headers.values("grpc-message").last.map { $0.removingGRPCPercentEncoding() }
        let requestCounter = stream.request.grpc, responseCounter = stream.response.grpc
        return GRPCCallFacts(service: service, method: method, status: status, message: message,
                             requestMessages: requestCounter?.listed ?? [], responseMessages: responseCounter?.listed ?? [],
                             requestMessageCount: requestCounter?.count ?? 0, responseMessageCount: responseCounter?.count ?? 0)
    }

    private func warnConnection(_ kind: HTTP2ConnectionWarning.Kind, at time: Timestamp? = nil) {
        let warning = HTTP2ConnectionWarning(client: context.client, server: context.server, kind: kind)
        context.emit(.warning(connection: context.connection, warning: AnyConnectionWarning(warning),
                              time: time ?? currentTime))
    }

    private func warnOnce(_ key: String, _ kind: HTTP2ConnectionWarning.Kind) {
        guard warnedLimits.insert(key).inserted else { return }
        warnConnection(kind)
    }
}

/// RFC 9113 section 7 error codes by name.
public enum HTTP2ErrorCode {
    public static func name(_ code: UInt32) -> String {
        let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
                     "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
                     "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
        return code < names.count ? names[Int(code)] : "UNKNOWN_ERROR"
    }
}

extension String {
    /// grpc-message is percent-encoded (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md).
    func removingGRPCPercentEncoding() -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(self.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
