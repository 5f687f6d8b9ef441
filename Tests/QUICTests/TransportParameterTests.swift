import FlowReassembly
import Foundation
import HTTPModel
@testable import QUIC
import Testing
import TestSupport

/// Transport parameters (RFC 9000 section 18) as the connection's notice carries them, against tshark 4.0's
/// reading of the same handshakes (tls.quic.parameter.*): the same ids in the same order for each side, and the
/// same value for every integer parameter.
@Suite("QUIC transport parameters: each side's, as tshark reads them")
struct TransportParameterTests {
    static let integerNames = QUICTransportParameter.known.filter { $0.value.encoding == .integer }.map(\.value.name).sorted()

    @Test("client's from the ClientHello, server's from EncryptedExtensions, ids in order and integer values as tshark",
          arguments: ["h3-basic", "h3-v2", "h3-resume", "h3-chromium"])
    func matchTshark(_ name: String) throws {
        let decoded = try DecodedFixture.read(name)
        let sides = decoded.notices.compactMap(\.transportParameters)
        try #require(sides.count == decoded.notices.count && !sides.isEmpty, "a notice without transport parameters")
        #expect(sides.allSatisfy { $0.server != nil }, "server parameters missing with keys")

        let port = name == "h3-basic" ? 443 : 4433
        let fields = ["udp.dstport", "tls.quic.parameter.type"] + Self.integerNames.map { "tls.quic.parameter." + $0 }
        let result = try run("tshark", ["-r", quicFixtures.appendingPathComponent(name + ".pcap").path,
                                        "-o", "tls.keylog_file:" + quicFixtures.appendingPathComponent(name + ".keys").path,
                                        "-d", "udp.port==\(port),quic", "-Y", "tls.quic.parameter.type", "-T", "fields",
                                        "-E", "occurrence=a", "-E", "aggregator=|"] + fields.flatMap { ["-e", $0] })
        // Per handshake message with parameters, in capture order: (from the client, ids, integer values by name).
        var theirs: [(fromClient: Bool, ids: [UInt64], integers: [String: [UInt64]])] = []
        for line in result.stdoutText.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map { $0.split(separator: "|").map(String.init) }
            guard columns.count == fields.count else { continue }
            var integers: [String: [UInt64]] = [:]
            for (index, name) in Self.integerNames.enumerated() where !columns[index + 2].isEmpty {
                integers[name] = columns[index + 2].compactMap { UInt64($0) }
            }
            theirs.append((Int(columns[0].first ?? "") == port, columns[1].compactMap { UInt64($0) }, integers))
        }
        let ours = sides.flatMap { [(true, $0.client), (false, $0.server ?? [])] }
        try #require(theirs.count == ours.count, "tshark: \(theirs.count) handshake messages with parameters, ours \(ours.count)")
        for (index, (fromClient, parameters)) in ours.enumerated() {
            let side = fromClient ? "client" : "server"
            #expect(theirs[index].fromClient == fromClient)
            #expect(parameters.map(\.id) == theirs[index].ids, "\(name) \(side) ids")
            for integerName in Self.integerNames {
                let values = parameters.filter { $0.name == integerName }.compactMap { parameter -> UInt64? in
                    if case .integer(let number) = parameter.value { return number }
                    return nil
                }
                #expect(values == theirs[index].integers[integerName] ?? [], "\(name) \(side) \(integerName)")
            }
        }
    }

    @Test("without keys the client's parameters are still shown (the Initial is readable), the server's are not")
    func withoutKeys() throws {
        let decoded = try DecodedFixture.read("h3-basic", keyLog: nil)
        let parameters = try #require(decoded.notices.first?.transportParameters)
        #expect(parameters.server == nil)
        #expect(parameters.client.contains { $0.name == "initial_source_connection_id" })
    }

    @Test("values read by their id's encoding; one that does not read so is kept as sent; a length past the end stops")
    func encodings() {
        // max_idle_timeout 30000 (4-byte varint), disable_active_migration, a GREASE id, max_ack_delay with a byte
        // too many (kept as bytes), version_information (chosen v1, v1 and v2), then an id whose length runs out.
        let bytes: [UInt8] = [0x01, 0x04, 0x80, 0x00, 0x75, 0x30, 0x0c, 0x00, 0x1b, 0x01, 0xaa, 0x0b, 0x02, 0x19, 0x00,
                              0x11, 0x0c, 0, 0, 0, 1, 0, 0, 0, 1, 0x6b, 0x33, 0x43, 0xcf, 0x04, 0x09, 0x01]
        let list = QUICTransportParameter.list(bytes)
        // max_ack_delay's two bytes do not read as one varint: shown as the bytes sent (19 00).
        #expect(list.map(\.description) == ["max_idle_timeout 30000 ms", "disable_active_migration", "GREASE 0x1b aa",
                                            "max_ack_delay 1900", "version_information chosen 0x1 available 0x1, 0x6b3343cf"])
        #expect(list.count == 5)
        #expect(list[0].value == .integer(30000))
        #expect(list[1].value == .flag)
        #expect(list[2].name == "GREASE 0x1b" && list[2].value == .bytes([0xaa]))
        #expect(list[3].value == .bytes([0x19, 0x00]))
        #expect(list[4].value == .versionInformation(chosen: 1, available: [1, 0x6b33_43cf]))
    }
}
