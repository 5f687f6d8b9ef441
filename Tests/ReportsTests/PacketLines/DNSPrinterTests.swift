@testable import PacketDecoding
@testable import Reports
import Testing

@Suite struct DNSPrinterTests {
    /// A response for www.example. with one A record whose name is a pointer to the question.
    static let response: [UInt8] = [
        0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
        3, 0x77, 0x77, 0x77, 7, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0, 0, 1, 0, 1,
        0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 10, 0, 0, 1,
    ]

    func printed(_ bytes: [UInt8], length: Int? = nil) -> String {
        bytes.withUnsafeBytes { raw in
            Printed.text { PacketLineRenderer().appendDNS(DNSMessage(bytes: raw, length: length ?? raw.count), to: &$0) }
        }
    }

    @Test func responseWithCompressedAnswer() {
        #expect(printed(Self.response) == "4660 1/0/0 A 10.0.0.1 (45)")
    }

    @Test func queryShowsTypeAndName() {
        let query = Array(Self.response.prefix(29))
        var header = query
        header[2] = 0x01; header[3] = 0x00; header[7] = 0  // a query with RD and no answers
        #expect(printed(header) == "4660+ A? www.example. (29)")
    }

    @Test func cutResponseIsMarked() {
        #expect(printed(Array(Self.response.prefix(43)), length: 45) == "4660 1/0/0 A [|domain]")
    }

    @Test func shortMessageIsInvalid() {
        #expect(printed([1, 2, 3], length: 3) == "domain [length 3 < 12] (invalid)")
    }
}
