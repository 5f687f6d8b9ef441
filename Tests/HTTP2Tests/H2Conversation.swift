import FlowReassembly
@testable import HTTP2
import HTTPDecoding
import HTTPModel
import NIOCore
import NIOHPACK
import PacketDecoding

/// Builds HTTP/2 bytes frame by frame, with swift-nio-http2's HPACK encoder per direction, and feeds them to an
/// `HTTPStreamDecoder` with the HTTP/2 takeover the way reassembly would, in pieces of a chosen size.
struct H2Conversation {
    enum Step {
        case client([UInt8])
        case server([UInt8])
        case clientGap(Int)
    }

    var steps: [Step] = []
    var clientEncoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: false)
    var serverEncoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: false)

    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let client = Endpoint(address: .v4(0x0a00_0005), port: 51234)
    static let server = Endpoint(address: .v4(0x0a00_0001), port: 80)

    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xff), UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff), type, flags,
         UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)] + payload
    }

    static func settings(_ pairs: [(UInt16, UInt32)]) -> [UInt8] {
        frame(FrameType.settings, stream: 0, pairs.flatMap { id, value in
            [UInt8(id >> 8), UInt8(id & 0xff), UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        })
    }

    static func block(_ encoder: inout HPACKEncoder, _ fields: [(String, String)]) -> [UInt8] {
        try! encoder.beginEncoding(allocator: ByteBufferAllocator())
        try! encoder.append(headers: fields.map { (name: $0.0, value: $0.1) })
        var buffer = try! encoder.endEncoding()
        return buffer.readBytes(length: buffer.readableBytes)!
    }

    mutating func clientBlock(_ fields: [(String, String)]) -> [UInt8] { Self.block(&clientEncoder, fields) }
    mutating func serverBlock(_ fields: [(String, String)]) -> [UInt8] { Self.block(&serverEncoder, fields) }

    mutating func clientHeaders(stream: UInt32, _ fields: [(String, String)], endStream: Bool = true) {
        steps.append(.client(Self.frame(FrameType.headers, flags: FrameType.endHeaders | (endStream ? FrameType.endStream : 0),
                                        stream: stream, clientBlock(fields))))
    }

    mutating func serverHeaders(stream: UInt32, _ fields: [(String, String)], endStream: Bool = false) {
        steps.append(.server(Self.frame(FrameType.headers, flags: FrameType.endHeaders | (endStream ? FrameType.endStream : 0),
                                        stream: stream, serverBlock(fields))))
    }

    mutating func serverData(stream: UInt32, _ text: String, endStream: Bool = true, padding: Int? = nil) {
        var payload = Array(text.utf8)
        var flags: UInt8 = endStream ? FrameType.endStream : 0
        if let padding {
            payload = [UInt8(padding)] + payload + [UInt8](repeating: 0, count: padding)
            flags |= FrameType.padded
        }
        steps.append(.server(Self.frame(FrameType.data, flags: flags, stream: stream, payload)))
    }

    static func get(_ path: String) -> [(String, String)] {
        [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "example.test"), ("user-agent", "h2-test")]
    }

    /// Runs the conversation; every data step is split into pieces of at most `pieceSize` bytes.
    /// `alpn`: the connection is announced as ALPN "h2" (as TLS decryption does) before its first bytes.
    func run(pieceSize: Int = Int.max, limits: HTTP2Limits = HTTP2Limits(), prefaceFirst: Bool = true,
             alpn: String? = nil) -> [HTTPEvent] {
        nonisolated(unsafe) var events: [HTTPEvent] = []
        var decoder = HTTPStreamDecoder(takeover: HTTP2Takeover(limits: limits).factory) { events.append($0) }
        let id = ConnectionID(3)
        var clock = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
        func tick() -> Timestamp { clock.nanoseconds += 1_000_000; return clock }
        decoder.connectionOpened(id, client: Self.client, server: Self.server, at: clock)
        if let alpn { decoder.applicationProtocolNegotiated(id, alpn, at: clock) }
        var all = steps
        if prefaceFirst { all.insert(.client(Self.preface), at: 0) }
        for step in all {
            switch step {
            case .client(let bytes), .server(let bytes):
                let direction: StreamDirection
                if case .client = step { direction = .clientToServer } else { direction = .serverToClient }
                let time = tick()
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + pieceSize)
                    bytes[offset..<end].withUnsafeBytes { decoder.streamData(id, direction, $0, at: time) }
                    offset = end
                }
            case .clientGap(let length):
                decoder.streamGap(id, .clientToServer, length: length, at: tick())
            }
        }
        decoder.streamEnded(id, .clientToServer, reason: .fin, at: tick())
        decoder.streamEnded(id, .serverToClient, reason: .fin, at: tick())
        decoder.connectionClosed(id, at: tick())
        return events
    }

    func exchanges(pieceSize: Int = Int.max, limits: HTTP2Limits = HTTP2Limits()) -> [HTTPExchange] {
        run(pieceSize: pieceSize, limits: limits).compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }
    }
}

/// The HTTP/2 decoder's connection warnings, as values.
func connectionWarnings(_ events: [HTTPEvent]) -> [HTTP2ConnectionWarning.Kind] {
    events.compactMap { if case .warning(_, let warning, _) = $0 { (warning.value as? HTTP2ConnectionWarning)?.kind } else { nil } }
}

func warnings(_ events: [HTTPEvent]) -> [String] {
    events.compactMap { if case .warning(_, let warning, _) = $0 { return warning.description } else { return nil } }
}
