@testable import PacketDecoding
@testable import Reports
import Testing

@Suite struct ARPPrinterTests {
    let arp = ARPPacket(operation: 1, senderHardware: MACAddress(rawValue: 0x0200_0000_0001), senderAddress: Printed.a,
                        targetHardware: MACAddress(rawValue: 0), targetAddress: Printed.b)

    @Test func requestNamesTargetAndAsker() {
        #expect(Printed.text { PacketLineRenderer().renderARP(arp, length: 28, to: &$0) }
                == "ARP, Request who-has 10.0.0.2 tell 10.0.0.1, length 28")
    }

    @Test func replySaysWhereTheAddressIs() {
        var reply = arp
        reply.operation = 2
        #expect(Printed.text { PacketLineRenderer().renderARP(reply, length: 46, to: &$0) }
                == "ARP, Reply 10.0.0.1 is-at 02:00:00:00:00:01, length 46")
    }
}
