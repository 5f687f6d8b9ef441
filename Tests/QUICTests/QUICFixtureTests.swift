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

    static func key(_ stream: UInt64, _ fromClient: Bool) -> String { "\(stream)\(fromClient ? ">" : "<")" }

    /// Reads `name` from Tests/Fixtures/quic, with its key log or (`keyLog` nil) none.
    static func read(_ name: String, keyLog: String? = "") throws -> DecodedFixture {
        var warnings: [TLSKeyLog.Warning] = []
        let path = keyLog == "" ? quicFixtures.appendingPathComponent(name + ".keys").path : keyLog
        return try read(name, keys: try path.map { try TLSKeySource(path: $0, follow: false, initialWarnings: &warnings) })
    }

    /// Reads `name` with `keys`; `afterPacket` is called with each packet's number (from 1) once it was read.
    static func read(_ name: String, keys source: TLSKeySource?, afterPacket: (Int) -> Void = { _ in }) throws -> DecodedFixture {
        var decoder = QUICDecoder(keySource: source)
        var result = DecodedFixture()
        let handle = try CaptureHandle.openOffline(quicFixtures.appendingPathComponent(name + ".pcap").path)
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
        case .streamData(_, let stream, let fromClient, let data, let fin, _):
            bytes[Self.key(stream, fromClient), default: 0] += data.count
            if fin { fins.insert(Self.key(stream, fromClient)) }
        case .streamGap(_, let stream, let fromClient, let length, _): gaps[Self.key(stream, fromClient), default: 0] += length
        case .streamReset(_, let stream, let fromClient, let code, _): resets[Self.key(stream, fromClient)] = code
        case .stopSending, .connectionClose: break
        }
    }
}

/// tshark's view (Debian's tshark 4.0 with the same key log): per stream and sender, the end of the furthest
/// STREAM frame (offset + length); the packets it decrypted; the QUIC packets in all and the Retries among them.
struct TsharkStreams {
    var ends: [String: Int] = [:]
    var decrypted = 0, packets = 0, retries = 0

    init(_ name: String, serverPort: Int) throws {
        let result = try run("tshark", ["-r", quicFixtures.appendingPathComponent(name + ".pcap").path,
                                        "-o", "tls.keylog_file:" + quicFixtures.appendingPathComponent(name + ".keys").path,
                                        "-d", "udp.port==\(serverPort),quic", "-T", "fields", "-E", "occurrence=a",
                                        "-E", "aggregator=|", "-e", "udp.dstport", "-e", "quic.stream.stream_id",
                                        "-e", "quic.stream.offset", "-e", "quic.stream.length", "-e", "quic.frame_type",
                                        "-e", "quic.packet_number", "-e", "quic.stream.off", "-e", "quic.header_form",
                                        "-e", "quic.long.packet_type"])
        for line in result.stdoutText.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 9 else { continue }
            packets += columns[7].split(separator: "|").count
            retries += columns[8].split(separator: "|").filter { $0 == "3" }.count
            // A packet tshark decrypted shows its frames; each coalesced packet has its number.
            if !columns[4].isEmpty { decrypted += columns[5].split(separator: "|").count }
            let fromClient = Int(columns[0]) == serverPort
            let ids = columns[1].split(separator: "|").compactMap { UInt64($0) }
            var offsets = columns[2].split(separator: "|").compactMap { Int($0) }.makeIterator()
            // A frame without the OFF bit has no offset field (offset 0): the bits say whose the offsets are.
            let hasOffset = columns[6].split(separator: "|").map { $0 == "1" || $0 == "True" }
            let lengths = columns[3].split(separator: "|").compactMap { Int($0) }
            guard ids.count == lengths.count, hasOffset.count == ids.count else { continue }
            for (index, id) in ids.enumerated() {
                let offset = hasOffset[index] ? offsets.next() ?? 0 : 0
                let key = DecodedFixture.key(id, fromClient)
                ends[key] = max(ends[key] ?? 0, offset + lengths[index])
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
    static let fixtures = ["h3-basic", "h3-large", "h3-reset", "h3-keyupdate", "h3-migration", "h3-retry", "h3-v2", "h3-chacha20"]
    static let ports = ["h3-basic": 443, "h3-keyupdate": 8443]

    @Test("one connection, every packet opened, every stream's bytes as far as tshark's furthest STREAM frame",
          arguments: fixtures)
    func streamsMatchTshark(_ name: String) throws {
        let decoded = try DecodedFixture.read(name)
        let version: UInt32 = name == "h3-v2" ? 0x6b33_43cf : 1
        let expected = ConnectionNotice.Kind.quic(version: version, serverName: "quic.tapkit.test", alpn: ["h3"], keys: .decrypted)
        #expect(decoded.notices.map(\.kind) == [expected])
        #expect(decoded.opened == 1 && decoded.closed == 1)
        #expect(decoded.warnings.filter(\.isUndecryptable).isEmpty, "\(decoded.warnings)")
        #expect(decoded.gaps.isEmpty, "\(decoded.gaps)")
        guard TestEnvironment.hasProgram("tshark") else { return }
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
          arguments: ["h3-basic", "h3-keyupdate"])
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
