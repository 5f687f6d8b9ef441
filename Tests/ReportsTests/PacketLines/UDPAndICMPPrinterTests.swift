@testable import PacketDecoding
@testable import Reports
import Testing

@Suite struct UDPAndICMPPrinterTests {
    let none = UnsafeRawBufferPointer(start: nil, count: 0)

    @Test func udpLineGivesThePayloadLength() {
        let datagram = UDPDatagram(source: Endpoint(address: Printed.a, port: 5000), destination: Endpoint(address: Printed.b, port: 6000),
                                   length: 48, payload: none, payloadLength: 40)
        let packet = Printed.packet(network: .ipv4(Printed.ipv4(protocolNumber: 17, length: 48)), transport: .udp(datagram), wireLength: 68)
        #expect(Printed.line(packet) == "IP 10.0.0.1.5000 > 10.0.0.2.6000: UDP, length 40")
    }

    @Test func icmpPortUnreachableNamesTheQuotedPort() {
        var message = ICMPMessage(type: 3, code: 3, restOfHeader: 0, body: none, length: 36)
        message.quote = ICMPQuote(source: Printed.b, destination: Printed.a, protocolNumber: 17, sourcePort: 6000, destinationPort: 5000)
        #expect(Printed.text { PacketLineRenderer().renderICMP(message, to: &$0) }
                == "ICMP 10.0.0.1 udp port 5000 unreachable, length 36")
    }

    @Test func icmpEcho() {
        let message = ICMPMessage(type: 8, code: 0, restOfHeader: 0x0007_0002, body: none, length: 64)
        #expect(Printed.text { PacketLineRenderer().renderICMP(message, to: &$0) } == "ICMP echo request, id 7, seq 2, length 64")
    }

    @Test func neighborSolicitationNamesTheTarget() {
        var message = ICMPMessage(type: 135, code: 0, restOfHeader: 0, body: none, length: 32)
        message.target = .v6(high: 0xfe80_0000_0000_0000, low: 1)
        #expect(Printed.text { PacketLineRenderer().renderICMPv6(message, to: &$0) }
                == "ICMP6, neighbor solicitation, who has fe80::1, length 32")
    }
}
