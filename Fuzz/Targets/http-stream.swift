import FlowReassembly
import HTTPDecoding
import HTTPModel
import PacketDecoding
import Reports

// A byte stream cut into TCP segments through reassembly and the HTTP decoder, both directions, with body
// decoding, the -v terminal view and the JSON line. Input: 1 byte of options, then records:
//   op (bit 0: 0 client, 1 server; bits 1-3: kind; bits 4-7: time step, 15 = one second backwards)
//   kinds 0-3: the direction's next bytes (2-byte length, then the bytes)
//   kind 4: bytes at an offset from the next sequence number (1 signed byte * 7, 2-byte length, bytes):
//           retransmissions, overlaps and holes
//   kind 5: FIN; kind 6: RST; kind 7: SYN (or SYN-ACK from the server), anywhere, to re-anchor
// Options: bit 0 handshake first, bit 1 small limits, bit 2 renderers with colour, bit 3 small reassembly limits,
// bit 4 lagging ACKs: every op byte is then followed by one byte, how many 64-byte steps its segment's ACK lags behind
// what the peer sent (so requests and responses acknowledge each other unevenly, as pairing after a gap reads).
// Between reassembly and the decoder, `OffsetCheck` asserts the `acknowledged` offsets reassembly hands over.

/// Forwards to the HTTP decoder, checking each delivery's `acknowledged`: never negative, never further into the
/// peer's stream than the peer's delivery so far plus the per-connection buffer limit (reassembly's bound).
private struct OffsetCheck: StreamConsumer {
    var inner: HTTPStreamDecoder
    let limit: Int
    var delivered: [ConnectionID: (Int, Int)] = [:]

    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        delivered[id] = (0, 0)
        inner.connectionOpened(id, client: client, server: server, at: time)
    }
    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?) {
        let offsets = delivered[id] ?? (0, 0)
        let peer = direction == .clientToServer ? offsets.1 : offsets.0
        if let acknowledged {
            precondition(acknowledged >= 0 && acknowledged <= peer + limit, "acknowledged \(acknowledged), peer at \(peer)")
        }
        advance(id, direction, by: bytes.count)
        inner.streamData(id, direction, bytes, at: time, acknowledged: acknowledged)
    }
    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        advance(id, direction, by: length)
        inner.streamGap(id, direction, length: length, at: time)
    }
    private mutating func advance(_ id: ConnectionID, _ direction: StreamDirection, by count: Int) {
        if direction == .clientToServer { delivered[id, default: (0, 0)].0 += count } else { delivered[id, default: (0, 0)].1 += count }
    }
    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp) {
        inner.streamEnded(id, direction, reason: reason, at: time)
    }
    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        delivered[id] = nil
        inner.connectionClosed(id, at: time)
    }
    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        inner.warning(id, warning, at: time)
    }
}

private let client = Endpoint(address: .v4(0x0a00_0005), port: 51234)
private let server = Endpoint(address: .v4(0x0a00_0001), port: 80)
nonisolated(unsafe) private var sink = TextOutput(fileDescriptor: -1, flushThreshold: 1 << 16)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPStream(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    var limits = HTTPDecoderLimits()
    if options & 2 != 0 {
        limits.maxHeadBytes = 300
        limits.maxChunkLineBytes = 64
        limits.bodyKeepBytes = 100
        limits.maxDecodedBodyBytes = 50_000
        limits.maxDecodedBytesPerCapture = 120_000
        limits.maxPendingRequests = 3
        limits.maxResyncScanBytes = 2000
        limits.maxInterimResponses = 2
        limits.maxWarningsPerMessage = 4
    }
    var reassemblyLimits = ReassemblyLimits.default
    if options & 8 != 0 {
        reassemblyLimits = ReassemblyLimits(maxBufferedBytesPerConnection: 3000, maxBufferedBytesTotal: 5000,
                                            maxConnections: 2, idleTimeoutSeconds: 30,
                                            acknowledgedHoleTimeoutSeconds: 0.5)
        reassemblyLimits.maxBufferedSegmentsPerConnection = 8
    }
    var textOptions = HTTPTextRenderer.Options()
    textOptions.verbose = true
    textOptions.color = options & 4 != 0
    textOptions.bodyLimit = 512
    let renderer = HTTPTextRenderer(options: textOptions)
    let decoder = HTTPStreamDecoder(limits: limits) { event in
        switch event {
        case .exchange(let exchange):
            _ = renderer.render(exchange)
            HTTPJSONRenderer.appendLine(for: exchange, to: &sink)
            _ = sink.flush()
        case .notice(let notice):
            _ = renderer.render(notice)
        case .warning(_, let warning, let time):
            _ = renderer.render(warning: warning.description, time: time)
        case .webSocket(let message):
            _ = renderer.render(message)
            HTTPJSONRenderer.appendLine(for: message, to: &sink)
            _ = sink.flush()
        }
    }
    var reassembler = TCPReassembler(limits: reassemblyLimits)
    var checked = OffsetCheck(inner: decoder, limit: reassemblyLimits.maxBufferedBytesPerConnection)
    var next: [UInt32] = [1000, 90_000]  // client's and server's next sequence numbers
    var time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    let laggingAcks = options & 16 != 0
    var lag: UInt32 = 0

    func send(_ fromServer: Bool, sequence: UInt32, flags: TCPFlags, payload: UnsafeRawBufferPointer) {
        let ack = next[fromServer ? 0 : 1] &- lag
        reassembler.process(source: fromServer ? server : client, destination: fromServer ? client : server,
                            sequenceNumber: sequence, acknowledgmentNumber: ack, flags: flags, payload: payload,
                            at: time, into: &checked)
    }
    let empty = UnsafeRawBufferPointer(start: nil, count: 0)
    if options & 1 != 0 {
        send(false, sequence: next[0] &- 1, flags: [.syn], payload: empty)
        send(true, sequence: next[1] &- 1, flags: [.syn, .ack], payload: empty)
        send(false, sequence: next[0], flags: [.ack], payload: empty)
    }
    while !input.isEmpty {
        let op = input.byte()
        let fromServer = op & 1 != 0
        let side = fromServer ? 1 : 0
        let step = op >> 4
        time = step == 15 ? time.adding(seconds: -1) : time.adding(seconds: Double(step) / 1000)
        if laggingAcks { lag = UInt32(input.byte()) * 64 }
        switch (op >> 1) & 7 {
        case 0...3:
            let bytes = input.take(Int(input.uint16()) % 4096)
            send(fromServer, sequence: next[side], flags: [.ack, .psh], payload: bytes)
            next[side] &+= UInt32(bytes.count)
        case 4:
            let offset = Int32(Int8(bitPattern: input.byte())) * 7
            let bytes = input.take(Int(input.uint16()) % 4096)
            let sequence = UInt32(bitPattern: Int32(bitPattern: next[side]) &+ offset)
            send(fromServer, sequence: sequence, flags: [.ack], payload: bytes)
            if offset >= 0 && offset <= 1 { next[side] = sequence &+ UInt32(bytes.count) }
        case 5:
            send(fromServer, sequence: next[side], flags: [.fin, .ack], payload: empty)
            next[side] &+= 1
        case 6:
            send(fromServer, sequence: next[side], flags: [.rst], payload: empty)
        default:
            send(fromServer, sequence: next[side] &- 1, flags: fromServer ? [.syn, .ack] : [.syn], payload: empty)
        }
    }
    reassembler.finish(at: time, into: &checked)
    checked.inner.flush(at: time)
    return 0
}
