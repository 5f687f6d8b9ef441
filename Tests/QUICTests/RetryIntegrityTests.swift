@testable import QUIC
import Foundation
import Testing
import TestSupport

/// The Retry integrity tag (RFC 9001 section 5.8, RFC 9369 section 3.3.3), checked by libcrypto's AES-128-GCM.
@Suite("QUIC Retry integrity tag: RFC 9001 A.4 and RFC 9369 A.4, and the h3-retry capture")
struct RetryIntegrityTests {
    /// RFC 9001 A.4 and RFC 9369 A.4: the server's Retry (token "token") to the client of Appendix A.2, whose first
    /// Initial went to connection ID 8394c8f03e515708.
    static let vectors: [(QUICVersion, [UInt8])] = [
        (.v1, RFCVectors.hex("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba")),
        (.v2, RFCVectors.hex("cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d955543665dcc7b6")),
    ]

    @Test("the RFC's Retry verifies; one changed byte anywhere, or another original connection ID, does not",
          arguments: [0, 1])
    func rfcVector(_ index: Int) {
        let (version, retry) = Self.vectors[index]
        func verifies(_ packet: [UInt8], _ dcid: [UInt8] = RFCVectors.dcid) -> Bool {
            packet.withUnsafeBytes { RetryIntegrity.verifies($0, originalDCID: dcid, version: version) }
        }
        #expect(verifies(retry))
        for position in retry.indices {
            var damaged = retry
            damaged[position] ^= 0x01
            #expect(!verifies(damaged), "byte \(position) changed and the tag still verified")
        }
        var otherID = RFCVectors.dcid
        otherID[0] ^= 0x80
        #expect(!verifies(retry, otherID))
        #expect(!verifies(retry, Array(RFCVectors.dcid.dropLast())))
        // The other version's key does not make this tag.
        #expect(!retry.withUnsafeBytes { RetryIntegrity.verifies($0, originalDCID: RFCVectors.dcid, version: version == .v1 ? .v2 : .v1) })
    }

    @Test("h3-retry: aioquic's Retry verifies (the usual warning only); the same capture with its token altered says the tag failed")
    func capture() throws {
        let decoded = try DecodedFixture.read("h3-retry")
        #expect(decoded.warnings == [.retry], "\(decoded.warnings)")
        var pcap = [UInt8](try Data(contentsOf: quicFixtures.appendingPathComponent("h3-retry.pcap")))
        // The Retry: the datagram whose UDP payload starts with a v1 long header of type Retry (0xf0 with any low bits).
        var offset = 24, altered = false
        while offset + 16 <= pcap.count, !altered {
            let length = Int(pcap[offset + 8]) | Int(pcap[offset + 9]) << 8 | Int(pcap[offset + 10]) << 16 | Int(pcap[offset + 11]) << 24
            let frame = offset + 16
            let payload = frame + 14 + 20 + 8  // Ethernet, IPv4 without options, UDP
            if payload + 5 < frame + length, pcap[payload] & 0xf0 == 0xf0, pcap[(payload + 1)...(payload + 4)].elementsEqual([0, 0, 0, 1]) {
                pcap[frame + length - 20] ^= 0x01  // in the token, before the 16-byte tag
                altered = true
            }
            offset = frame + length
        }
        try #require(altered, "no Retry found in h3-retry.pcap")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("w25-retry-\(UUID().uuidString).pcap")
        try Data(pcap).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let damaged = try DecodedFixture.read(file, keyLog: quicFixtures.appendingPathComponent("h3-retry.keys").path)
        #expect(damaged.warnings.contains(.retryIntegrityFailed), "\(damaged.warnings)")
        #expect(!damaged.warnings.contains(.retry))
    }
}
