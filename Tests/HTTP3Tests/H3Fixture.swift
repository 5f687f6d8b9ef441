import FlowReassembly
import Foundation
import HTTP3
import HTTPModel
import PacketDecoding

/// A fixture of Scripts/fixtures/make-h3-streams.py: the stream pieces aioquic's client and server sent, in order,
/// and the script's record of what it sent (the oracle).
struct H3Fixture {
    struct Piece: Decodable {
        var t: Int
        var stream: UInt64?
        var reset: UInt64?
        var client: Bool
        var hex: String?
        var fin: Bool?
        var code: UInt64?

        var bytes: [UInt8] {
            let digits = Array(hex ?? "")
            return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
        }
    }

    struct Record: Decodable {
        struct Message: Decodable {
            var headers: [[String]]
            var body_sha256: String?
            var body_bytes: Int?
            var trailers: [[String]]?
            var body_bytes_before_reset: Int?
        }
        struct Reset: Decodable { var by: String; var code: UInt64 }
        var stream: UInt64?
        var push_stream: UInt64?
        var push_id: UInt64?
        var promised_on: UInt64?
        var request: Message
        var response: Message?
        var interim: [[String]]?
        var reset: Reset?
        var goaway: UInt64?
    }

    struct Manifest: Decodable { var exchanges: [Record] }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/h3")
    static let client = Endpoint(address: .v4(0x0a00_0002), port: 51000)
    static let server = Endpoint(address: .v4(0x0a00_0001), port: 443)

    let pieces: [Piece]
    let manifest: Manifest

    init(_ name: String) throws {
        let lines = try String(contentsOf: Self.directory.appendingPathComponent(name + ".jsonl"), encoding: .utf8)
        pieces = try lines.split(separator: "\n").map { try JSONDecoder().decode(Piece.self, from: Data($0.utf8)) }
        manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: Self.directory.appendingPathComponent(name + ".json")))
    }

    /// Feeds every piece (each cut into `chunk`-byte calls) and returns what the connection emitted.
    func run(chunk: Int = .max, limits: HTTP3Limits = HTTP3Limits(), skipping: (Piece) -> Bool = { _ in false },
             gapInstead: Bool = false) -> [HTTPEvent] {
        var events: [HTTPEvent] = []
        let connection = HTTP3Connection(connection: ConnectionID(7), client: Self.client, server: Self.server,
                                         limits: HTTPDecoderLimits(), http3Limits: limits, budget: nil) { events.append($0) }
        for piece in pieces {
            let time = Timestamp(seconds: 1_700_000_000, nanoseconds: Int32(piece.t) * 1_000_000)
            if let reset = piece.reset {
                connection.streamReset(reset, fromClient: piece.client, errorCode: piece.code ?? 0, at: time)
                continue
            }
            guard let stream = piece.stream else { continue }
            let bytes = piece.bytes
            if skipping(piece) {
                if gapInstead { connection.streamGap(stream, fromClient: piece.client, length: bytes.count, at: time) }
                continue
            }
            if bytes.isEmpty {
                connection.streamData(stream, fromClient: piece.client, bytes: UnsafeRawBufferPointer(start: nil, count: 0),
                                      fin: piece.fin ?? false, at: time)
            }
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                bytes[offset..<end].withUnsafeBytes {
                    connection.streamData(stream, fromClient: piece.client, bytes: $0, fin: end == bytes.count && piece.fin == true,
                                          at: time)
                }
                offset = end
            }
        }
        connection.end(at: Timestamp(seconds: 1_700_000_001, nanoseconds: 0))
        return events
    }

    static func exchanges(_ events: [HTTPEvent]) -> [HTTPExchange] {
        events.compactMap { if case .exchange(let exchange) = $0 { return exchange }; return nil }
    }

    static func pairs(_ headers: HTTPHeaders) -> [[String]] { headers.fields.map { [$0.name, $0.value] } }
}
