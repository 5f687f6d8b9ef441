import FlowReassembly
import PacketDecoding

/// One thing the reassembler told the consumer.
enum Event: Equatable, CustomStringConvertible {
    case opened(ConnectionID, client: Endpoint, server: Endpoint)
    case data(ConnectionID, StreamDirection, [UInt8])
    case gap(ConnectionID, StreamDirection, Int)
    case ended(ConnectionID, StreamDirection, StreamEndReason)
    case closed(ConnectionID)
    case warning(ConnectionID?, AnyConnectionWarning)

    var description: String {
        switch self {
        case .opened(let id, let c, let s): "opened \(id.rawValue) \(c) -> \(s)"
        case .data(let id, let d, let b): "data \(id.rawValue) \(d) \(b.count)B"
        case .gap(let id, let d, let n): "gap \(id.rawValue) \(d) \(n)"
        case .ended(let id, let d, let r): "ended \(id.rawValue) \(d) \(r)"
        case .closed(let id): "closed \(id.rawValue)"
        case .warning(let id, let m): "warning \(id?.rawValue ?? 0) \(m)"
        }
    }
}

/// A piece of a reassembled stream: bytes (adjacent deliveries joined) or a gap.
enum Piece: Equatable {
    case bytes([UInt8])
    case gap(Int)
}

struct StreamKey: Hashable {
    var id: ConnectionID
    var direction: StreamDirection
}

/// Records every callback, and checks the contract as it goes (nothing after an end, close after both ends).
struct RecordingConsumer: StreamConsumer {
    var events: [Event] = []
    var streams: [StreamKey: [Piece]] = [:]
    var endReasons: [StreamKey: StreamEndReason] = [:]
    var opened: [ConnectionID: (client: Endpoint, server: Endpoint)] = [:]
    var closedIDs: [ConnectionID] = []
    var contractViolations: [String] = []
    /// Each data delivery's direction, size and `acknowledged` offset, in order.
    var deliveries: [(direction: StreamDirection, count: Int, acknowledged: Int?)] = []

    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        if opened[id] != nil { contractViolations.append("connection \(id.rawValue) opened twice") }
        opened[id] = (client, server)
        events.append(.opened(id, client: client, server: server))
    }

    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?) {
        check(id, direction, "data")
        if bytes.isEmpty { contractViolations.append("empty data for \(id.rawValue)") }
        let copy = [UInt8](bytes)
        events.append(.data(id, direction, copy))
        deliveries.append((direction, copy.count, acknowledged))
        let key = StreamKey(id: id, direction: direction)
        if case .bytes(let previous)? = streams[key]?.last {
            streams[key]![streams[key]!.count - 1] = .bytes(previous + copy)
        } else {
            streams[key, default: []].append(.bytes(copy))
        }
    }

    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        check(id, direction, "gap")
        if length <= 0 { contractViolations.append("gap of \(length)") }
        events.append(.gap(id, direction, length))
        streams[StreamKey(id: id, direction: direction), default: []].append(.gap(length))
    }

    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp) {
        check(id, direction, "end")
        endReasons[StreamKey(id: id, direction: direction)] = reason
        events.append(.ended(id, direction, reason))
    }

    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        if endReasons[StreamKey(id: id, direction: .clientToServer)] == nil
            || endReasons[StreamKey(id: id, direction: .serverToClient)] == nil {
            contractViolations.append("connection \(id.rawValue) closed before both directions ended")
        }
        if closedIDs.contains(id) { contractViolations.append("connection \(id.rawValue) closed twice") }
        closedIDs.append(id)
        events.append(.closed(id))
    }

    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        events.append(.warning(id, AnyConnectionWarning(warning)))
    }

    private mutating func check(_ id: ConnectionID, _ direction: StreamDirection, _ what: String) {
        if opened[id] == nil { contractViolations.append("\(what) for unopened connection \(id.rawValue)") }
        if endReasons[StreamKey(id: id, direction: direction)] != nil {
            contractViolations.append("\(what) after end of \(id.rawValue) \(direction)")
        }
    }

    func pieces(_ id: ConnectionID, _ direction: StreamDirection) -> [Piece] {
        streams[StreamKey(id: id, direction: direction)] ?? []
    }

    /// The stream's bytes, with no gap allowed.
    func bytes(_ id: ConnectionID, _ direction: StreamDirection) -> [UInt8]? {
        let pieces = pieces(id, direction)
        if pieces.isEmpty { return [] }
        guard pieces.count == 1, case .bytes(let bytes) = pieces[0] else { return nil }
        return bytes
    }

    func endReason(_ id: ConnectionID, _ direction: StreamDirection) -> StreamEndReason? {
        endReasons[StreamKey(id: id, direction: direction)]
    }

    var warnings: [String] { warningValues.map(\.description) }

    /// The reassembler's warnings as values, to compare with the facts a test expects.
    var reassemblyWarnings: [ReassemblyWarning] { warningValues.compactMap { $0.value as? ReassemblyWarning } }

    /// The limits that made reassembly give up waiting for missing bytes, in order.
    var limitsGivenUpOn: [ReassemblyWarning.BufferLimit] {
        reassemblyWarnings.compactMap { if case .gaveUpWaiting(let limit, _, _) = $0 { limit } else { nil } }
    }

    var warningValues: [AnyConnectionWarning] {
        events.compactMap { if case .warning(_, let warning) = $0 { warning } else { nil } }
    }

    var connectionIDs: [ConnectionID] {
        events.compactMap { if case .opened(let id, _, _) = $0 { id } else { nil } }
    }
}

/// A TCP segment described by value, for building test conversations.
struct Segment {
    var source: Endpoint
    var destination: Endpoint
    var sequence: UInt32
    var ack: UInt32 = 0
    var flags: TCPFlags = [.ack]
    var payload: [UInt8] = []
    var wireLength: Int? = nil
    var time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
}

let client = Endpoint(address: .v4(0x0a00_0005), port: 51234)
let server = Endpoint(address: .v4(0x0a00_0001), port: 80)

func t(_ milliseconds: Int) -> Timestamp {
    Timestamp(seconds: 1_700_000_000 + Int64(milliseconds / 1000), nanoseconds: Int32(milliseconds % 1000) * 1_000_000)
}

extension TCPReassembler {
    mutating func feed(_ segment: Segment, into consumer: inout RecordingConsumer) {
        segment.payload.withUnsafeBytes { payload in
            process(source: segment.source, destination: segment.destination, sequenceNumber: segment.sequence,
                    acknowledgmentNumber: segment.ack, flags: segment.flags, payload: payload,
                    payloadLength: segment.wireLength, at: segment.time, into: &consumer)
        }
    }
}

/// Feeds `segments` in order, then finishes the capture.
func reassemble(_ segments: [Segment], limits: ReassemblyLimits = .default, finish: Bool = true)
    -> (RecordingConsumer, TCPReassembler) {
    var reassembler = TCPReassembler(limits: limits)
    var consumer = RecordingConsumer()
    for segment in segments { reassembler.feed(segment, into: &consumer) }
    if finish { reassembler.finish(into: &consumer) }
    return (consumer, reassembler)
}

/// Deterministic bytes for a stream.
func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7 &+ $0 / 251) }
}

/// A whole connection: handshake, request and response cut into `mss`-byte segments, FINs and final ACK.
struct Conversation {
    var client = FlowReassemblyTests.client
    var server = FlowReassemblyTests.server
    var clientISN: UInt32 = 1_000
    var serverISN: UInt32 = 5_000_000
    var request: [UInt8] = Array("GET / HTTP/1.1\r\nHost: example\r\n\r\n".utf8)
    var response: [UInt8] = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8)
    var mss = 10
    var startMilliseconds = 0

    var handshake: [Segment] {
        [Segment(source: client, destination: server, sequence: clientISN, flags: [.syn], time: t(startMilliseconds)),
         Segment(source: server, destination: client, sequence: serverISN, ack: clientISN &+ 1, flags: [.syn, .ack],
                 time: t(startMilliseconds + 1)),
         Segment(source: client, destination: server, sequence: clientISN &+ 1, ack: serverISN &+ 1,
                 time: t(startMilliseconds + 2))]
    }

    func dataSegments(from source: Endpoint, to destination: Endpoint, bytes: [UInt8], isn: UInt32, peerISN: UInt32,
                      mss: Int, at milliseconds: Int) -> [Segment] {
        stride(from: 0, to: bytes.count, by: mss).map { offset in
            Segment(source: source, destination: destination, sequence: isn &+ 1 &+ UInt32(offset),
                    ack: peerISN &+ 1, flags: [.ack, .psh], payload: Array(bytes[offset..<min(bytes.count, offset + mss)]),
                    time: t(milliseconds))
        }
    }

    var requestSegments: [Segment] {
        dataSegments(from: client, to: server, bytes: request, isn: clientISN, peerISN: serverISN, mss: mss,
                     at: startMilliseconds + 3)
    }

    var responseSegments: [Segment] {
        dataSegments(from: server, to: client, bytes: response, isn: serverISN,
                     peerISN: clientISN &+ UInt32(request.count), mss: mss, at: startMilliseconds + 4)
    }

    var clientFIN: UInt32 { clientISN &+ 1 &+ UInt32(request.count) }
    var serverFIN: UInt32 { serverISN &+ 1 &+ UInt32(response.count) }

    var closing: [Segment] {
        [Segment(source: client, destination: server, sequence: clientFIN, ack: serverFIN, flags: [.fin, .ack],
                 time: t(startMilliseconds + 5)),
         Segment(source: server, destination: client, sequence: serverFIN, ack: clientFIN &+ 1, flags: [.fin, .ack],
                 time: t(startMilliseconds + 6)),
         Segment(source: client, destination: server, sequence: clientFIN &+ 1, ack: serverFIN &+ 1,
                 time: t(startMilliseconds + 7))]
    }

    var inOrder: [Segment] { handshake + requestSegments + responseSegments + closing }
}

/// A small seeded generator so shuffles are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
