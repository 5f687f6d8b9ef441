import FlowReassembly
import Foundation
import HTTPModel
import PacketDecoding
@testable import QUIC
import Testing
import TestSupport
import TLS

/// Feeds datagrams to a decoder and keeps what it says (stream bytes copied, since they are borrowed).
final class DecoderHarness {
    var decoder: QUICDecoder
    var notices: [ConnectionNotice] = []
    var warnings: [QUICWarning] = []
    var streams: [String: [UInt8]] = [:]

    init(keys: TLSKeySource? = nil) { decoder = QUICDecoder(keySource: keys) }

    func receive(_ payload: [UInt8], from source: Endpoint, to destination: Endpoint, at seconds: Int64 = 1) {
        payload.withUnsafeBytes { bytes in
            decoder.receive(bytes, from: source, to: destination, at: Timestamp(seconds: seconds, nanoseconds: 0)) { self.record($0) }
        }
    }

    func finish() { decoder.finish(at: Timestamp(seconds: 2, nanoseconds: 0)) { self.record($0) } }

    private func record(_ event: QUICEvent) {
        switch event {
        case .notice(let notice): notices.append(notice)
        case .warning(_, let warning, _): warnings.append(warning)
        case .streamData(_, let stream, let fromClient, let bytes, _, _):
            streams["\(stream)\(fromClient ? "c" : "s")", default: []] += Array(bytes)
        default: break
        }
    }
}

let quicClient = Endpoint(address: .v4(0x0a00_0002), port: 50_000)
let quicServer = Endpoint(address: .v4(0x0a00_0001), port: 4433)

@Suite("QUIC connections found on any port and labelled")
struct QUICLabelTests {
    @Test("the RFC's client Initial on port 4433 starts a connection: v1 and v2, server name and ALPN from its ClientHello",
          arguments: [(QUICVersion.v1, RFCVectors.longClientEncryptedPacketV1), (.v2, RFCVectors.longClientEncryptedPacketV2)])
    func labelAnyPort(_ version: QUICVersion, _ packet: [UInt8]) {
        let harness = DecoderHarness()
        harness.receive(packet, from: quicClient, to: quicServer)
        harness.receive(packet, from: quicClient, to: quicServer)  // a retransmission: still one connection
        harness.finish()
        #expect(harness.notices.count == 1)
        #expect(harness.notices.first?.kind == .quic(version: version.rawValue, serverName: "example.com", alpn: ["alpn"],
                                                      keys: .noKeyLog))
        #expect(harness.notices.first?.server == quicServer)
    }

    @Test("not QUIC: short datagrams, other versions, version negotiation and damaged Initials start nothing")
    func notQUIC() {
        let harness = DecoderHarness()
        var damaged = RFCVectors.longClientEncryptedPacketV1
        damaged[600] ^= 1
        for payload in [[], [0x40, 1, 2, 3], [0xc0, 0, 0, 0, 0, 8, 1, 2, 3, 4] + Array(repeating: 0, count: 1200), damaged,
                        [0xc0, 0xff, 0, 0, 0x1d] + Array(RFCVectors.longClientEncryptedPacketV1.dropFirst(5))] {
            harness.receive(payload, from: quicClient, to: quicServer)
        }
        harness.finish()
        #expect(harness.notices.isEmpty)
    }

    @Test("hostile input: random and mutated datagrams never crash the decoder")
    func hostile() {
        var generator = SeededGenerator(seed: 0x9001)
        let harness = DecoderHarness()
        let base = RFCVectors.longClientEncryptedPacketV1
        for round in 0..<600 {
            var bytes = round % 2 == 0 ? base : (0..<Int.random(in: 0...1300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for _ in 0..<3 where !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            harness.receive(bytes, from: quicClient, to: quicServer)
            harness.receive(bytes, from: quicServer, to: quicClient)
        }
        harness.finish()
    }
}

struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

@Suite("QUIC lines from real captures")
struct QUICCaptureLineTests {
    static let captureBinary = TestEnvironment.executable("capture").path
    static let haveCapture = FileManager.default.isExecutableFile(atPath: captureBinary)

    @Test("aioquic's first flight (h2/quic-initial.pcap): one line with version, server name and ALPN, as tshark reads them",
          .enabled(if: haveCapture, "capture binary missing"))
    func realInitial() throws {
        let path = TestEnvironment.fixtures.appendingPathComponent("h2/quic-initial.pcap").path
        let result = try run(Self.captureBinary, ["-r", path, "--http", "--utc"], environment: ["TZ": "UTC"])
        #expect(result.stdoutText.contains("QUIC v1 quic.tapkit.test  ALPN h3  (encrypted, not decoded)"), "\(result.stdoutText)")
        #expect(result.stdoutText.components(separatedBy: "QUIC v1").count == 2, "one line per connection")
    }

    @Test("tshark reads the same server name and ALPN from h2/quic-initial.pcap",
          .enabled(if: TestEnvironment.hasProgram("tshark"), "needs tshark, the oracle (Scripts/setup --test installs it)"))
    func realInitialAsTsharkReadsIt() throws {
        let path = TestEnvironment.fixtures.appendingPathComponent("h2/quic-initial.pcap").path
        let tshark = try run("tshark", ["-r", path, "-Y", "tls.handshake.type == 1", "-T", "fields",
                                        "-e", "tls.handshake.extensions_server_name", "-e", "tls.handshake.extensions_alpn_str"])
        #expect(tshark.stdoutText.split(separator: "\n").first.map(String.init) == "quic.tapkit.test\th3")
    }
}
