import FlowReassembly
import Foundation
import HTTPModel
@testable import QUIC
import Testing
import TestSupport

/// The connection IDs a QUIC connection's line and record show (the client's first Destination Connection ID and
/// each side's first Source Connection ID, as Zeek's quic.log has them), against tshark 4.0's reading of the same
/// long headers. Without keys too: long headers are not encrypted.
@Suite("QUIC connection IDs: the first ones each side sent, as tshark reads them")
struct ConnectionIDTests {
    @Test("client's first DCID and each side's first SCID, a Retry's aside; Chromium's empty SCID is empty",
          arguments: ["h3-basic", "h3-retry", "h3-resume", "h3-chromium", "h3-v2", "h3-migration"])
    func matchTshark(_ name: String) throws {
        let expected = try Self.tsharkIDs(name)
        for keys in [true, false] {
            let decoded = try DecodedFixture.read(name, keyLog: keys ? "" : nil)
            try #require(decoded.notices.count == expected.count, "\(name): \(decoded.notices.count) lines, tshark \(expected.count) connections")
            for notice in decoded.notices {
                let theirs = try #require(expected[notice.client.port])
                #expect(notice.connectionIDs == theirs, "\(name) port \(notice.client.port) keys \(keys)")
            }
        }
        if name == "h3-chromium" { #expect(expected.values.allSatisfy { $0.clientSource == [] }) }
    }

    /// Per client port: the DCID and SCID of the client's first long header, the SCID of the server's first long
    /// header that is not a Retry.
    static func tsharkIDs(_ name: String) throws -> [UInt16: QUICConnectionIDs] {
        let port = name == "h3-basic" ? 443 : 4433
        let result = try run("tshark", ["-r", quicFixtures.appendingPathComponent(name + ".pcap").path, "-d", "udp.port==\(port),quic",
                                        "-T", "fields", "-e", "udp.srcport", "-e", "udp.dstport", "-e", "quic.long.packet_type",
                                        "-e", "quic.long.packet_type_v2", "-e", "quic.dcid", "-e", "quic.scid", "-e", "quic.retry_integrity_tag",
                                        "-E", "occurrence=f"])
        var found: [UInt16: QUICConnectionIDs] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            // Short headers have no packet type (v2's has a field of its own).
            guard columns.count == 7, !columns[2].isEmpty || !columns[3].isEmpty, let source = UInt16(columns[0]), let destination = UInt16(columns[1])
            else { continue }
            let bytes = { (hex: String) in stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            } }
            if Int(destination) == port {
                if found[source] == nil {
                    found[source] = QUICConnectionIDs(clientInitialDestination: bytes(columns[4]), clientSource: bytes(columns[5]),
                                                      serverSource: nil)
                }
            } else if columns[6].isEmpty, found[destination]?.serverSource == nil {
                found[destination]?.serverSource = bytes(columns[5])
            }
        }
        return found
    }
}
