import FlowReassembly
import HTTPModel
import PacketDecoding
@testable import TLS

/// An inner consumer that keeps what the TLS layer passed on.
struct RecordingConsumer: StreamConsumer {
    var data: [StreamDirection: [UInt8]] = [:]
    var gaps: [StreamDirection: Int] = [:]
    var warnings: [String] = []
    var warningValues: [AnyConnectionWarning] = []
    var protocols: [String] = []
    var closed = 0
    /// Every call in order, as "data c2s 50", "end s2c", "close": what pairing a response with its request sees.
    var events: [String] = []

    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {}
    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?) {
        data[direction, default: []] += bytes
        events.append("data \(direction == .clientToServer ? "c2s" : "s2c") \(bytes.count)")
    }
    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        gaps[direction, default: 0] += length
    }
    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp) {
        events.append("end \(direction == .clientToServer ? "c2s" : "s2c")")
    }
    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        closed += 1
        events.append("close")
    }
    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        warnings.append(warning.description)
        warningValues.append(AnyConnectionWarning(warning))
    }
    mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        protocols.append(protocolName)
    }
}

/// Drives a TLS layer over one connection with hand-made segments.
final class Harness {
    var layer: TLSDecryptingConsumer<RecordingConsumer>
    var sessions: [TLSSessionFacts] = []
    let id = ConnectionID(1)
    var time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)

    convenience init(keyLog: TLSKeyLog, limits: TLSDecryptionLimits = TLSDecryptionLimits()) {
        self.init(keys: TLSKeySource(keyLog: keyLog), limits: limits)
    }

    init(keys: TLSKeySource, limits: TLSDecryptionLimits = TLSDecryptionLimits()) {
        let box = SessionBox()
        layer = TLSDecryptingConsumer(keys: keys, limits: limits, inner: RecordingConsumer()) {
            box.sessions.append($0)
        }
        self.box = box
        let client = Endpoint(address: .v4(0x0A00_0001), port: 50000)
        let server = Endpoint(address: .v4(0x0A00_0002), port: 443)
        layer.connectionOpened(id, client: client, server: server, at: time)
    }

    private let box: SessionBox
    var facts: [TLSSessionFacts] { box.sessions }

    func send(_ direction: StreamDirection, _ bytes: [UInt8], chunk: Int = .max) {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            bytes[start..<end].withUnsafeBytes { layer.streamData(id, direction, $0, at: time) }
            start = end
        }
    }

    func end(_ direction: StreamDirection) { layer.streamEnded(id, direction, reason: .fin, at: time) }
    func close() { layer.connectionClosed(id, at: time) }
    var inner: RecordingConsumer { layer.inner }
}

final class SessionBox { var sessions: [TLSSessionFacts] = [] }

func hex(_ text: String) -> [UInt8] { Hex.decode(text.filter { !$0.isWhitespace })! }
