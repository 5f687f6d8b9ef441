@testable import QUIC
import TLSWire
import Testing

@Suite("QUIC packet protection: RFC 9001 and RFC 9369 Appendix A")
struct PacketProtectionTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    struct Case: Sendable, CustomTestStringConvertible {
        var version: QUICVersion
        var clientKeys: (String, String, String)
        var serverKeys: (String, String, String)
        var chaChaKeys: (String, String, String, String)
        var clientHeader: [UInt8], clientPayload: [UInt8], clientPacket: [UInt8]
        var serverHeader: [UInt8], serverPayload: [UInt8], serverPacket: [UInt8]
        var chaChaPacket: [UInt8]
        var testDescription: String { version == .v1 ? "QUIC v1 (RFC 9001)" : "QUIC v2 (RFC 9369)" }
    }

    static let cases = [
        Case(version: .v1,
             clientKeys: ("1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2"),
             serverKeys: ("cf3a5331653c364c88f0f379b6067e37", "0ac1493ca1905853b0bba03e", "c206b8d9b9f0f37644430b490eeaa314"),
             chaChaKeys: ("c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8", "e0459b3474bdd0e44a41c144",
                          "25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4",
                          "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9"),
             clientHeader: RFCVectors.longClientPlainHeaderV1, clientPayload: RFCVectors.longClientPlainPayloadV1,
             clientPacket: RFCVectors.longClientEncryptedPacketV1, serverHeader: RFCVectors.longServerPlainHeaderV1,
             serverPayload: RFCVectors.longServerPlainPayloadV1, serverPacket: RFCVectors.longServerEncryptedPacketV1,
             chaChaPacket: RFCVectors.chacha20ClientEncryptedPacketV1),
        Case(version: .v2,
             clientKeys: ("8b1a0bc121284290a29e0971b5cd045d", "91f73e2351d8fa91660e909f", "45b95e15235d6f45a6b19cbcb0294ba9"),
             serverKeys: ("82db637861d55e1d011f19ea71d5d2a7", "dd13c276499c0249d3310652", "edf6d05c83121201b436e16877593c3a"),
             chaChaKeys: ("3bfcddd72bcf02541d7fa0dd1f5f9eeea817e09a6963a0e6c7df0f9a1bab90f2", "a6b5bc6ab7dafce30ffff5dd",
                          "d659760d2ba434a226fd37b35c69e2da8211d10c4f12538787d65645d5d1b8e2",
                          "c69374c49e3d2a9466fa689e49d476db5d0dfbc87d32ceeaa6343fd0ae4c7d88"),
             clientHeader: RFCVectors.longClientPlainHeaderV2, clientPayload: RFCVectors.longClientPlainPayloadV2,
             clientPacket: RFCVectors.longClientEncryptedPacketV2, serverHeader: RFCVectors.longServerPlainHeaderV2,
             serverPayload: RFCVectors.longServerPlainPayloadV2, serverPacket: RFCVectors.longServerEncryptedPacketV2,
             chaChaPacket: RFCVectors.chacha20ClientEncryptedPacketV2),
    ]

    private func initial(_ version: QUICVersion, client: Bool) throws -> PacketProtection {
        try RFCVectors.dcid.withUnsafeBytes { try #require(PacketProtection.initial(dcid: $0, version: version, client: client)) }
    }

    @Test("A.1: Initial keys, IVs and header protection keys from the client's DCID", arguments: cases)
    func initialKeys(_ vector: Case) throws {
        let client = try initial(vector.version, client: true), server = try initial(vector.version, client: false)
        #expect(hex(client.key) == vector.clientKeys.0 && hex(client.iv) == vector.clientKeys.1 && hex(client.headerKey) == vector.clientKeys.2)
        #expect(hex(server.key) == vector.serverKeys.0 && hex(server.iv) == vector.serverKeys.1 && hex(server.headerKey) == vector.serverKeys.2)
    }

    /// Header protection off, packet number recovered, payload opened: the header and frames the RFC prints.
    private func open(_ packet: [UInt8], keys: PacketProtection, largest: UInt64?, idLength: Int = 0)
        -> (header: [UInt8], number: UInt64, payload: [UInt8])? {
        packet.withUnsafeBytes { datagram in
            var opener = PacketOpener()
            guard let header = PacketHeader.read(datagram, at: 0, shortDCIDLength: idLength),
                  let unprotected = opener.unprotect(datagram, header, with: keys.header) else { return nil }
            let number = decodePacketNumber(largest: largest, truncated: unprotected.truncatedPacketNumber,
                                            bits: unprotected.packetNumberBits)
            guard opener.open(datagram, header, packetNumber: number, with: keys) else { return nil }
            return (opener.header, number, opener.plaintext)
        }
    }

    @Test("A.2: the protected client Initial opens to its CRYPTO frame (ClientHello) and padding", arguments: cases)
    func clientInitial(_ vector: Case) throws {
        let opened = try #require(open(vector.clientPacket, keys: try initial(vector.version, client: true), largest: nil))
        #expect(opened.header == vector.clientHeader)
        #expect(opened.number == 2)
        #expect(Array(opened.payload.prefix(vector.clientPayload.count)) == vector.clientPayload)
        #expect(opened.payload.dropFirst(vector.clientPayload.count).allSatisfy { $0 == 0 })
        #expect(vector.clientPacket.count == 1200)
        // The server keys do not open it.
        #expect(open(vector.clientPacket, keys: try initial(vector.version, client: false), largest: nil) == nil)
    }

    @Test("A.3: the server Initial opens to ACK and CRYPTO (ServerHello)", arguments: cases)
    func serverInitial(_ vector: Case) throws {
        let opened = try #require(open(vector.serverPacket, keys: try initial(vector.version, client: false), largest: nil))
        #expect(opened.header == vector.serverHeader)
        #expect(opened.number == 1)
        #expect(opened.payload == vector.serverPayload)
    }

    @Test("A.5: ChaCha20-Poly1305 short header: keys, the key update secret, packet 654360564 with a PING", arguments: cases)
    func chaChaShortHeader(_ vector: Case) throws {
        let suite = try #require(PacketProtection.Suite(id: 0x1303))
        let keys = try #require(PacketProtection(secret: RFCVectors.chaChaSecret, suite: suite, version: vector.version))
        #expect(hex(keys.key) == vector.chaChaKeys.0 && hex(keys.iv) == vector.chaChaKeys.1 && hex(keys.headerKey) == vector.chaChaKeys.2)
        #expect(hex(try #require(keys.next()).secret) == vector.chaChaKeys.3)
        let opened = try #require(open(vector.chaChaPacket, keys: keys, largest: 654_360_563))
        #expect(opened.header == RFCVectors.hex("4200bff4"))
        #expect(opened.number == 654_360_564)
        #expect(opened.payload == [0x01])
    }

    @Test("RFC 9000 A.3: packet number recovery from its truncated form")
    func packetNumbers() {
        #expect(decodePacketNumber(largest: 0xa82f30ea, truncated: 0x9b32, bits: 16) == 0xa82f9b32)
        #expect(decodePacketNumber(largest: nil, truncated: 0, bits: 8) == 0)
        #expect(decodePacketNumber(largest: 255, truncated: 2, bits: 8) == 258)
        #expect(decodePacketNumber(largest: 300, truncated: 250, bits: 8) == 250)
    }
}
