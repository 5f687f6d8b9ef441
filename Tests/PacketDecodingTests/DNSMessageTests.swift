import Testing
@testable import PacketDecoding

/// The DNS view on hand-made messages: compression, loops, cut bytes.
@Suite struct DNSMessageTests {
    /// A response for www.example. with one A record whose name is a pointer to the question.
    static let response: [UInt8] = [
        0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
        3, 0x77, 0x77, 0x77, 7, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0, 0, 1, 0, 1,
        0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 10, 0, 0, 1,
    ]

    func labels(_ message: DNSMessage, at offset: Int) -> [String] {
        message.name(at: offset).map { element in
            switch element {
            case .label(let label): String(decoding: label, as: UTF8.self)
            case .badPointer: "<BAD PTR>"
            case .truncated: "<cut>"
            case .cutLabel(let part): "<cut:\(String(decoding: part, as: UTF8.self))>"
            default: "<other>"
            }
        }
    }

    @Test func headerAndCompressedAnswer() throws {
        try Self.response.withUnsafeBytes { raw in
            let message = DNSMessage(bytes: raw, length: raw.count)
            #expect(message.id == 0x1234)
            #expect(message.isResponse && message.recursionDesired && message.recursionAvailable)
            let question = try #require(message.question(at: 12))
            #expect(question.type == 1 && question.end == 29)
            let record = try #require(message.record(at: question.end))
            #expect(labels(message, at: record.nameOffset) == ["www", "example"])
            guard case .address(let address)? = message.data(of: record) else { Issue.record("no address"); return }
            #expect(address == .v4(0x0a00_0001))
        }
    }

    @Test func pointerLoopsEndAsBadPointers() {
        // A name that points at itself, and one that points forwards: both would loop or jump ahead.
        let bytes: [UInt8] = Array(repeating: 0, count: 12) + [0xc0, 12, 0xc0, 16, 1, 0x61, 0]
        bytes.withUnsafeBytes { raw in
            let message = DNSMessage(bytes: raw, length: raw.count)
            #expect(labels(message, at: 12) == ["<BAD PTR>"])
            #expect(labels(message, at: 14) == ["<BAD PTR>"])
        }
    }

    @Test func cutMessagesStopWhereTheBytesEnd() {
        Array(Self.response.prefix(18)).withUnsafeBytes { raw in
            let message = DNSMessage(bytes: raw, length: Self.response.count)
            #expect(labels(message, at: 12) == ["www", "<cut:e>"])
            #expect(message.question(at: 12) == nil)
        }
    }
}
