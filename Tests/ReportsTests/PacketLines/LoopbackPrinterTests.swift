@testable import PacketDecoding
@testable import Reports
import Testing

/// Ethernet configuration testing (0x9000) as tcpdump's print-loopback.c prints it.
@Suite struct LoopbackPrinterTests {
    func line(_ bytes: [UInt8], length: Int? = nil) -> String {
        let message = bytes.withUnsafeBytes { EthernetLoopbackMessage(payload: $0, length: length ?? bytes.count) }
        return Printed.text { output in
            var renderer = PacketLineRenderer()
            renderer.renderLoopback(message, to: &output)
        }
    }

    @Test func forwardDataNamesTheNextHop() {
        let bytes: [UInt8] = [0, 0, 2, 0, 0xaa, 0, 4, 0, 0x1d, 4] + [UInt8](repeating: 0x55, count: 44)
        #expect(line(bytes) == "Loopback, skipCount 0, Forward Data, forwarding address aa:00:04:00:1d:04, data (44 octets)")
    }

    @Test func replyAfterSkippedBytes() {
        let bytes: [UInt8] = [8, 0] + [UInt8](repeating: 0, count: 8) + [1, 0, 1, 0] + [UInt8](repeating: 0x55, count: 40)
        #expect(line(bytes) == "Loopback, skipCount 8, Reply, receipt number 1, data (40 octets)")
    }

    @Test func shortAndCutMessagesAreMarkedAsTcpdumpMarksThem() {
        #expect(line([3, 0, 1, 0]) == "Loopback, skipCount 3 (bogus) (invalid)")
        #expect(line([0, 0, 2, 0, 0xaa], length: 60) == "Loopback, skipCount 0, Forward Data [|loopback]")
        #expect(line([0, 0, 9, 0]) == "Loopback, skipCount 0,  invalid (9)")
    }
}
