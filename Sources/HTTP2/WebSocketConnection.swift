import BodyDecoding
import FlowReassembly
import HTTPDecoding
import HTTPModel
import PacketDecoding
import TLSWire

/// Decodes RFC 6455 frames on both directions of a connection after a 101 to `Upgrade: websocket`: masking
/// removed, fragments reassembled (bounded), permessage-deflate inflated (context takeover per direction as
/// negotiated), every message reported as a `WebSocketMessage` event.
final class WebSocketConnection: ConnectionHandler {
    private let context: TakeoverContext
    private let limits: HTTP2Limits
    private var directions: [DirectionDecoder]

    init(context: TakeoverContext, limits: HTTP2Limits, handshake: HTTPExchange) {
        self.context = context
        self.limits = limits
        // What the server accepted decides; the client's offer alone does not turn compression on.
        let accepted = handshake.response?.headers.tokens("sec-websocket-extensions") ?? []
        let extensions = (handshake.response?.headers.values("sec-websocket-extensions") ?? []).joined(separator: ",").lowercased()
        let deflate = accepted.contains { $0.hasPrefix("permessage-deflate") }
        let keep = max(context.limits.bodyKeepBytes, WebSocketMessage.textPrefixBytes)
        directions = [
            DirectionDecoder(direction: .clientToServer, deflate: deflate,
                             contextTakeover: !extensions.contains("client_no_context_takeover"), keepBytes: keep,
                             hashing: context.limits.hashBodies, limits: limits),
            DirectionDecoder(direction: .serverToClient, deflate: deflate,
                             contextTakeover: !extensions.contains("server_no_context_takeover"), keepBytes: keep,
                             hashing: context.limits.hashBodies, limits: limits),
        ]
    }

    private func index(_ direction: StreamDirection) -> Int { direction == .clientToServer ? 0 : 1 }

    // WebSocket is the last layer: it never hands the connection on.
    func consume(_ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
        directions[index(direction)].consume(bytes, at: time) { emit($0) }
        return nil
    }

    func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
        directions[index(direction)].gap(length: length, at: time) { emit($0) }
        return nil
    }

    func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
        directions[index(direction)].flush(at: time) { emit($0) }
        return nil
    }

    func close(at time: Timestamp) {
        for i in directions.indices { directions[i].flush(at: time) { emit($0) } }
    }

    private func emit(_ message: DirectionDecoder.Finished) {
        context.emit(.webSocket(WebSocketMessage(
            connection: context.connection, client: context.client, server: context.server, direction: message.direction,
            kind: message.kind, opcode: message.opcode, size: message.size, sha256: message.sha256, kept: message.kept,
            frames: message.frames, compressed: message.compressed, closeCode: message.closeCode,
            closeReason: message.closeReason, time: message.time, warnings: message.warnings)))
    }
}

/// One direction's frame reader and message assembler.
struct DirectionDecoder {
    struct Finished {
        var direction: StreamDirection
        var kind: WebSocketMessage.Kind
        var opcode: UInt8
        var size: Int
        var sha256: String
        var kept: [UInt8]
        var frames: Int
        var compressed: Bool
        var closeCode: UInt16?
        var closeReason: String?
        var time: Timestamp
        var warnings: [HTTPWarning]
    }

    /// A message being assembled (data frames) or a control frame being read.
    final class Assembly {
        let opcode: UInt8
        let compressed: Bool
        let time: Timestamp
        var hash = SHA256()
        var size = 0
        var kept: [UInt8] = []
        var frames = 0
        var warnings: [HTTPWarning] = []
        var overLimit = false
        init(opcode: UInt8, compressed: Bool, time: Timestamp) {
            self.opcode = opcode
            self.compressed = compressed
            self.time = time
        }
    }

    let direction: StreamDirection
    private let inflater: MessageInflater?
    private let keepBytes: Int
    /// Whether messages get their SHA-256 (HTTPDecoderLimits.hashBodies).
    private let hashing: Bool
    private let limits: HTTP2Limits
    private var header: [UInt8] = []
    private var payloadLeft = 0
    private var mask: [UInt8]?
    private var maskOffset = 0
    private var frameFin = false
    private var frameIsControl = false
    private var message: Assembly?
    private var control: Assembly?
    private var lost = false
    private var unmasked: [UInt8] = []

    init(direction: StreamDirection, deflate: Bool, contextTakeover: Bool, keepBytes: Int, hashing: Bool = true,
         limits: HTTP2Limits) {
        self.direction = direction
        inflater = deflate ? MessageInflater(contextTakeover: contextTakeover) : nil
        self.keepBytes = keepBytes
        self.hashing = hashing
        self.limits = limits
    }

    private var inPayload: Bool { payloadLeft > 0 }

    mutating func consume(_ bytes: UnsafeRawBufferPointer, at time: Timestamp, _ emit: (Finished) -> Void) {
        guard !lost else { return }
        var rest = bytes[...]
        while !rest.isEmpty {
            if payloadLeft == 0 {
                header.append(rest[rest.startIndex])
                rest = rest.dropFirst()
                guard let needed = headerLength(), header.count == needed else { continue }
                startFrame(at: time, emit)
                continue
            }
            let take = min(payloadLeft, rest.count)
            let piece = UnsafeRawBufferPointer(rebasing: rest.prefix(take))
            rest = rest.dropFirst(take)
            payloadLeft -= take
            if let mask {
                // Unmask into a buffer reused across frames (a client's every frame is masked).
                if unmasked.count < take { unmasked = [UInt8](repeating: 0, count: max(take, 16 * 1024)) }
                for i in 0..<take { unmasked[i] = piece[i] ^ mask[(maskOffset + i) & 3] }
                maskOffset += take
                let scratch = unmasked
                scratch.withUnsafeBytes { addPayload(UnsafeRawBufferPointer(rebasing: $0.prefix(take))) }
            } else {
                addPayload(piece)
            }
            if payloadLeft == 0 { endFrame(emit) }
        }
    }

    /// Bytes of the header so far needed in all, or nil when not yet known.
    private func headerLength() -> Int? {
        guard header.count >= 2 else { return nil }
        let masked = header[1] & 0x80 != 0
        let base = header[1] & 0x7f
        let lengthBytes = base == 126 ? 2 : base == 127 ? 8 : 0
        return 2 + lengthBytes + (masked ? 4 : 0)
    }

    /// A frame header's fields (RFC 6455 5.2), read with the bounds-checked cursor; nil when cut short. A 64-bit
    /// length beyond `Int.max` (its top bit set, which RFC 6455 forbids) is taken as `Int.max`.
    static func frameHeader(_ bytes: UnsafeRawBufferPointer) -> (first: UInt8, length: Int, mask: [UInt8]?)? {
        var cursor = ByteCursor(bytes)
        guard let first = cursor.u8(), let second = cursor.u8() else { return nil }
        var length = Int(second & 0x7f)
        if length == 126 {
            guard let extended = cursor.u16() else { return nil }
            length = Int(extended)
        } else if length == 127 {
            guard let high = cursor.u32(), let low = cursor.u32() else { return nil }
            length = Int(exactly: UInt64(high) << 32 | UInt64(low)) ?? Int.max
        }
        guard second & 0x80 != 0 else { return (first, length, nil) }
        guard let key = cursor.take(4) else { return nil }
        return (first, length, Array(key))
    }

    private mutating func startFrame(at time: Timestamp, _ emit: (Finished) -> Void) {
        // `consume` calls this once `header` holds the whole header (`headerLength`).
        guard let (first, length, frameMask) = header.withUnsafeBytes({ Self.frameHeader($0) }) else { return }
        frameFin = first & 0x80 != 0
        let rsv1 = first & 0x40 != 0
        let opcode = first & 0x0f
        mask = frameMask
        maskOffset = 0
        header.removeAll(keepingCapacity: true)
        frameIsControl = opcode >= 8
        if frameIsControl {
            control = Assembly(opcode: opcode, compressed: false, time: time)
            control?.frames = 1
            if length > 125 { control?.warnings.append(.webSocketControlFrameTooLong(length)) }
        } else if opcode == 0 {
            if let message { message.frames += 1 } else {
                let orphan = Assembly(opcode: 0, compressed: false, time: time)
                orphan.frames = 1
                orphan.warnings.append(.webSocketOrphanContinuation)
                message = orphan
            }
        } else {
            if let unfinished = message {
                unfinished.warnings.append(.webSocketMessageInterrupted)
                finishMessage(emit)
            }
            let assembly = Assembly(opcode: opcode, compressed: rsv1 && inflater != nil, time: time)
            assembly.frames = 1
            if rsv1 && inflater == nil { assembly.warnings.append(.webSocketRSV1WithoutDeflate) }
            message = assembly
        }
        payloadLeft = length
        if length == 0 { endFrame(emit) }
    }

    private mutating func addPayload(_ bytes: UnsafeRawBufferPointer) {
        if frameIsControl {
            if let control { record(bytes, into: control) }
            return
        }
        guard let message else { return }
        if message.compressed, let inflater {
            inflater.inflate(bytes) { record($0, into: message) }
        } else {
            record(bytes, into: message)
        }
    }

    private func record(_ bytes: UnsafeRawBufferPointer, into assembly: Assembly) {
        guard !assembly.overLimit else { return }
        if assembly.size + bytes.count > limits.maxWebSocketMessageBytes {
            assembly.overLimit = true
            assembly.warnings.append(.webSocketMessageOverLimit(limit: limits.maxWebSocketMessageBytes, covered: assembly.size))
            return
        }
        assembly.size += bytes.count
        if hashing { assembly.hash.update(bytes) }
        let room = max(keepBytes, assembly.opcode >= 8 ? 125 : 0) - assembly.kept.count
        if room > 0 { assembly.kept.append(contentsOf: bytes.prefix(room)) }
    }

    private mutating func endFrame(_ emit: (Finished) -> Void) {
        if frameIsControl {
            if let control { emit(finished(control)) }
            control = nil
            return
        }
        if frameFin { finishMessage(emit) }
    }

    private mutating func finishMessage(_ emit: (Finished) -> Void) {
        guard let message else { return }
        if message.compressed, let inflater {
            inflater.finishMessage { record($0, into: message) }
            if let failure = inflater.failure {
                message.warnings.append(failure)
                inflater.clearFailure()
            }
        }
        self.message = nil
        emit(finished(message))
    }

    private func finished(_ assembly: Assembly) -> Finished {
        let kind: WebSocketMessage.Kind
        switch assembly.opcode {
        case 1: kind = .text
        case 2: kind = .binary
        case 8: kind = .close
        case 9: kind = .ping
        case 10: kind = .pong
        case 0: kind = .binary
        default: kind = .other
        }
        var code: UInt16?, reason: String?
        if kind == .close && assembly.kept.count >= 2 {
            code = UInt16(assembly.kept[0]) << 8 | UInt16(assembly.kept[1])
            reason = String(decoding: assembly.kept[2...], as: UTF8.self)
        }
        return Finished(direction: direction, kind: kind, opcode: assembly.opcode, size: assembly.size,
                        sha256: hashing ? assembly.hash.hexDigest() : "", kept: assembly.kept, frames: assembly.frames,
                        compressed: assembly.compressed, closeCode: code, closeReason: reason, time: assembly.time,
                        warnings: assembly.warnings)
    }

    mutating func gap(length: Int, at time: Timestamp, _ emit: (Finished) -> Void) {
        guard !lost else { return }
        lost = true
        for assembly in [message, control].compactMap({ $0 }) {
            assembly.warnings.append(.webSocketBytesNeverCaptured(length: length))
            emit(finished(assembly))
        }
        message = nil
        control = nil
    }

    mutating func flush(at time: Timestamp, _ emit: (Finished) -> Void) {
        for assembly in [message, control].compactMap({ $0 }) {
            assembly.warnings.append(.webSocketConnectionEndedInMessage)
            emit(finished(assembly))
        }
        message = nil
        control = nil
        payloadLeft = 0
        header.removeAll()
    }
}
