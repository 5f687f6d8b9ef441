@testable import Reports
import Testing

@Suite struct PayloadDumpTests {
    @Test func hexAndASCIIRowsAsTcpdump() {
        let bytes: [UInt8] = Array("GET / HTTP/1.1\r\nHost".utf8)
        let text = bytes.withUnsafeBytes { raw in Printed.text { PacketLineRenderer().appendHexAndASCII(raw, to: &$0) } }
        #expect(text == "\n\t0x0000:  4745 5420 2f20 4854 5450 2f31 2e31 0d0a  GET./.HTTP/1.1..\n\t0x0010:  486f 7374                                Host")
    }

    @Test func asciiLeavesOutCarriageReturns() {
        let bytes: [UInt8] = Array("a\r\nb\u{1}".utf8)
        let text = bytes.withUnsafeBytes { raw in Printed.text { PacketLineRenderer().appendASCII(raw, to: &$0) } }
        #expect(text == "\na\nb.")
    }
}
