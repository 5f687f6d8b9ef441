import FlowReassembly
import Foundation
import HTTPModel
@testable import QUIC
import Testing
import TestSupport

/// Resumption and 0-RTT as a QUIC connection's line and record show them, against tshark 4.0's reading of the same
/// handshake messages (the extensions of each ClientHello, ServerHello and EncryptedExtensions in the CRYPTO frames).
/// With the key log tshark reads the EncryptedExtensions; without it, only the Initials: so the same oracle says
/// what must be shown with keys, and what must be shown as not seen without them.
@Suite("QUIC resumption and 0-RTT: as the handshake messages say, as tshark reads them")
struct ResumptionTests {
    /// h3-resume: a full handshake, then one resumed with 0-RTT accepted; the others: full handshakes (Chromium's
    /// among them, which offers no PSK).
    static let fixtures = ["h3-basic", "h3-v2", "h3-resume", "h3-chromium", "h3-migration"]

    @Test("with the key log: offered, resumed, 0-RTT offered and accepted, each as tshark reads the messages",
          arguments: fixtures)
    func withKeys(_ name: String) throws {
        let expected = try Self.tsharkResumption(name, keyLog: true)
        let decoded = try DecodedFixture.read(name)
        try #require(decoded.notices.count == expected.count, "\(name): \(decoded.notices.count) lines, tshark \(expected.count) connections")
        for notice in decoded.notices {
            let theirs = try #require(expected[notice.client.port], "\(name): no connection from port \(notice.client.port) in tshark")
            #expect(notice.resumption == theirs, "\(name) port \(notice.client.port)")
            #expect(theirs.earlyDataAccepted != nil, "tshark read no EncryptedExtensions in \(name)")
        }
        if name == "h3-resume" {
            #expect(decoded.notices.map(\.resumption) == [
                QUICResumption(offered: false, resumed: false, earlyDataOffered: false, earlyDataAccepted: false),
                QUICResumption(offered: true, resumed: true, earlyDataOffered: true, earlyDataAccepted: true),
            ])
        }
    }

    @Test("without a key log: resumption read from the Initials; whether 0-RTT was accepted is not seen (nil)",
          arguments: fixtures)
    func withoutKeys(_ name: String) throws {
        let expected = try Self.tsharkResumption(name, keyLog: false)
        let decoded = try DecodedFixture.read(name, keyLog: nil)
        try #require(decoded.notices.count == expected.count)
        for notice in decoded.notices {
            let theirs = try #require(expected[notice.client.port])
            #expect(theirs.earlyDataAccepted == nil && theirs.resumed != nil)
            #expect(notice.resumption == theirs, "\(name) port \(notice.client.port)")
        }
    }

    /// Per client port, what tshark's dissection of the handshake messages says: pre_shared_key (41) and
    /// early_data (42) in the ClientHello, pre_shared_key in the ServerHello (not a HelloRetryRequest's), early_data
    /// in the EncryptedExtensions; nil where tshark read no such message.
    static func tsharkResumption(_ name: String, keyLog: Bool) throws -> [UInt16: QUICResumption] {
        let port = name == "h3-basic" ? 443 : 4433
        var arguments = ["-r", quicFixtures.appendingPathComponent(name + ".pcap").path, "-d", "udp.port==\(port),quic",
                         "-Y", "tls.handshake.type", "-T", "json", "--no-duplicate-keys"]
        if keyLog { arguments += ["-o", "tls.keylog_file:" + quicFixtures.appendingPathComponent(name + ".keys").path] }
        let result = try run("tshark", arguments)
        let packets = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutText.utf8)) as? [[String: Any]])
        var found: [UInt16: QUICResumption] = [:]
        for packet in packets {
            let layers = try #require((packet["_source"] as? [String: Any])?["layers"] as? [String: Any])
            let udp = try #require(layers["udp"] as? [String: Any])
            let source = try #require(Self.strings(udp["udp.srcport"]).first.flatMap { UInt16($0) })
            let destination = try #require(Self.strings(udp["udp.dstport"]).first.flatMap { UInt16($0) })
            let fromClient = Int(destination) == port
            let clientPort = fromClient ? source : destination
            var facts = found[clientPort] ?? QUICResumption(offered: nil, resumed: nil, earlyDataOffered: nil, earlyDataAccepted: nil)
            for message in Self.handshakeMessages(in: layers) {
                let type = Self.strings(message["tls.handshake.type"]).first
                let extensions = Set(Self.values(of: "tls.handshake.extension.type", in: message))
                switch (type, fromClient) {
                case ("1", true):
                    facts.offered = extensions.contains("41")
                    facts.earlyDataOffered = extensions.contains("42")
                case ("2", false):
                    let helloRetry = Self.values(of: "tls.handshake.random", in: message).first?
                        .replacingOccurrences(of: ":", with: "").hasPrefix("cf21ad74e59a6111") == true
                    if !helloRetry { facts.resumed = extensions.contains("41") }
                case ("8", false):
                    facts.earlyDataAccepted = extensions.contains("42")
                default:
                    break
                }
            }
            found[clientPort] = facts
        }
        return found
    }

    /// Every object that is one handshake message (has `tls.handshake.type`), wherever it sits.
    static func handshakeMessages(in value: Any) -> [[String: Any]] {
        if let object = value as? [String: Any] {
            if object["tls.handshake.type"] != nil { return [object] }
            return object.values.flatMap(handshakeMessages)
        }
        if let array = value as? [Any] { return array.flatMap(handshakeMessages) }
        return []
    }

    /// Every value of `key` anywhere under `value` (tshark's JSON gives repeated fields as arrays).
    static func values(of key: String, in value: Any) -> [String] {
        if let object = value as? [String: Any] {
            return object.flatMap { entry in entry.key == key ? strings(entry.value) : values(of: key, in: entry.value) }
        }
        if let array = value as? [Any] { return array.flatMap { values(of: key, in: $0) } }
        return []
    }

    static func strings(_ value: Any?) -> [String] {
        if let string = value as? String { return [string] }
        return (value as? [Any] ?? []).compactMap { $0 as? String }
    }
}
