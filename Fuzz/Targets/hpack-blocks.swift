import FlowReassembly
@testable import HTTP2
import HTTPDecoding
import HTTPModel
import PacketDecoding

// Header blocks through NIOHPACK exactly as the HTTP2 module drives it: an `HTTP2Connection` made by the takeover
// factory (ALPN h2, or picked up mid-connection so the header table is unknown and blocks are decoded field by
// field), fed frames the harness writes around the fuzzer's header-block bytes. The fuzzer chooses the blocks,
// how they are split over HEADERS / PUSH_PROMISE / CONTINUATION, padding, stream ids, SETTINGS_HEADER_TABLE_SIZE
// each way, DATA, RST_STREAM, GOAWAY, raw bytes and gaps; HPACK state carries across blocks, so dynamic-table
// insertions, evictions and size updates are reached. Every event the connection emits is rendered far enough to
// touch its fields.
//
// Input: options byte (bit 0 mid-connection pickup, bit 1 small limits, bits 2-3 segment size), then steps:
//   control byte: bit 0 side (0 client, 1 server); bits 1-3 kind; bits 4-7 flags argument
//     0 HEADERS: stream byte, 16-bit length + block; argument bits: 0 END_STREAM, 1 END_HEADERS, 2 PADDED, 3 PRIORITY
//     1 CONTINUATION: stream byte, 16-bit length + block; argument bit 1 END_HEADERS
//     2 SETTINGS with HEADER_TABLE_SIZE: 16-bit value times 4 (argument bit 0: an ACK instead)
//     3 DATA: stream byte, 16-bit length + payload; argument bit 0 END_STREAM
//     4 PUSH_PROMISE: stream byte, promised stream byte, 16-bit length + block; argument bit 1 END_HEADERS
//     5 RST_STREAM or GOAWAY (argument bit 0): stream byte, error code byte
//     6 raw: 16-bit length + bytes
//     7 gap of 16-bit length, or (argument bit 0) the side's end

private final class EventCount { var count = 0 }

private func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
    let length = payload.count
    return [UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF), type, flags,
            UInt8((stream >> 24) & 0x7F), UInt8((stream >> 16) & 0xFF), UInt8((stream >> 8) & 0xFF), UInt8(stream & 0xFF)]
        + payload
}

private func touch(_ event: HTTPEvent) -> Int {
    switch event {
    case .exchange(let exchange):
        var total = exchange.warnings.reduce(0) { $0 + $1.description.utf8.count }
        if let request = exchange.request {
            total += request.method.utf8.count + request.uri.utf8.count
            for header in request.headers { total += header.name.utf8.count + header.value.utf8.count }
        }
        if let response = exchange.response {
            total += (response.status ?? 0) + response.statusText.utf8.count + response.reason.utf8.count
            for header in response.headers { total += header.name.utf8.count + header.value.utf8.count }
        }
        return total
    case .warning(_, let warning, _):
        precondition(!warning.description.isEmpty)
        return warning.description.utf8.count
    default:
        return 1
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHPACKBlocks(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let segmentSize = [1, 7, 64, 1 << 16][Int((options >> 2) & 3)]
    var limits = HTTP2Limits()
    var httpLimits = HTTPDecoderLimits()
    if options & 2 != 0 {
        limits.maxHeaderListBytes = 512
        limits.maxHeaderTableBytes = 256
        limits.maxHeaderBlockBytes = 600
        limits.maxOpenStreams = 4
        limits.maxBufferedFrameBytes = 1024
        httpLimits.bodyKeepBytes = 256
    }
    let events = EventCount()
    let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    let context = TakeoverContext(connection: ConnectionID(1), client: Endpoint(address: .v4(0x0A00_0001), port: 50000),
                                  server: Endpoint(address: .v4(0x0A00_0002), port: 443), limits: httpLimits,
                                  budget: nil) { events.count += touch($0) }
    let midConnection = options & 1 != 0
    let firstFrame = frame(4, 0, 0, [])
    guard let connection = HTTP2Takeover(limits: limits).factory(context, midConnection
        ? .unrecognizedStart(firstFrame, at: time) : .negotiated("h2")) else {
        preconditionFailure("the takeover refused a connection it should claim")
    }
    var ended = [false, false]
    func send(_ side: Int, _ bytes: [UInt8]) {
        guard !ended[side] else { return }
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + segmentSize)
            bytes[start..<end].withUnsafeBytes {
                _ = connection.consume(side == 0 ? .clientToServer : .serverToClient, $0, at: time)
            }
            start = end
        }
    }
    // The router gives a claimed connection the bytes it was claimed by, then the rest.
    send(0, midConnection ? firstFrame : Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8))

    var steps = 0
    while !input.isEmpty && steps < 1024 {
        steps += 1
        let control = input.byte()
        let side = Int(control & 1)
        let flags = control >> 4
        switch (control >> 1) & 7 {
        case 0:
            let stream = UInt32(input.byte())
            var payload = Array(input.take(Int(input.uint16())))
            var frameFlags = (flags & 1) | (flags & 2 != 0 ? 0x4 : 0)
            if flags & 8 != 0 {
                frameFlags |= 0x20
                payload = [0, 0, 0, 1, 16] + payload
            }
            if flags & 4 != 0 {
                frameFlags |= 0x8
                let padding = Int(payload.first ?? 0) % 32
                payload = [UInt8(padding)] + payload + [UInt8](repeating: 0, count: padding)
            }
            send(side, frame(1, frameFlags, stream, payload))
        case 1:
            let stream = UInt32(input.byte())
            send(side, frame(9, flags & 2 != 0 ? 0x4 : 0, stream, Array(input.take(Int(input.uint16())))))
        case 2:
            if flags & 1 != 0 {
                send(side, frame(4, 1, 0, []))
            } else {
                let value = UInt32(input.uint16()) * 4
                send(side, frame(4, 0, 0, [0, 1, UInt8(value >> 24), UInt8((value >> 16) & 0xFF),
                                           UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]))
            }
        case 3:
            let stream = UInt32(input.byte())
            send(side, frame(0, flags & 1, stream, Array(input.take(Int(input.uint16())))))
        case 4:
            let stream = UInt32(input.byte())
            let promised = UInt32(input.byte())
            send(side, frame(5, flags & 2 != 0 ? 0x4 : 0, stream,
                             [0, 0, 0, UInt8(promised)] + Array(input.take(Int(input.uint16())))))
        case 5:
            let stream = UInt32(input.byte())
            let code = input.byte()
            if flags & 1 != 0 {
                send(side, frame(7, 0, 0, [0, 0, 0, UInt8(stream), 0, 0, 0, code]))
            } else {
                send(side, frame(3, 0, stream, [0, 0, 0, code]))
            }
        case 6:
            send(side, Array(input.take(Int(input.uint16()))))
        default:
            let direction: StreamDirection = side == 0 ? .clientToServer : .serverToClient
            if flags & 1 != 0 {
                if !ended[side] { _ = connection.end(direction, reason: .fin, at: time) }
                ended[side] = true
            } else {
                let length = Int(input.uint16())
                if !ended[side] { _ = connection.gap(direction, length: length, at: time) }
            }
        }
    }
    connection.close(at: time)
    return 0
}
