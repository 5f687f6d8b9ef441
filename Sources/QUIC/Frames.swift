import TLSWire

/// One frame of a decrypted packet (RFC 9000 section 19; DATAGRAM from RFC 9221). Data borrows the packet's
/// plaintext: use it before the next packet is opened.
enum Frame {
    case padding
    case ping
    case ack
    case resetStream(stream: UInt64, errorCode: UInt64, finalSize: UInt64)
    case stopSending(stream: UInt64, errorCode: UInt64)
    case crypto(offset: UInt64, data: UnsafeRawBufferPointer)
    case stream(stream: UInt64, offset: UInt64, data: UnsafeRawBufferPointer, fin: Bool)
    case newConnectionID(sequence: UInt64, id: UnsafeRawBufferPointer)
    case retireConnectionID(sequence: UInt64)
    case connectionClose(errorCode: UInt64, application: Bool, reason: UnsafeRawBufferPointer)
    case handshakeDone
    /// MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, the BLOCKED frames, NEW_TOKEN, PATH_CHALLENGE/RESPONSE, DATAGRAM:
    /// read past by their encodings, nothing kept.
    case skipped(type: UInt64)
}

/// Reads a packet's frames in order. A frame it cannot read (cut short, or a type it does not know, whose length
/// it cannot tell) ends the packet: `problem` then says which type and where.
struct FrameReader {
    private var cursor: ByteCursor
    /// Set when reading stopped before the end: the frame type and its offset in the packet's plaintext.
    private(set) var problem: (type: UInt64, offset: Int, known: Bool)?

    init(_ plaintext: UnsafeRawBufferPointer) { cursor = ByteCursor(plaintext) }

    mutating func next() -> Frame? {
        guard !cursor.isAtEnd, problem == nil else { return nil }
        let start = cursor.offset
        guard let type = cursor.quicVarInt() else { return fail(0, start, known: false) }
        guard let frame = read(type) else { return fail(type, start, known: Self.isKnown(type)) }
        return frame
    }

    private mutating func fail(_ type: UInt64, _ offset: Int, known: Bool) -> Frame? {
        problem = (type, offset, known)
        return nil
    }

    static func isKnown(_ type: UInt64) -> Bool { type <= 0x1e || type == 0x30 || type == 0x31 }

    private mutating func read(_ type: UInt64) -> Frame? {
        switch type {
        case 0x00:
            // Runs of padding are common (Initials are padded to 1200 bytes): skip them in one step.
            while cursor.remaining > 0, cursor.bytes[cursor.offset] == 0 { cursor.offset += 1 }
            return .padding
        case 0x01: return .ping
        case 0x02, 0x03:
            guard cursor.quicVarInt() != nil, cursor.quicVarInt() != nil, let count = cursor.quicVarInt(), cursor.quicVarInt() != nil
            else { return nil }
            // Each range is two varints of at least a byte: a count larger than what is left is malformed.
            guard count <= UInt64(cursor.remaining / 2) else { return nil }
            for _ in 0..<count { guard cursor.quicVarInt() != nil, cursor.quicVarInt() != nil else { return nil } }
            if type == 0x03 { for _ in 0..<3 { guard cursor.quicVarInt() != nil else { return nil } } }
            return .ack
        case 0x04:
            guard let stream = cursor.quicVarInt(), let code = cursor.quicVarInt(), let size = cursor.quicVarInt() else { return nil }
            return .resetStream(stream: stream, errorCode: code, finalSize: size)
        case 0x05:
            guard let stream = cursor.quicVarInt(), let code = cursor.quicVarInt() else { return nil }
            return .stopSending(stream: stream, errorCode: code)
        case 0x06:
            guard let offset = cursor.quicVarInt(), let length = cursor.varintLength(), let data = cursor.take(length)
            else { return nil }
            return .crypto(offset: offset, data: data)
        case 0x07:
            guard let length = cursor.varintLength(), cursor.skip(length) else { return nil }
            return .skipped(type: type)
        case 0x08...0x0f:
            guard let stream = cursor.quicVarInt() else { return nil }
            var offset: UInt64 = 0
            if type & 0x04 != 0 { guard let value = cursor.quicVarInt() else { return nil }; offset = value }
            let data: UnsafeRawBufferPointer
            if type & 0x02 != 0 {
                guard let length = cursor.varintLength(), let bytes = cursor.take(length) else { return nil }
                data = bytes
            } else {
                data = cursor.rest()
            }
            // RFC 9000 section 19.8: offset + length stays below 2^62.
            guard offset < 1 << 62, UInt64(data.count) <= (1 << 62) - offset else { return nil }
            return .stream(stream: stream, offset: offset, data: data, fin: type & 0x01 != 0)
        case 0x10, 0x12, 0x13, 0x14, 0x16, 0x17, 0x19:
            guard let value = cursor.quicVarInt() else { return nil }
            return type == 0x19 ? .retireConnectionID(sequence: value) : .skipped(type: type)
        case 0x11, 0x15:
            guard cursor.quicVarInt() != nil, cursor.quicVarInt() != nil else { return nil }
            return .skipped(type: type)
        case 0x18:
            guard let sequence = cursor.quicVarInt(), cursor.quicVarInt() != nil, let id = cursor.vector8(), (1...20).contains(id.count),
                  cursor.skip(16) else { return nil }
            return .newConnectionID(sequence: sequence, id: id)
        case 0x1a, 0x1b:
            guard cursor.skip(8) else { return nil }
            return .skipped(type: type)
        case 0x1c, 0x1d:
            guard let code = cursor.quicVarInt() else { return nil }
            if type == 0x1c { guard cursor.quicVarInt() != nil else { return nil } }  // the frame type that caused it
            guard let length = cursor.varintLength(), let reason = cursor.take(length) else { return nil }
            return .connectionClose(errorCode: code, application: type == 0x1d, reason: reason)
        case 0x1e: return .handshakeDone
        case 0x30:
            _ = cursor.rest()
            return .skipped(type: type)
        case 0x31:
            guard let length = cursor.varintLength(), cursor.skip(length) else { return nil }
            return .skipped(type: type)
        default:
            return nil
        }
    }
}
