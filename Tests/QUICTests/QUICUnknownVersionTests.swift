import Foundation
import HTTPModel
import PacketDecoding
@testable import QUIC
import Testing
import TestSupport

/// Issue 36: a QUIC connection in a version TapKit does not read had no line at all. It now gets one, and a
/// `--json` record, naming the version and nothing invented; a datagram that only looks like a long header (RTP's
/// first byte is 0x80 too) stays unnamed unless the server answers it as QUIC does.
@Suite("QUIC in a version TapKit does not read: named, never decoded")
struct QUICUnknownVersionTests {
    static let gQUIC: UInt32 = 0x5130_3530  // "Q050", Google QUIC's last version, which keeps the invariants
    static let clientID: [UInt8] = [0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8]
    static let serverID: [UInt8] = [0x5e, 0x5f, 0x60, 0x61]
    static let firstDestination: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]

    /// A long header: form and fixed bits, the version, then each connection ID after its length, padded.
    static func longHeader(_ version: UInt32, dcid: [UInt8], scid: [UInt8], size: Int = 1200, first: UInt8 = 0xc0) -> [UInt8] {
        var bytes = [first] + withUnsafeBytes(of: version.bigEndian, Array.init)
        bytes += [UInt8(dcid.count)] + dcid + [UInt8(scid.count)] + scid
        return bytes + Array(repeating: 0x5a, count: max(0, size - bytes.count))
    }

    static func clientFlight(_ version: UInt32 = gQUIC, size: Int = 1200) -> [UInt8] {
        longHeader(version, dcid: firstDestination, scid: clientID, size: size)
    }

    @Test("the server's answer in the same version, to the client's ID, names the connection once")
    func namedByAnswer() throws {
        let harness = DecoderHarness()
        harness.receive(Self.clientFlight(), from: quicClient, to: quicServer)
        #expect(harness.notices.isEmpty, "a first flight alone, off port 443, could be another protocol")
        harness.receive(Self.longHeader(Self.gQUIC, dcid: Self.clientID, scid: Self.serverID, size: 300), from: quicServer, to: quicClient)
        harness.receive(Self.clientFlight(), from: quicClient, to: quicServer)
        harness.receive(Self.longHeader(Self.gQUIC, dcid: Self.clientID, scid: Self.serverID, size: 300), from: quicServer, to: quicClient)
        harness.finish()
        let notice = try #require(harness.notices.first)
        #expect(harness.notices.count == 1)
        #expect(notice.kind == .quic(version: Self.gQUIC, serverName: nil, alpn: [], keys: .unknownVersion))
        #expect(notice.client == quicClient && notice.server == quicServer)
        #expect(notice.connectionIDs == QUICConnectionIDs(clientInitialDestination: Self.firstDestination,
                                                          clientSource: Self.clientID, serverSource: Self.serverID))
    }

    @Test("to UDP port 443 the first flight is named at once; a Version Negotiation answer names it with its list")
    func port443AndNegotiation() throws {
        let https = Endpoint(address: quicServer.address, port: 443)
        let onPort = DecoderHarness()
        onPort.receive(Self.clientFlight(), from: quicClient, to: https)
        #expect(onPort.notices.map(\.server) == [https])

        let negotiated = DecoderHarness()
        let grease: UInt32 = 0x1a2a_3a4a
        negotiated.receive(Self.clientFlight(grease), from: quicClient, to: quicServer)
        var answer = [UInt8(0x80), 0, 0, 0, 0, UInt8(Self.clientID.count)] + Self.clientID
        answer += [UInt8(Self.firstDestination.count)] + Self.firstDestination + [0, 0, 0, 1, 0x6b, 0x33, 0x43, 0xcf]
        negotiated.receive(answer, from: quicServer, to: quicClient)
        #expect(negotiated.notices.map(\.kind) == [.quic(version: grease, serverName: nil, alpn: [], keys: .unknownVersion)])
        #expect(negotiated.warnings == [.versionNegotiation(versions: [1, 0x6b33_43cf])])
    }

    @Test("not named: RTP-like datagrams, short ones, answers to another ID or in another version")
    func notNamed() {
        let harness = DecoderHarness()
        // RTP version 2 (first byte 0x80: no fixed bit), answered in kind.
        let rtp = Self.longHeader(0x1234_5678, dcid: [], scid: [], size: 1300, first: 0x80)
        harness.receive(rtp, from: quicClient, to: quicServer)
        harness.receive(rtp, from: quicServer, to: quicClient)
        // A first flight under 1200 bytes, answered.
        let other = Endpoint(address: .v4(0x0a00_0003), port: 50_001)
        harness.receive(Self.clientFlight(size: 600), from: other, to: quicServer)
        harness.receive(Self.longHeader(Self.gQUIC, dcid: Self.clientID, scid: Self.serverID), from: quicServer, to: other)
        // Answers to another connection ID, and in another unknown version.
        let third = Endpoint(address: .v4(0x0a00_0004), port: 50_002)
        harness.receive(Self.clientFlight(), from: third, to: quicServer)
        harness.receive(Self.longHeader(Self.gQUIC, dcid: Self.serverID, scid: Self.serverID), from: quicServer, to: third)
        harness.receive(Self.longHeader(0x5130_3436, dcid: Self.clientID, scid: Self.serverID), from: quicServer, to: third)
        harness.finish()
        #expect(harness.notices.isEmpty)
    }

    @Test("bounded: past the limit the oldest first flights are forgotten")
    func bounded() {
        var limits = QUICLimits()
        limits.maxConnections = 4
        let harness = DecoderHarness()
        harness.decoder = QUICDecoder(keySource: nil, limits: limits)
        let clients = (0..<6).map { Endpoint(address: .v4(0x0a00_1000 + UInt32($0)), port: 40_000) }
        for (index, client) in clients.enumerated() {
            harness.receive(Self.clientFlight(), from: client, to: quicServer, at: Int64(index + 1))
        }
        for client in clients {
            harness.receive(Self.longHeader(Self.gQUIC, dcid: Self.clientID, scid: Self.serverID, size: 300),
                            from: quicServer, to: client)
        }
        #expect(harness.notices.map(\.client) == Array(clients.suffix(4)))
    }

    @Test("h3-negotiation (aioquic opening with a reserved version): named, the server's list, then v1 decrypted, as tshark reads it",
          .enabled(if: TestEnvironment.hasProgram("tshark"), "needs tshark, the oracle (Scripts/setup --test installs it)"))
    func realNegotiation() throws {
        let decoded = try DecodedFixture.read("h3-negotiation")
        let tshark = try run("tshark", ["-r", quicFixtures.appendingPathComponent("h3-negotiation.pcap").path, "-T", "fields",
                                        "-e", "quic.version", "-e", "quic.supported_version", "-Y", "quic.version == 0 or frame.number == 1"])
        let rows = tshark.stdoutText.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        let firstText = try #require(rows.first?.first), offeredText = try #require(rows.last?.last)
        let first = try #require(UInt32(firstText.dropFirst(2), radix: 16))
        let offered = offeredText.split(separator: ",").compactMap { UInt32($0.dropFirst(2), radix: 16) }
        #expect(first == 0x1a2a_3a4a && offered == [1, 0x6b33_43cf], "\(tshark.stdoutText)")
        #expect(decoded.notices.map(\.kind) == [.quic(version: first, serverName: nil, alpn: [], keys: .unknownVersion),
                                                 .quic(version: 1, serverName: "quic.tapkit.test", alpn: ["h3"], keys: .decrypted)])
        #expect(decoded.warnings.filter { if case .versionNegotiation = $0 { true } else { false } }
                == [.versionNegotiation(versions: offered)])
    }
}
