import TLSWire

/// RFC 9114 section 7.1 frames from one side of one QUIC stream, incrementally: a varint type, a varint length,
/// the payload. DATA payloads stream through in pieces (a large body is never buffered); other frames are
/// buffered whole up to a limit, past which they are skipped and said to be.
///
/// The caller may stop after any piece (a header block waiting for QPACK entries holds back what follows it):
/// `consume` then returns how many bytes it read, and the rest is given again later.
struct HTTP3FrameReader {
    enum Piece {
        case frame(type: UInt64, payload: UnsafeRawBufferPointer)
        /// DATA payload bytes; `last` when they end the frame.
        case data(UnsafeRawBufferPointer, last: Bool)
        case skipped(type: UInt64, length: UInt64)
    }

    static let dataType: UInt64 = 0x0

    let maxBufferedFrameBytes: Int
    /// A frame header being read (type and length varints, at most 16 bytes).
    private var header: [UInt8] = []
    private var type: UInt64 = 0
    private var left: UInt64 = 0
    private var inPayload = false
    private var skipping = false
    private var payload: [UInt8] = []

    init(maxBufferedFrameBytes: Int) { self.maxBufferedFrameBytes = maxBufferedFrameBytes }

    /// True when the bytes so far end on a frame boundary (a FIN elsewhere cuts a frame short).
    var atFrameBoundary: Bool { !inPayload && header.isEmpty }

    /// Reads frames until the bytes run out or `each` returns false; returns the bytes read.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, _ each: (Piece) -> Bool) -> Int {
        var offset = 0
        while offset < bytes.count {
            if !inPayload {
                header.append(bytes[offset])
                offset += 1
                guard let (frameType, length) = Self.parseHeader(header) else { continue }
                header.removeAll(keepingCapacity: true)
                type = frameType
                left = length
                inPayload = true
                skipping = frameType != Self.dataType && length > UInt64(maxBufferedFrameBytes)
                if skipping && !each(.skipped(type: frameType, length: length)) {
                    if left == 0 { inPayload = false }
                    return offset
                }
                if left == 0 {
                    inPayload = false
                    let keepGoing = frameType == Self.dataType
                        ? each(.data(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset]), last: true))
                        : each(.frame(type: frameType, payload: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset])))
                    if !keepGoing { return offset }
                }
                continue
            }
            let take = Int(min(left, UInt64(bytes.count - offset)))
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)])
            offset += take
            left -= UInt64(take)
            let done = left == 0
            if done { inPayload = false }
            if type == Self.dataType {
                if !each(.data(piece, last: done)) { return offset }
            } else if skipping {
                continue
            } else if done && payload.isEmpty {
                if !each(.frame(type: type, payload: piece)) { return offset }
            } else {
                payload.append(contentsOf: piece)
                if done {
                    let whole = payload
                    payload.removeAll(keepingCapacity: true)
                    let keepGoing = whole.withUnsafeBytes { each(.frame(type: type, payload: $0)) }
                    if !keepGoing { return offset }
                }
            }
        }
        return offset
    }

    /// Type and length once both varints are whole.
    private static func parseHeader(_ bytes: [UInt8]) -> (UInt64, UInt64)? {
        let typeLength = 1 << Int(bytes[0] >> 6)
        guard bytes.count > typeLength, bytes.count >= typeLength + (1 << Int(bytes[typeLength] >> 6)) else { return nil }
        return bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            guard let type = cursor.quicVarInt(), let length = cursor.quicVarInt() else { return nil }
            return (type, length)
        }
    }
}

/// A QUIC varint read one byte at a time (a unidirectional stream's type, a push stream's push ID).
struct VarIntAccumulator {
    private var bytes: [UInt8] = []

    /// The value once its last byte is fed.
    mutating func feed(_ byte: UInt8) -> UInt64? {
        bytes.append(byte)
        guard bytes.count == 1 << Int(bytes[0] >> 6) else { return nil }
        defer { bytes = [] }
        return bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            return cursor.quicVarInt()
        }
    }
}
