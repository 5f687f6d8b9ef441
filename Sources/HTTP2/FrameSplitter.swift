import HTTPModel
import TLSWire

/// RFC 9113 section 4.1 frame header, validated for length only; types and flags are the caller's to judge.
public struct FrameHeader: Sendable, Hashable {
    public var length: Int
    public var type: UInt8
    public var flags: UInt8
    public var streamID: UInt32

    public static let size = 9

    public init(length: Int, type: UInt8, flags: UInt8, streamID: UInt32) {
        self.length = length
        self.type = type
        self.flags = flags
        self.streamID = streamID
    }

    /// Reads the header at the cursor (TLSWire's byte cursor, the one the TLS wire format is read with); nil when
    /// fewer than `size` bytes are left.
    init?(_ cursor: inout ByteCursor) {
        guard cursor.remaining >= Self.size, let length = cursor.u24(), let type = cursor.u8(), let flags = cursor.u8(),
              let streamID = cursor.u32() else { return nil }
        self.init(length: length, type: type, flags: flags, streamID: streamID & 0x7fff_ffff)
    }

    public func has(_ flag: UInt8) -> Bool { flags & flag != 0 }
}

/// Frame types (RFC 9113 section 6) and flags.
public enum FrameType {
    public static let data: UInt8 = 0x0, headers: UInt8 = 0x1, priority: UInt8 = 0x2, rstStream: UInt8 = 0x3
    public static let settings: UInt8 = 0x4, pushPromise: UInt8 = 0x5, ping: UInt8 = 0x6, goaway: UInt8 = 0x7
    public static let windowUpdate: UInt8 = 0x8, continuation: UInt8 = 0x9

    public static let endStream: UInt8 = 0x1, ack: UInt8 = 0x1, endHeaders: UInt8 = 0x4, padded: UInt8 = 0x8
    public static let priorityFlag: UInt8 = 0x20
}

/// Cuts one direction's bytes into HTTP/2 frames, incrementally: any split of the input gives the same pieces.
/// DATA payloads stream through in pieces with their padding removed, so a large body is never buffered; other
/// frames are buffered whole up to a limit and handed over in one piece (or skipped, with the reason).
struct FrameSplitter {
    enum Piece {
        /// A whole non-DATA frame; the payload is lent for the call only.
        case frame(FrameHeader, UnsafeRawBufferPointer)
        /// Part of a DATA frame's data (padding removed). `last`: the frame's data ends here.
        case data(FrameHeader, UnsafeRawBufferPointer, last: Bool)
        /// A frame that could not be used: too large to buffer, or padding longer than the frame.
        case skipped(FrameHeader, reason: HTTP2FrameTrouble)
    }

    private enum Phase {
        case header
        case payload
        case dataPadLength
        case data(remaining: Int, padding: Int)
        case skip(remaining: Int)
    }

    private let maxBufferedFrameBytes: Int
    private var phase = Phase.header
    private var header = FrameHeader(length: 0, type: 0, flags: 0, streamID: 0)
    private var buffer: [UInt8] = []
    /// Frames seen whole or in part, for the "frames" count in summaries.
    private(set) var frames = 0

    init(maxBufferedFrameBytes: Int) {
        self.maxBufferedFrameBytes = maxBufferedFrameBytes
    }

    /// Feeds `bytes`, calling `handle` for every piece they complete, in order.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, _ handle: (Piece) -> Void) {
        var rest = bytes[...]
        while !rest.isEmpty {
            switch phase {
            case .header:
                var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: rest))
                if buffer.isEmpty, let whole = FrameHeader(&cursor) {
                    header = whole
                    rest = rest.dropFirst(FrameHeader.size)
                } else {
                    let take = min(FrameHeader.size - buffer.count, rest.count)
                    buffer.append(contentsOf: rest.prefix(take))
                    rest = rest.dropFirst(take)
                    guard buffer.count == FrameHeader.size else { return }
                    header = buffer.withUnsafeBytes { bytes in
                        var cursor = ByteCursor(bytes)
                        return FrameHeader(&cursor)!  // `buffer` holds exactly `size` bytes
                    }
                    buffer.removeAll(keepingCapacity: true)
                }
                frames += 1
                startPayload(handle)
            case .payload:
                let need = header.length - buffer.count
                if buffer.isEmpty && rest.count >= need {
                    handle(.frame(header, UnsafeRawBufferPointer(rebasing: rest.prefix(need))))
                    rest = rest.dropFirst(need)
                    phase = .header
                } else {
                    let take = min(need, rest.count)
                    buffer.append(contentsOf: rest.prefix(take))
                    rest = rest.dropFirst(take)
                    guard buffer.count == header.length else { return }
                    buffer.withUnsafeBytes { handle(.frame(header, $0)) }
                    buffer.removeAll(keepingCapacity: buffer.count <= 64 * 1024)
                    phase = .header
                }
            case .dataPadLength:
                let padding = Int(rest[rest.startIndex])
                rest = rest.dropFirst()
                let data = header.length - 1 - padding
                if data < 0 {
                    handle(.skipped(header, reason: .dataPaddingLongerThanFrame(padding: padding, frameLength: header.length)))
                    phase = .skip(remaining: header.length - 1)
                } else {
                    startData(remaining: data, padding: padding, handle)
                }
            case .data(let remaining, let padding):
                let take = min(remaining, rest.count)
                let last = take == remaining
                handle(.data(header, UnsafeRawBufferPointer(rebasing: rest.prefix(take)), last: last))
                rest = rest.dropFirst(take)
                phase = last ? (padding > 0 ? .skip(remaining: padding) : .header) : .data(remaining: remaining - take, padding: padding)
            case .skip(let remaining):
                let take = min(remaining, rest.count)
                rest = rest.dropFirst(take)
                phase = take == remaining ? .header : .skip(remaining: remaining - take)
            }
            if case .skip(0) = phase { phase = .header }
        }
    }

    private mutating func startPayload(_ handle: (Piece) -> Void) {
        if header.type == FrameType.data {
            if header.has(FrameType.padded) {
                if header.length == 0 {
                    handle(.skipped(header, reason: .paddedDataWithoutPadLength))
                    phase = .header
                } else {
                    phase = .dataPadLength
                }
            } else {
                startData(remaining: header.length, padding: 0, handle)
            }
        } else if header.length > maxBufferedFrameBytes {
            handle(.skipped(header, reason: .frameOverLimit(length: header.length, limit: maxBufferedFrameBytes)))
            phase = .skip(remaining: header.length)
        } else if header.length == 0 {
            handle(.frame(header, UnsafeRawBufferPointer(start: nil, count: 0)))
            phase = .header
        } else {
            phase = .payload
        }
    }

    private mutating func startData(remaining: Int, padding: Int, _ handle: (Piece) -> Void) {
        if remaining == 0 {
            handle(.data(header, UnsafeRawBufferPointer(start: nil, count: 0), last: true))
            phase = padding > 0 ? .skip(remaining: padding) : .header
        } else {
            phase = .data(remaining: remaining, padding: padding)
        }
    }
}
