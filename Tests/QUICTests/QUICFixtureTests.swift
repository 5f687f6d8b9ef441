import FlowReassembly
import Foundation
import HTTPModel
import PacketCapture
import PacketDecoding
import QUIC
import Testing
import TestSupport
import TLS

let quicFixtures = TestEnvironment.fixtures.appendingPathComponent("quic")

/// What the decoder made of one fixture: per stream and sender, the bytes handed on, gaps, FINs and resets.
struct DecodedFixture {
    var notices: [ConnectionNotice] = []
    var warnings: [QUICWarning] = []
    var bytes: [String: Int] = [:]
    var fins: Set<String> = []
    var gaps: [String: UInt64] = [:]
    var resets: [String: UInt64] = [:]
    var packetsOpened = 0
    var opened = 0
    var closed = 0

    /// "4>" is stream 4 from the client on the first connection; later connections are prefixed ("#1 4>").
    static func key(_ stream: UInt64, _ fromClient: Bool, connection: Int = 0) -> String {
        (connection == 0 ? "" : "#\(connection) ") + "\(stream)\(fromClient ? ">" : "<")"
    }

    /// Connections in order of appearance, numbered from 0 as tshark numbers them.
    var connections: [ConnectionID: Int] = [:]

    mutating func key(_ connection: ConnectionID, _ stream: UInt64, _ fromClient: Bool) -> String {
        if connections[connection] == nil { connections[connection] = connections.count }
        return Self.key(stream, fromClient, connection: connections[connection]!)
    }

    /// Reads `name` from Tests/Fixtures/quic, with its key log or (`keyLog` nil) none.
    static func read(_ name: String, keyLog: String? = "") throws -> DecodedFixture {
        var warnings: [TLSKeyLog.Warning] = []
        let path = keyLog == "" ? quicFixtures.appendingPathComponent(name + ".keys").path : keyLog
        return try read(name, keys: try path.map { try TLSKeySource(path: $0, follow: false, initialWarnings: &warnings) })
    }

    /// Reads the capture at `file` with the key log at `keyLog`.
    static func read(_ file: URL, keyLog: String) throws -> DecodedFixture {
        var warnings: [TLSKeyLog.Warning] = []
        return try read(file, keys: try TLSKeySource(path: keyLog, follow: false, initialWarnings: &warnings))
    }

    /// Reads `name` with `keys`; `afterPacket` is called with each packet's number (from 1) once it was read.
    static func read(_ name: String, keys source: TLSKeySource?, afterPacket: (Int) -> Void = { _ in }) throws -> DecodedFixture {
        try read(quicFixtures.appendingPathComponent(name + ".pcap"), keys: source, afterPacket: afterPacket)
    }

    static func read(_ file: URL, keys source: TLSKeySource?, afterPacket: (Int) -> Void = { _ in }) throws -> DecodedFixture {
        var decoder = QUICDecoder(keySource: source)
        var result = DecodedFixture()
        let handle = try CaptureHandle.openOffline(file.path)
        let packetDecoder = try PacketDecoder(linkType: handle.linkType)
        var last = Timestamp(seconds: 0, nanoseconds: 0)
        var count = 0
        try handle.forEachPacket { packet in
            let decoded = packetDecoder.decode(packet.bytes, timestamp: packet.timestamp, originalLength: packet.originalLength)
            last = packet.timestamp
            count += 1
            if let udp = decoded.udp { decoder.receive(udp, at: packet.timestamp) { result.record($0) } }
            afterPacket(count)
            decoder.idle { result.record($0) }
        }
        decoder.finish(at: last) { result.record($0) }
        result.packetsOpened = decoder.packetsOpened
        return result
    }

    mutating func record(_ event: QUICEvent) {
        switch event {
        case .notice(let notice): notices.append(notice)
        case .warning(_, let warning, _): warnings.append(warning)
        case .opened: opened += 1
        case .closed: closed += 1
        case .streamData(let connection, let stream, let fromClient, let data, let fin, _):
            let key = key(connection, stream, fromClient)
            bytes[key, default: 0] += data.count
            if fin { fins.insert(key) }
        case .streamGap(let connection, let stream, let fromClient, let length, _):
            gaps[key(connection, stream, fromClient), default: 0] += length
        case .streamReset(let connection, let stream, let fromClient, let code, _):
            resets[key(connection, stream, fromClient)] = code
        case .stopSending, .connectionClose: break
        }
    }
}

/// tshark's view (Debian's tshark 4.0 with the same key log): per connection, stream and sender, the end of the
/// furthest STREAM frame (offset + length); the packets it decrypted; the QUIC packets in all and the Retries among
/// them. Keys as `DecodedFixture.key`, connections numbered as tshark numbers them (in order of appearance).
/// Two things tshark shows that no peer reads are left out: bytes after a datagram's last packet (aioquic pads
/// datagrams with zeros there, RFC 9000 section 14.1; tshark calls them a short-header packet with its fixed bit
/// clear), and STREAM frames in datagrams sent after the connection's first CONNECTION_CLOSE (the closing peer
/// discards them, RFC 9000 section 10.2; TapKit ends the connection's streams at the close).
struct TsharkStreams {
    var ends: [String: Int] = [:]
    var decrypted = 0, packets = 0, retries = 0
    private var closed: Set<Int> = []

    init(_ name: String, serverPort: Int) throws {
        let fields = ["udp.dstport", "quic.connection.number", "quic.stream.stream_id", "quic.stream.offset",
                      "quic.stream.length", "quic.frame_type", "quic.packet_number", "quic.stream.off", "quic.stream.len",
                      "quic.stream_data", "quic.header_form", "quic.fixed_bit", "quic.long.packet_type"]
        let result = try run("tshark", ["-r", quicFixtures.appendingPathComponent(name + ".pcap").path,
                                        "-o", "tls.keylog_file:" + quicFixtures.appendingPathComponent(name + ".keys").path,
                                        "-d", "udp.port==\(serverPort),quic", "-T", "fields", "-E", "occurrence=a",
                                        "-E", "aggregator=|"] + fields.flatMap { ["-e", $0] })
        for line in result.stdoutText.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count == fields.count else { continue }
            func values(_ field: String) -> [String] {
                columns[fields.firstIndex(of: field)!].split(separator: "|").map(String.init)
            }
            packets += values("quic.header_form").count - values("quic.fixed_bit").filter { $0 == "0" || $0 == "False" }.count
            retries += values("quic.long.packet_type").filter { $0 == "3" }.count
            // A packet tshark decrypted shows its frames; each coalesced packet has its number.
            if !values("quic.frame_type").isEmpty { decrypted += values("quic.packet_number").count }
            let fromClient = Int(values("udp.dstport").first ?? "") == serverPort
            let connection = Int(values("quic.connection.number").first ?? "") ?? 0
            guard !closed.contains(connection) else { continue }
            if values("quic.frame_type").contains(where: { $0 == "28" || $0 == "29" }) { closed.insert(connection) }
            let ids = values("quic.stream.stream_id").compactMap { UInt64($0) }
            // Fields without their bit are absent: a frame without OFF has offset 0, one without LEN runs to the end
            // of its packet (its length is its data's), and a frame without data (a FIN alone) has no data field.
            let hasOffset = values("quic.stream.off").map { $0 == "1" || $0 == "True" }
            let hasLength = values("quic.stream.len").map { $0 == "1" || $0 == "True" }
            var offsets = values("quic.stream.offset").compactMap { Int($0) }.makeIterator()
            var lengths = values("quic.stream.length").compactMap { Int($0) }.makeIterator()
            var data = values("quic.stream_data").makeIterator()
            guard hasOffset.count == ids.count, hasLength.count == ids.count else { continue }
            for (index, id) in ids.enumerated() {
                let offset = hasOffset[index] ? offsets.next() ?? 0 : 0
                let length: Int
                if hasLength[index] {
                    length = lengths.next() ?? 0
                    if length > 0 { _ = data.next() }
                } else {
                    length = (data.next()?.count ?? 0) / 2
                }
                let key = DecodedFixture.key(id, fromClient, connection: connection)
                ends[key] = max(ends[key] ?? 0, offset + length)
            }
        }
    }
}

extension QUICWarning {
    var isUndecryptable: Bool {
        if case .undecryptable = self { return true }
        return false
    }
}

@Suite("QUIC fixtures from aioquic: decrypted with their key logs, checked against tshark")
struct QUICFixtureTests {
    static let fixtures = ["h3-basic", "h3-large", "h3-reset", "h3-keyupdate", "h3-migration", "h3-retry", "h3-v2", "h3-chacha20",
                           "h3-resume", "h3-chromium"]
    static let ports = ["h3-basic": 443, "h3-keyupdate": 8443]
    /// h3-resume has two connections: the one that got the session ticket, and the resumed one.
    static let connections = ["h3-resume": 2]

    @Test("each connection found as a decrypted QUIC connection, nothing undecryptable, no gaps", arguments: fixtures)
    func connectionsDecrypt(_ name: String) throws {
        let decoded = try DecodedFixture.read(name)
        let version: UInt32 = name == "h3-v2" ? 0x6b33_43cf : 1
        let expected = ConnectionNotice.Kind.quic(version: version, serverName: "quic.tapkit.test", alpn: ["h3"], keys: .decrypted)
        let count = Self.connections[name] ?? 1
        #expect(decoded.notices.map(\.kind) == Array(repeating: expected, count: count))
        #expect(decoded.opened == count && decoded.closed == count)
        #expect(decoded.warnings.filter(\.isUndecryptable).isEmpty, "\(decoded.warnings)")
        #expect(decoded.gaps.isEmpty, "\(decoded.gaps)")
    }

    @Test("every packet opened, every stream's bytes as far as tshark's furthest STREAM frame",
          .enabled(if: TestEnvironment.hasProgram("tshark"), "needs tshark, the oracle (Scripts/setup --test installs it)"),
          arguments: fixtures)
    func streamsMatchTshark(_ name: String) throws {
        let decoded = try DecodedFixture.read(name)
        let tshark = try TsharkStreams(name, serverPort: Self.ports[name] ?? 4433)
        // Every packet of the capture but a Retry (which is not encrypted) was opened.
        #expect(decoded.packetsOpened == tshark.packets - tshark.retries)
        // tshark 4.0 decrypts nothing after a Retry but the Initials: it is the oracle for the others.
        guard tshark.retries == 0 else { return }
        #expect(decoded.bytes == tshark.ends)
        #expect(decoded.packetsOpened == tshark.decrypted)
    }

    @Test("the cancelled download: the server's RESET_STREAM (H3_REQUEST_CANCELLED) as tshark shows it; FINs elsewhere")
    func resetAndFins() throws {
        let decoded = try DecodedFixture.read("h3-reset")
        // The client's request side had ended (FIN); its STOP_SENDING made the server reset its side.
        #expect(decoded.resets == ["0<": 0x10c])
        #expect(decoded.fins.isSuperset(of: ["0>", "4>", "4<"]))
        #expect(!decoded.fins.contains("0<"), "the server's side of the cancelled stream never ended")
    }

    @Test("0-RTT on resumption: the resumed connection's early packets open with CLIENT_EARLY_TRAFFIC_SECRET, as in tshark")
    func zeroRTT() throws {
        let keys = try String(contentsOf: quicFixtures.appendingPathComponent("h3-resume.keys"), encoding: .utf8)
        let early = keys.split(separator: "\n").filter { $0.hasPrefix("CLIENT_EARLY_TRAFFIC_SECRET ") }
        try #require(early.count == 1, "the fixture's key log has no early secret")
        // tshark (the oracle) counts the client's 0-RTT packets (that it decrypts them too is streamsMatchTshark's).
        let tshark = try run("tshark", ["-r", quicFixtures.appendingPathComponent("h3-resume.pcap").path,
                                        "-o", "tls.keylog_file:" + quicFixtures.appendingPathComponent("h3-resume.keys").path,
                                        "-d", "udp.port==4433,quic", "-Y", "quic.long.packet_type == 1",
                                        "-T", "fields", "-e", "quic.long.packet_type"])
        let zeroRTTPackets = tshark.stdoutText.split(separator: "\n").flatMap { $0.split(separator: ",") }.filter { $0 == "1" }.count
        #expect(zeroRTTPackets >= 1, "tshark saw no 0-RTT packet: \(tshark.stderrText)")
        // Without the early secret, exactly those packets stay closed, and nothing else.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("w25-no-early-\(UUID().uuidString).keys")
        try Data(keys.split(separator: "\n").filter { !$0.hasPrefix("CLIENT_EARLY_TRAFFIC_SECRET ") }.joined(separator: "\n").utf8)
            .write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let withoutEarly = try DecodedFixture.read("h3-resume", keyLog: file.path)
        #expect(withoutEarly.warnings.filter(\.isUndecryptable) == [.undecryptable(level: "0-RTT", packets: zeroRTTPackets)])
        let decoded = try DecodedFixture.read("h3-resume")
        #expect(decoded.packetsOpened == withoutEarly.packetsOpened + zeroRTTPackets)
        // The early requests (GET on stream 0, POST on 4 of the second connection) are in 0-RTT packets only.
        #expect((decoded.bytes["#1 0>"] ?? 0) > (withoutEarly.bytes["#1 0>"] ?? 0))
        #expect(decoded.bytes["#1 4>"] != nil && withoutEarly.bytes["#1 4>"] == nil)
    }

    @Test("a close before the handshake is confirmed: the Handshake packet's APPLICATION_ERROR stand-in gives way to the 1-RTT close")
    func applicationCloseStandIn() throws {
        // aioquic's resumed client closes (H3 code 0) before HANDSHAKE_DONE arrives, so it also sends the close in a
        // Handshake packet as a transport close with APPLICATION_ERROR (RFC 9000 section 10.2.3), coalesced before
        // the 1-RTT packet that has the real one: that is an ordinary close, not an error.
        let decoded = try DecodedFixture.read("h3-resume")
        #expect(!decoded.warnings.contains { if case .closedWithError = $0 { true } else { false } }, "\(decoded.warnings)")
    }

    @Test("without keys the line still says version, server name, ALPN and why: no key log, or none for this connection",
          arguments: ["h3-basic", "h3-v2"])
    func withoutKeys(_ name: String) throws {
        let version: UInt32 = name == "h3-v2" ? 0x6b33_43cf : 1
        let none = try DecodedFixture.read(name, keyLog: nil)
        #expect(none.notices.map(\.kind) == [.quic(version: version, serverName: "quic.tapkit.test", alpn: ["h3"], keys: .noKeyLog)])
        #expect(none.bytes.isEmpty && none.warnings.isEmpty)
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("w25q-empty-\(UUID().uuidString).keys")
        try Data().write(to: empty)
        defer { try? FileManager.default.removeItem(at: empty) }
        let missing = try DecodedFixture.read(name, keyLog: empty.path)
        #expect(missing.notices.map(\.kind) == [.quic(version: version, serverName: "quic.tapkit.test", alpn: ["h3"], keys: .notLogged)])
        #expect(missing.bytes.isEmpty)
        #expect(missing.warnings.contains { $0.isUndecryptable })
    }

    @Test("live: a followed key log that gets its lines only after the handshake went by gives what offline gives",
          arguments: ["h3-basic", "h3-keyupdate", "h3-chromium"])
    func followedKeyLog(_ name: String) throws {
        let offline = try DecodedFixture.read(name)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("w25q-follow-\(UUID().uuidString).keys")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var warnings: [TLSKeyLog.Warning] = []
        let source = try TLSKeySource(path: file.path, follow: true, initialWarnings: &warnings)
        source.recheckInterval = .zero
        let lines = try Data(contentsOf: quicFixtures.appendingPathComponent(name + ".keys"))
        let live = try DecodedFixture.read(name, keys: source) { packet in
            // The handshake secrets after the server's first flight, the traffic secrets two packets later.
            let text = String(decoding: lines, as: UTF8.self).split(separator: "\n")
            let handshake = text.filter { $0.contains("HANDSHAKE") }, traffic = text.filter { !$0.contains("HANDSHAKE") }
            if packet == 3 { try? Data((handshake.joined(separator: "\n") + "\n").utf8).write(to: file) }
            if packet == 5, let handle = try? FileHandle(forWritingTo: file) {
                handle.seekToEndOfFile()
                handle.write(Data((traffic.joined(separator: "\n") + "\n").utf8))
                try? handle.close()
            }
        }
        #expect(live.notices.map(\.kind) == offline.notices.map(\.kind))
        #expect(live.bytes == offline.bytes)
        #expect(live.fins == offline.fins)
        #expect(live.packetsOpened == offline.packetsOpened)
        #expect(live.warnings.isEmpty, "\(live.warnings)")
    }
}
