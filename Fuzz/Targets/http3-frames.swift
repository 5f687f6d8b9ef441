import FlowReassembly
import HTTP3
import HTTPModel
import PacketDecoding

// HTTP/3 frames and QPACK (nghttp3's decoder) exactly as the QUIC layer drives them: an `HTTP3Connection` fed
// stream data, resets, gaps and STOP_SENDING for request streams and unidirectional streams (control, push, QPACK
// encoder and decoder, unknown types: the stream type is the first byte the fuzzer writes), each piece cut into
// segments. QPACK state carries across blocks, so dynamic-table inserts, blocked blocks and their unblocking are
// reached. Every event is rendered far enough to touch its fields.
//
// Input: options byte (bit 0 small limits, bits 2-3 segment size), then steps:
//   control byte: bit 0 side (0 client, 1 server); bits 1-3 kind; bits 4-7 argument
//     0 request stream data: stream index byte (id = index * 4), 16-bit length + bytes; argument bit 0 FIN
//     1 unidirectional stream data: index byte (id = index * 4 + 2 + side), 16-bit length + bytes; argument bit 0 FIN
//     2 RESET_STREAM: stream id byte, 16-bit error code
//     3 gap: stream id byte, 16-bit length
//     4 STOP_SENDING: stream id byte, error code byte
//     5 CONNECTION_CLOSE: error code byte (argument bit 0: application)
//     6, 7 data on any stream id: id byte, 16-bit length + bytes; argument bit 0 FIN

private final class EventCount { var count = 0 }

private func touch(_ event: HTTPEvent) -> Int {
    switch event {
    case .exchange(let exchange):
        var total = exchange.warnings.reduce(0) { $0 + $1.description.utf8.count }
        if let request = exchange.request {
            total += request.method.utf8.count + request.uri.utf8.count + request.body.size
            for header in request.headers { total += header.name.utf8.count + header.value.utf8.count }
        }
        if let response = exchange.response {
            total += (response.status ?? 0) + response.statusText.utf8.count + response.body.size
            for header in response.headers { total += header.name.utf8.count + header.value.utf8.count }
        }
        precondition(exchange.http3 != nil)
        return total
    case .warning(_, let warning, _):
        precondition(!warning.description.isEmpty)
        return warning.description.utf8.count
    default:
        return 1
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP3Frames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let segmentSize = [1, 7, 64, 1 << 16][Int((options >> 2) & 3)]
    var limits = HTTP3Limits()
    var httpLimits = HTTPDecoderLimits()
    if options & 1 != 0 {
        limits.maxBufferedFrameBytes = 256
        limits.maxQPACKTableBytes = 512
        limits.maxBlockedStreams = 2
        limits.maxHeldBytes = 512
        limits.maxEarlyEncoderBytes = 64
        limits.maxOpenStreams = 4
        limits.maxHeaderListBytes = 512
        httpLimits.bodyKeepBytes = 256
    }
    let events = EventCount()
    let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    let connection = HTTP3Connection(connection: ConnectionID(1), client: Endpoint(address: .v4(0x0A00_0001), port: 50000),
                                     server: Endpoint(address: .v4(0x0A00_0002), port: 443), limits: httpLimits,
                                     http3Limits: limits, budget: nil) { events.count += touch($0) }
    func send(_ stream: UInt64, _ fromClient: Bool, _ bytes: UnsafeRawBufferPointer, fin: Bool) {
        if bytes.isEmpty { connection.streamData(stream, fromClient: fromClient, bytes: bytes, fin: fin, at: time) }
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + segmentSize)
            connection.streamData(stream, fromClient: fromClient, bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end]),
                                  fin: fin && end == bytes.count, at: time)
            start = end
        }
    }

    var steps = 0
    while !input.isEmpty && steps < 1024 {
        steps += 1
        let control = input.byte()
        let side = UInt64(control & 1)
        let fromClient = side == 0
        let argument = control >> 4
        switch (control >> 1) & 7 {
        case 0:
            let stream = UInt64(input.byte()) * 4
            send(stream, fromClient, input.take(Int(input.uint16())), fin: argument & 1 != 0)
        case 1:
            let stream = UInt64(input.byte()) * 4 + 2 + side
            send(stream, fromClient, input.take(Int(input.uint16())), fin: argument & 1 != 0)
        case 2:
            let stream = UInt64(input.byte())
            connection.streamReset(stream, fromClient: fromClient, errorCode: UInt64(input.uint16()), at: time)
        case 3:
            let stream = UInt64(input.byte())
            connection.streamGap(stream, fromClient: fromClient, length: Int(input.uint16()), at: time)
        case 4:
            let stream = UInt64(input.byte())
            connection.stopSending(stream, fromClient: fromClient, errorCode: UInt64(input.byte()), at: time)
        case 5:
            connection.connectionClosed(fromClient: fromClient, errorCode: UInt64(input.byte()), application: argument & 1 != 0,
                                        reason: "fuzz", at: time)
        default:
            let stream = UInt64(input.byte())
            send(stream, fromClient, input.take(Int(input.uint16())), fin: argument & 1 != 0)
        }
    }
    connection.end(at: time)
    return 0
}
