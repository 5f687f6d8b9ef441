import FlowReassembly
import Foundation
@testable import BodyDecoding
@testable import HTTPDecoding
import HTTPModel
import PacketDecoding
import TestSupport

/// Feeds a scripted conversation to an `HTTPStreamDecoder` the way reassembly would, in pieces of a chosen size.
struct Conversation {
    enum Step {
        case client([UInt8])
        case server([UInt8])
        case clientGap(Int)
        case serverGap(Int)
        case clientEnd(StreamEndReason)
        case serverEnd(StreamEndReason)
    }
    var steps: [Step] = []

    mutating func client(_ text: String) { steps.append(.client(Array(text.utf8))) }
    mutating func client(_ bytes: [UInt8]) { steps.append(.client(bytes)) }
    mutating func server(_ text: String) { steps.append(.server(Array(text.utf8))) }
    mutating func server(_ bytes: [UInt8]) { steps.append(.server(bytes)) }

    static let client = Endpoint(address: .v4(0x0a00_0005), port: 51234)
    static let server = Endpoint(address: .v4(0x5db8_d822), port: 80)

    /// Runs the conversation; `pieceSize` splits every data step into pieces of at most that many bytes.
    func run(pieceSize: Int = Int.max, limits: HTTPDecoderLimits = HTTPDecoderLimits(), close: Bool = true,
             takeover: TakeoverFactory? = nil) -> [HTTPEvent] {
        nonisolated(unsafe) var events: [HTTPEvent] = []
        var decoder = HTTPStreamDecoder(limits: limits, takeover: takeover) { events.append($0) }
        let id = ConnectionID(7)
        var clock = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
        func tick() -> Timestamp { clock.nanoseconds += 1_000_000; if clock.nanoseconds >= 1_000_000_000 { clock.seconds += 1; clock.nanoseconds = 0 }; return clock }
        decoder.connectionOpened(id, client: Self.client, server: Self.server, at: clock)
        var ended: Set<StreamDirection> = []
        for step in steps {
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
            case .clientGap(let length): decoder.streamGap(id, .clientToServer, length: length, at: tick())
            case .serverGap(let length): decoder.streamGap(id, .serverToClient, length: length, at: tick())
            case .clientEnd(let reason): decoder.streamEnded(id, .clientToServer, reason: reason, at: tick()); ended.insert(.clientToServer)
            case .serverEnd(let reason): decoder.streamEnded(id, .serverToClient, reason: reason, at: tick()); ended.insert(.serverToClient)
            }
        }
        if close {
            for direction in [StreamDirection.clientToServer, .serverToClient] where !ended.contains(direction) {
                decoder.streamEnded(id, direction, reason: .fin, at: tick())
            }
            decoder.connectionClosed(id, at: tick())
        }
        return events
    }

    func exchanges(pieceSize: Int = Int.max, limits: HTTPDecoderLimits = HTTPDecoderLimits()) -> [HTTPExchange] {
        run(pieceSize: pieceSize, limits: limits).compactMap { if case .exchange(let e) = $0 { return e } else { return nil } }
    }
}

func sha256Hex(_ text: String) -> String { SHA256.hexDigest(of: Array(text.utf8)) }

/// Compresses with Python's own zlib/gzip/brotli/zstandard modules at test time, so the decoders are checked
/// against independent encoders.
func compress(_ data: [UInt8], with coding: String) throws -> [UInt8] {
    let script: String
    switch coding {
    case "gzip": script = "import sys,gzip; sys.stdout.buffer.write(gzip.compress(sys.stdin.buffer.read()))"
    case "zlib": script = "import sys,zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))"
    case "raw-deflate": script = "import sys,zlib; c=zlib.compressobj(6, zlib.DEFLATED, -15); d=sys.stdin.buffer.read(); sys.stdout.buffer.write(c.compress(d)+c.flush())"
    case "br": script = "import sys,brotli; sys.stdout.buffer.write(brotli.compress(sys.stdin.buffer.read()))"
    case "zstd": script = "import sys,zstandard; sys.stdout.buffer.write(zstandard.ZstdCompressor().compress(sys.stdin.buffer.read()))"
    default: fatalError("unknown coding \(coding)")
    }
    let result = try TestSupport.run("python3", ["-c", script], input: Data(data))
    guard result.status == 0 else { throw CompressionToolError(message: result.stderrText) }
    return [UInt8](result.stdout)
}

struct CompressionToolError: Error { var message: String }

/// A body large and varied enough to span many deflate blocks and output buffers.
func sampleBody(_ size: Int) -> [UInt8] {
    var state: UInt32 = 2463534242
    var out: [UInt8] = []
    out.reserveCapacity(size)
    let words = ["alpha", "beta", "gamma", "delta", "{\"id\":", "\"name\":", "\n", " ", "42", "é"]
    while out.count < size {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5
        out.append(contentsOf: words[Int(state % UInt32(words.count))].utf8)
    }
    return Array(out.prefix(size))
}

extension HTTPEvent {
    var exchange: HTTPExchange? { if case .exchange(let e) = self { return e } else { return nil } }
}
