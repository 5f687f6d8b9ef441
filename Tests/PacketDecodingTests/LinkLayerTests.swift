import Testing
import TestSupport
@testable import PacketDecoding

/// Link layers, each on a real capture from ../shared/fixtures/public.
@Suite(.enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public"))
struct LinkLayerTests {
    let client = IPAddress.v4(0x8d8e_e405)  // 141.142.228.5
    let server = IPAddress.v4(0xc096_bb2b)  // 192.150.187.43

    @Test func ethernetTCPSyn() throws {
        try PcapFixture.publicFixture("zeek_http_get.pcap").decode(0) { packet in
            #expect(packet.error == nil)
            #expect(packet.link.kind == .ethernet)
            #expect(packet.link.length == 14)
            let tcp = try #require(packet.tcp)
            #expect(tcp.source == Endpoint(address: client, port: 59856))
            #expect(tcp.destination == Endpoint(address: server, port: 80))
            #expect(tcp.sequenceNumber == 4_263_588_410)
            #expect(tcp.flags == .syn)
            #expect(tcp.window == 65535)
            #expect(tcp.headerLength == 44)
            #expect(tcp.payloadLength == 0)
            var options: [String] = []
            for option in tcp.optionIterator {
                switch option.value {
                case .maximumSegmentSize(let mss?): options.append("mss \(mss)")
                case .noOperation: options.append("nop")
                case .windowScale(let shift?): options.append("wscale \(shift)")
                case .timestamp(let value, let echo): options.append("TS \(value) \(echo)")
                case .sackPermitted: options.append("sackOK")
                case .endOfList: options.append("eol")
                default: options.append("other")
                }
            }
            #expect(options == ["mss 1460", "nop", "wscale 4", "nop", "nop", "TS 374005024 0", "sackOK", "eol"])
        }
    }

    @Test func ethernetHTTPRequestPayload() throws {
        try PcapFixture.publicFixture("zeek_http_get.pcap").decode(3) { packet in
            let tcp = try #require(packet.tcp)
            #expect(tcp.flags == [.psh, .ack])
            #expect(tcp.payloadLength == 136)
            #expect(tcp.payload.count == 136)
            #expect(!tcp.isTruncated)
            #expect(String(decoding: tcp.payload.prefix(13), as: UTF8.self) == "GET /download")
        }
    }

    @Test func singleVLANTag() throws {
        try PcapFixture.publicFixture("zeek_http-vlan-0.pcap").decode(0) { packet in
            #expect(packet.link.vlanTagCount == 1)
            #expect(packet.link.length == 18)
            #expect(packet.tcp?.source.port == 59856)
        }
    }

    @Test func qinqTags() throws {
        try PcapFixture.publicFixture("zeek_http-qinq-0.pcap").decode(0) { packet in
            #expect(packet.link.vlanTagCount == 2)
            #expect(packet.link.length == 22)
            #expect(packet.link.etherType == 0x0800)
            #expect(packet.tcp?.sequenceNumber == 4_263_588_410)
        }
    }

    @Test func linuxCookedV1() throws {
        try PcapFixture.publicFixture("httpflow_100continue.pcap").decode(0) { packet in
            #expect(packet.link.kind == .linuxCooked)
            #expect(packet.link.packetType == 0)
            let tcp = try #require(packet.tcp)
            #expect(tcp.source == Endpoint(address: .v4(0x0a0d_018d), port: 41120))
            #expect(tcp.destination.port == 30101)
            #expect(tcp.sequenceNumber == 2_718_983_207)
        }
    }

    @Test func linuxCookedV2ICMP() throws {
        try PcapFixture.publicFixture("zeek_linux_dlt_sll2.pcap").decode(0) { packet in
            #expect(packet.link.kind == .linuxCooked2)
            #expect(packet.link.interfaceIndex == 1)
            guard case .icmp(let icmp) = packet.transport else { Issue.record("not ICMP: \(packet.transport)"); return }
            #expect(icmp.type == 8)
            #expect(icmp.identifier == 8)
            #expect(icmp.sequence == 1)
            #expect(icmp.length == 64)
        }
    }

    @Test func nflog() throws {
        try PcapFixture.publicFixture("zeek_nflog-http.pcap").decode(0) { packet in
            #expect(packet.link.kind == .nflog)
            let tcp = try #require(packet.tcp)
            #expect(tcp.source == Endpoint(address: .v4(0x0a00_020f), port: 49762))
            #expect(tcp.sequenceNumber == 1_060_289_233)
        }
    }

    @Test(arguments: [LinkType.raw, .rawDLT12, .rawDLT14, .ipv4])
    func rawIPv4UDP(linkType: LinkType) throws {
        try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap").decode(0, as: linkType) { packet in
            #expect(packet.link.kind == .rawIP)
            let udp = try #require(packet.udp)
            #expect(udp.source == Endpoint(address: .v4(0xc0a8_0164), port: 12345))
            #expect(udp.destination == Endpoint(address: .v4(0x0909_0909), port: 53))
            #expect(udp.payloadLength == 29)
        }
    }

    /// Every raw-IP link type reads the version nibble (LINKTYPE_IPV6 carrying IPv4 is IPv4); a frame of another
    /// version is no IP packet but no error either: no network layer, the version kept (tcpdump's `unknown ip 0`).
    @Test(arguments: [LinkType.raw, .rawDLT12, .rawDLT14, .ipv4, .ipv6])
    func rawLinkReadsTheVersionNibble(linkType: LinkType) throws {
        try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap").decode(0, as: linkType) { packet in
            #expect(packet.udp?.payloadLength == 29)
        }
        let decoder = try PacketDecoder(linkType: linkType)
        for first: UInt8 in [0x00, 0x50, 0xf0] {
            let frame = [first] + [UInt8](repeating: 0, count: 39)
            frame.withUnsafeBytes { raw in
                let packet = decoder.decode(raw, timestamp: Timestamp(seconds: 0, subsecondNanoseconds: 0),
                                            originalLength: frame.count)
                #expect(packet.error == nil)
                #expect(packet.link.rawIPVersion == first >> 4)
                guard case .other(0) = packet.network else {
                    Issue.record("\(linkType) version \(first >> 4): \(packet.network)")
                    return
                }
            }
        }
    }

    /// macOS rvi interfaces label captures Ethernet but the frames start with the IP header.
    @Test func ethernetLabelledFrameStartingWithIP() throws {
        try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap").decode(0, as: .ethernet) { packet in
            #expect(packet.link.kind == .ethernetCarryingIP)
            #expect(packet.udp?.destination.port == 53)
        }
    }

    /// BSD loopback: a 4-byte address family (host order for NULL, network order for LOOP) before the IP header.
    @Test(arguments: [(LinkType.null, [UInt8]([2, 0, 0, 0])), (LinkType.null, [0, 0, 0, 2]), (LinkType.loop, [0, 0, 0, 2])])
    func bsdLoopback(linkType: LinkType, family: [UInt8]) throws {
        let fixture = try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap")
        let frame = family + fixture.records[0].bytes
        let decoder = try PacketDecoder(linkType: linkType)
        frame.withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: frame.count)
            #expect(packet.link.kind == .loopback)
            #expect(packet.link.length == 4)
            #expect(packet.udp?.payloadLength == 29)
        }
    }

    /// PPP (DLT 9): the protocol field alone, after HDLC address and control bytes, compressed to one byte, or after
    /// pppd's direction bytes (0x00 0x03 in, 0x01 0x03 out), before the same IPv4 packet; LCP is named, not decoded.
    @Test(arguments: [([UInt8]([0x00, 0x21]), 2, nil), ([0xff, 0x03, 0x00, 0x21], 4, nil), ([0x21], 1, nil),
                      ([0x00, 0x03, 0x00, 0x21], 4, 0), ([0x01, 0x03, 0x21], 3, 4)] as [([UInt8], Int, UInt16?)])
    func ppp(header: [UInt8], length: Int, direction: UInt16?) throws {
        let fixture = try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap")
        let frame = header + fixture.records[0].bytes
        let decoder = try PacketDecoder(linkType: .ppp)
        frame.withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: frame.count)
            #expect(packet.link.kind == .ppp)
            #expect(packet.link.length == length)
            #expect(packet.link.pppProtocol == 0x0021)
            #expect(packet.link.packetType == direction)
            #expect(packet.udp?.payloadLength == 29)
        }
        let lcp: [UInt8] = [0xff, 0x03, 0xc0, 0x21, 0x01, 0x01, 0x00, 0x04]
        lcp.withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: lcp.count)
            #expect(packet.link.pppProtocol == 0xc021)
            #expect(packet.error == nil)
            #expect(packet.udp == nil && packet.tcp == nil)
        }
        // Less than tcpdump's PPP_HDRLEN (4 bytes) is a cut link header.
        [UInt8]([0x00, 0x21, 0x45]).withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: 3)
            #expect(packet.error?.layer == .link)
        }
    }

    /// Cisco HDLC (DLT 104): a 4-byte header (address, control, EtherType). IPv4 is decoded after it; SLARP (0x8035)
    /// and ARP's type are named by the link header only, never read as the Ethernet RARP or ARP they would be there.
    @Test func ciscoHDLC() throws {
        let fixture = try PcapFixture.publicFixture("tcpdump_LINKTYPE_RAW_ipv4.pcap")
        let decoder = try PacketDecoder(linkType: .ciscoHDLC)
        let frame: [UInt8] = [0x8f, 0x00, 0x08, 0x00] + fixture.records[0].bytes
        frame.withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: frame.count)
            #expect(packet.link.kind == .ciscoHDLC)
            #expect(packet.link.length == 4)
            #expect(packet.link.hdlcAddress == 0x8f)
            #expect(packet.link.linkEtherType == 0x0800)
            #expect(packet.udp?.payloadLength == 29)
        }
        for type: [UInt8] in [[0x80, 0x35], [0x08, 0x06]] {
            // A SLARP keepalive's fields; as ARP they would be hardware type 0 and protocol 2.
            let other: [UInt8] = [0x8f, 0x00] + type + [0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0, 0, 0, 0]
            other.withUnsafeBytes { raw in
                let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: other.count)
                #expect(packet.error == nil)
                #expect(packet.link.linkEtherType == UInt16(type[0]) << 8 | UInt16(type[1]))
                guard case .other(0) = packet.network else {
                    Issue.record("type \(type): \(packet.network)")
                    return
                }
            }
        }
        [UInt8]([0x0f, 0x00, 0x08]).withUnsafeBytes { raw in
            let packet = decoder.decode(raw, timestamp: fixture.records[0].timestamp, originalLength: 64)
            #expect(packet.error?.layer == .link)
        }
    }

    /// SLARP's fixed part (14 bytes) and a keepalive's optional uptime; shorter, or cut, is no message.
    @Test func slarp() {
        let keepalive: [UInt8] = [0, 0, 0, 2, 0, 0, 0, 0x1d, 0, 0, 0, 0x1c, 0xff, 0xff, 0x05, 0x97, 0x07, 0xc0]
        keepalive.withUnsafeBytes { raw in
            let message = SLARPMessage(payload: raw, length: raw.count)
            #expect(message.code == 2 && message.first == 0x1d && message.second == 0x1c && message.reliability == 0xffff)
            #expect(message.uptimeMilliseconds == 93_784_000)
            let cut = SLARPMessage(payload: UnsafeRawBufferPointer(rebasing: raw[..<16]), length: 18)
            #expect(cut.code == 2 && cut.uptimeMilliseconds == nil && cut.uptimeCut)
            #expect(SLARPMessage(payload: UnsafeRawBufferPointer(rebasing: raw[..<12]), length: 12).code == nil)
        }
    }

    @Test func unsupportedLinkTypeIsNamed() {
        #expect(throws: PacketDecoder.UnsupportedLinkType.self) { try PacketDecoder(linkType: LinkType(rawValue: 147)) }
        do {
            _ = try PacketDecoder(linkType: LinkType(rawValue: 147))
        } catch {
            #expect(error.description.contains("LINKTYPE_147"))
        }
    }
}
