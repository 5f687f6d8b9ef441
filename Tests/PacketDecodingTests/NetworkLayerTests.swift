import Testing
import TestSupport
@testable import PacketDecoding

@Suite(.enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public"))
struct NetworkLayerTests {
    let atomic = "zeek_ipv6-http-atomic-frag.pcap"

    @Test func ipv6DestinationOptionsWalked() throws {
        try PcapFixture.publicFixture(atomic).decode(3) { packet in
            guard case .ipv6(let header) = packet.network else { Issue.record("not IPv6"); return }
            #expect(header.extensionCount == 1)
            #expect(header.extension(at: 0)?.type == 60)
            #expect(header.protocolNumber == 6)
            #expect(packet.tcp?.source.port == 36951)
            #expect(packet.tcp?.sequenceNumber == 3_810_442_574)
        }
    }

    @Test func ipv6AtomicFragmentDecodedThrough() throws {
        try PcapFixture.publicFixture(atomic).decode(15) { packet in
            guard case .ipv6(let header) = packet.network else { Issue.record("not IPv6"); return }
            let fragment = try #require(header.fragment)
            #expect(fragment.offset == 0)
            #expect(!fragment.moreFragments)
            let tcp = try #require(packet.tcp)
            #expect(tcp.payloadLength == 15)
            #expect(String(decoding: tcp.payload.prefix(4), as: UTF8.self) == "GET ")
        }
    }

    @Test func ipv6HopByHopAndRouting() throws {
        let fixture = try PcapFixture.publicFixture(atomic)
        try fixture.decode(25) { packet in
            guard case .ipv6(let header) = packet.network else { Issue.record("not IPv6"); return }
            #expect(header.extension(at: 0)?.type == 0)
            #expect(packet.tcp?.payloadLength == 15)
        }
        try fixture.decode(35) { packet in
            guard case .ipv6(let header) = packet.network else { Issue.record("not IPv6"); return }
            let routing = try #require(header.extension(at: 0))
            #expect(routing.type == 43)
            #expect(routing.routingType == 0)
            #expect(routing.segmentsLeft == 0)
            #expect(packet.tcp?.destination.port == 80)
        }
    }

    @Test func ipv4NonFirstFragmentIsShownAsFragment() throws {
        var record = try PcapFixture.publicFixture("zeek_http_get.pcap").records[3]
        // Derived from a real packet: fragment offset 185 (1480 bytes), more-fragments clear.
        record.bytes[14 + 6] = 0x00
        record.bytes[14 + 7] = 185
        let decoder = try PacketDecoder(linkType: .ethernet)
        record.bytes.withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: record.timestamp, originalLength: record.originalLength)
            guard case .ipv4(let header) = packet.network else { Issue.record("not IPv4"); return }
            #expect(header.isFragment)
            #expect(header.fragmentOffset == 1480)
            guard case .fragment(let proto) = packet.transport else { Issue.record("not a fragment"); return }
            #expect(proto == 6)
        }
    }

    @Test func ipv4OptionsAreSkipped() throws {
        let original = try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap").records[0]
        // Insert a 4-byte options block (NOP NOP NOP EOL) into the real header and fix the length fields.
        var bytes = Array(original.bytes[0..<20]) + [1, 1, 1, 0] + Array(original.bytes[20...])
        bytes[0] = 0x46
        let total = bytes.count
        bytes[2] = UInt8(total >> 8)
        bytes[3] = UInt8(total & 0xff)
        let decoder = try PacketDecoder(linkType: .raw)
        bytes.withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: original.timestamp, originalLength: total)
            guard case .ipv4(let header) = packet.network else { Issue.record("not IPv4"); return }
            #expect(header.optionsLength == 4)
            #expect(packet.udp?.destination.port == 53)
        }
    }

    @Test func snaplenCutPayloadIsMarkedNotDropped() throws {
        try PcapFixture.publicFixture("zeek_http_get.pcap").decode(3, captured: 14 + 52 + 10) { packet in
            #expect(packet.isTruncated)
            #expect(packet.error == nil)
            let tcp = try #require(packet.tcp)
            #expect(tcp.payloadLength == 136)
            #expect(tcp.payload.count == 10)
            #expect(tcp.isTruncated)
        }
    }

    @Test func cutTCPHeaderReportsLayerOffsetAndLengths() throws {
        try PcapFixture.publicFixture("zeek_http_get.pcap").decode(0, captured: 14 + 20 + 10) { packet in
            let error = try #require(packet.error)
            #expect(error.layer == .tcp)
            #expect(error.kind == .truncated)
            #expect(error.offset == 34)
            #expect(error.needed == 20)
            #expect(error.actual == 10)
            #expect(error.description == "tcp header truncated at offset 34: needs 20 bytes, has 10")
            guard case .ipv4 = packet.network else { Issue.record("IPv4 layer lost"); return }
        }
    }

    @Test func cutEthernetHeader() throws {
        try PcapFixture.publicFixture("zeek_http_get.pcap").decode(0, captured: 9) { packet in
            let error = try #require(packet.error)
            #expect(error.layer == .link)
            #expect(error.needed == 14)
            #expect(error.actual == 9)
        }
    }

    @Test func everyPrefixOfEveryPacketDecodesWithoutCrashing() throws {
        for name in ["zeek_http_get.pcap", atomic, "zeek_http-qinq-0.pcap", "zeek_nflog-http.pcap", "zeek_linux_dlt_sll2.pcap"] {
            let fixture = try PcapFixture.publicFixture(name)
            for index in fixture.records.indices.prefix(12) {
                for cut in 0...fixture.records[index].bytes.count {
                    try fixture.decode(index, captured: cut) { packet in
                        #expect(packet.capturedLength == cut)
                    }
                }
            }
        }
    }
}

/// MLDv2 reports (Tests/Fixtures/printer/mldv2-ndp.pcap): the group records, their sources, and a record the
/// capture cut.
@Suite struct MLDv2ReportTests {
    static let fixture = TestEnvironment.fixtures.appendingPathComponent("printer/mldv2-ndp.pcap")

    @Test func recordsAndSources() throws {
        let capture = try PcapFixture(Self.fixture)
        try capture.decode(1) { packet in
            guard case .icmpv6(let message) = packet.transport else { Issue.record("no ICMPv6"); return }
            let report = MLDv2Report(message)
            #expect(report.recordCount == 2)
            let first = try #require(report.record(at: 0))
            #expect(first.type == 4 && first.sourceCount == 0 && first.end == 20)
            let second = try #require(report.record(at: first.end))
            #expect(second.type == 3 && second.sourceCount == 2)
            #expect(report.source(at: second.sourcesOffset + 16) == .v6(high: 0xfe80_0000_0000_0000, low: 2))
            #expect(second.end == report.length)
        }
        try capture.decode(6) { packet in  // the same report, its last 10 bytes not captured
            guard case .icmpv6(let message) = packet.transport else { Issue.record("no ICMPv6"); return }
            let report = MLDv2Report(message)
            let second = try #require(report.record(at: 20))
            #expect(report.source(at: second.sourcesOffset) != nil)
            #expect(report.source(at: second.sourcesOffset + 16) == nil)
        }
    }
}
