import Testing
@testable import PacketDecoding
@testable import Reports

/// DHCP and NTP lines on real frames from Tests/Fixtures/udp-services (udhcpc's DISCOVER to dnsmasq, chronyd's
/// server answer), decoded and printed here; the expected text is what tcpdump 4.99 prints for them.
/// FlagConformanceTests and UDPServiceConformanceTests compare whole captures with tcpdump.
@Suite struct UDPServicePrinterTests {
    static let discover = VerbosePrinterTests.hexBytes(
        "ffffffffffff86f6e40c7be008004500014800000000401179a600000000ffffffff004400430134134a01010600d862825f0000"
            + "00000000000000000000000000000000000086f6e40c7be0")
        + [UInt8](repeating: 0, count: 202)
        + VerbosePrinterTests.hexBytes(
            "638253633501013902024037070103060c0f1c2a3c0c756468637020312e33352e303d070186f6e40c7be0ff")
        + [UInt8](repeating: 0, count: 20)
    static let ntpServer = VerbosePrinterTests.hexBytes(
        "86f6e40c7be062ab92337ebd08004500004c8bde40004011990a0adb00010adb0002007bbf2600381cac240306e60000000000000000"
            + "7f7f0101eeaea1ad1e17bea77325c7d3483854fbeeaea1aeb1dc241beeaea1aeb1e4742e")

    @Test func dhcpRequestNamesTheClient() throws {
        #expect(try VerbosePrinterTests.render(Self.discover, verbosity: 0)
                == "IP 0.0.0.0.68 > 255.255.255.255.67: BOOTP/DHCP, Request from 86:f6:e4:0c:7b:e0, length 300")
    }

    @Test func dhcpVerboseListsTheHeaderAndOptions() throws {
        let expected = [
            "IP (tos 0x0, ttl 64, id 0, offset 0, flags [none], proto UDP (17), length 328)",
            "    0.0.0.0.68 > 255.255.255.255.67: [udp sum ok] BOOTP/DHCP, Request from 86:f6:e4:0c:7b:e0, length 300, "
                + "xid 0xd862825f, Flags [none] (0x0000)",
            "\t  Client-Ethernet-Address 86:f6:e4:0c:7b:e0",
            "\t  Vendor-rfc1048 Extensions",
            "\t    Magic Cookie 0x63825363",
            "\t    DHCP-Message (53), length 1: Discover",
            "\t    MSZ (57), length 2: 576",
            "\t    Parameter-Request (55), length 7: ",
            "\t      Subnet-Mask (1), Default-Gateway (3), Domain-Name-Server (6), Hostname (12)",
            "\t      Domain-Name (15), BR (28), NTP (42)",
            "\t    Vendor-Class (60), length 12: \"udhcp 1.35.0\"",
            "\t    Client-ID (61), length 7: ether 86:f6:e4:0c:7b:e0",
        ]
        #expect(try VerbosePrinterTests.render(Self.discover, verbosity: 2) == expected.joined(separator: "\n"))
    }

    @Test func dhcpDecoderReadsTheHeaderAndOptions() {
        Self.discover.withUnsafeBytes { frame in
            let message = BOOTPMessage(bytes: UnsafeRawBufferPointer(rebasing: frame[42...]))
            #expect(message.operation == BOOTPMessage.request)
            #expect(message.transactionID == 0xd862_825f)
            #expect(message.clientEthernetAddress?.description == "86:f6:e4:0c:7b:e0")
            #expect(message.dhcpMessageType == 1)  // DISCOVER
            var codes: [UInt8] = []
            message.forEachOption { code, _ in codes.append(code); return true }
            #expect(codes == [53, 57, 55, 60, 61])
        }
    }

    @Test("a DHCP message cut by the snap length ends with [|bootp] where tcpdump stops", arguments: [
        (42, "IP 0.0.0.0.68 > 255.255.255.255.67:  [|bootp]"),
        (43, "IP 0.0.0.0.68 > 255.255.255.255.67: BOOTP/DHCP, Request [|bootp]"),
        (60, "IP 0.0.0.0.68 > 255.255.255.255.67: BOOTP/DHCP, Request [|bootp]"),
        (76, "IP 0.0.0.0.68 > 255.255.255.255.67: BOOTP/DHCP, Request from 86:f6:e4:0c:7b:e0, length 300"),
    ])
    func cutDHCP(snapLength: Int, expected: String) throws {
        let line = try VerbosePrinterTests.render(Array(Self.discover.prefix(snapLength)), verbosity: 0,
                                                  originalLength: Self.discover.count)
        #expect(line == expected, "\(line)")
    }

    @Test func ntpSummaryAndVerboseFields() throws {
        #expect(try VerbosePrinterTests.render(Self.ntpServer, verbosity: 0)
                == "IP 10.219.0.1.123 > 10.219.0.2.48934: NTPv4, Server, length 48")
        #expect(try VerbosePrinterTests.render(Self.ntpServer, verbosity: 1) == """
            IP (tos 0x0, ttl 64, id 35806, offset 0, flags [DF], proto UDP (17), length 76)
                10.219.0.1.123 > 10.219.0.2.48934: NTPv4, Server, length 48
            \tLeap indicator:  (0), Stratum 3 (secondary reference), poll 6 (64s), precision -26
            \tRoot Delay: 0.000000, Root dispersion: 0.000000, Reference-ID: 0x7f7f0101
            \t  Reference Timestamp:  4004422061.117549815 (2026-11-23T11:27:41Z)
            \t  Originator Timestamp: 1931855827.282109557 (1961-03-21T10:37:07Z)
            \t  Receive Timestamp:    4004422062.694765335 (2026-11-23T11:27:42Z)
            \t  Transmit Timestamp:   4004422062.694892178 (2026-11-23T11:27:42Z)
            \t    Originator - Receive Timestamp:  +2072566235.412655778
            \t    Originator - Transmit Timestamp: +2072566235.412782621
            """)
    }

    @Test func ntpCutInsideTheTimestampsEndsWithTheMarker() throws {
        let line = try VerbosePrinterTests.render(Array(Self.ntpServer.prefix(42 + 30)), verbosity: 1,
                                                  originalLength: Self.ntpServer.count)
        #expect(line.hasSuffix("\n\t  Reference Timestamp:  4004422061.117549815 (2026-11-23T11:27:41Z) [|ntp]"), "\(line)")
    }
}
