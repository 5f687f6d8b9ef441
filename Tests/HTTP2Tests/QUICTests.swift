import Foundation
@testable import HTTP2
import Testing
import TestSupport

@Suite("QUIC Initial labels")
struct QUICTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("RFC 9001 Appendix A.1: client and server initial keys from DCID 0x8394c8f03e515708")
    func appendixA1() {
        let dcid: [UInt8] = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08]
        let client = QUICInitial.initialKeys(dcid: dcid, label: "client in")
        #expect(hex(client.key) == "1f369613dd76d5467730efcbe3b1a22d")
        #expect(hex(client.iv) == "fa044b2f42a3fd3b46fb255c")
        #expect(hex(client.hp) == "9f50449e04a0e810283a1e9933adedd2")
        let server = QUICInitial.initialKeys(dcid: dcid, label: "server in")
        #expect(hex(server.key) == "cf3a5331653c364c88f0f379b6067e37")
        #expect(hex(server.iv) == "0ac1493ca1905853b0bba03e")
        #expect(hex(server.hp) == "c206b8d9b9f0f37644430b490eeaa314")
    }

    @Test("not QUIC, short headers, version negotiation and truncated packets give no label or a version-only one")
    func notInitial() {
        #expect(QUICInitial.label([]) == nil)
        #expect(QUICInitial.label([0x40, 1, 2, 3, 4, 5, 6, 7]) == nil)              // short header
        #expect(QUICInitial.label([0xc0, 0, 0, 0, 0, 8, 1, 2, 3, 4]) == nil)        // version negotiation
        let truncated: [UInt8] = [0xc3, 0, 0, 0, 1, 8] + [UInt8](repeating: 1, count: 8) + [0, 0, 0x44, 0x9e, 1, 2]
        #expect(QUICInitial.label(truncated) == QUICInitial.Label(version: 1, serverName: nil, alpn: []))
        #expect(QUICInitial.label([0xc0, 0x6b, 0x33, 0x43, 0xcf, 0, 0])?.version == 0x6b33_43cf)
    }

    @Test("hostile input: random and mutated datagrams never crash the Initial reader")
    func hostile() {
        var generator = SeededGenerator(seed: 0x9001)
        for _ in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...1300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty { bytes[0] |= 0xc0 }
            if bytes.count > 5 { bytes[1] = 0; bytes[2] = 0; bytes[3] = 0; bytes[4] = 1 }
            _ = QUICInitial.label(bytes)
        }
    }

    @Test("a real QUIC v1 Initial (aioquic) gives the client's server name and ALPN, as tshark reads them",
          .enabled(if: haveCapture && FileManager.default.fileExists(atPath: fixturePath("quic-initial.pcap")), "capture binary or quic-initial.pcap missing"))
    func realInitial() throws {
        let logged = try FixtureLogs.load("quic-initial.pcap").client.first
        let serverName = try #require(logged?["server_name"] as? String)
        let result = try capture(["-r", fixturePath("quic-initial.pcap"), "--http", "--utc"])
        #expect(result.stdoutText.contains("QUIC v1 \(serverName)  ALPN h3  (HTTP/3 labelled, not decoded)"), "\(result.stdoutText)")
        #expect(result.stdoutText.components(separatedBy: "QUIC v1").count == 2, "one label per flow")
        guard haveTshark else { return }
        let tshark = try run("tshark", ["-r", fixturePath("quic-initial.pcap"), "-Y", "tls.handshake.type == 1", "-T", "fields",
                                        "-e", "tls.handshake.extensions_server_name", "-e", "tls.handshake.extensions_alpn_str"])
        #expect(tshark.stdoutText.split(separator: "\n").first.map(String.init) == "\(serverName)\th3")
    }
}
