@testable import HTTP3
import HTTPModel
import Testing

/// RFC 9204 Appendix B's encoder stream, field sections and decoder stream, in order, through the decoder of
/// one direction (the decoding side advertised SETTINGS_QPACK_MAX_TABLE_CAPACITY 220, as the example assumes).
@Suite("QPACK: RFC 9204 Appendix B")
struct QPACKExampleTests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static func fields(_ outcome: QPACKDecoder.Outcome) -> [String] {
        guard case .decoded(let fields) = outcome else { return ["not decoded: \(outcome)"] }
        return fields.map { "\($0.name)=\($0.value)" }
    }

    static func encoder(_ decoder: QPACKDecoder, _ text: String) -> HTTPWarning? {
        hex(text).withUnsafeBytes { decoder.readEncoderStream($0) }
    }

    @Test("B.1 to B.5 in order: static literal, dynamic inserts, post-base index, duplicate while blocked, eviction")
    func appendixB() throws {
        let decoder = QPACKDecoder(maxTableCapacity: 220, limit: 1 << 20, maxBlockedStreams: 16)
        // B.1: Literal Field Line with Name Reference, static table.
        #expect(Self.fields(decoder.decode(Self.hex("0000 510b 2f69 6e64 6578 2e68 746d 6c"), stream: 0)) == [":path=/index.html"])
        #expect(decoder.insertCount == 0)

        // B.2: Set Dynamic Table Capacity=220, two inserts with static name references, then Post-Base indexes.
        #expect(Self.encoder(decoder, "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c10c 2f73 616d 706c 652f 7061 7468") == nil)
        #expect(decoder.insertCount == 2)
        #expect(Self.fields(decoder.decode(Self.hex("0381 10 11"), stream: 4)) == [":authority=www.example.com", ":path=/sample/path"])
        var decoderStream = QPACKDecoderStreamReader()
        #expect(Self.hex("84").withUnsafeBytes { decoderStream.consume($0) } == nil)
        #expect(decoderStream.sectionAcknowledgments == 1)

        // B.3: Speculative Insert With Literal Name; the decoder's Insert Count Increment.
        #expect(Self.encoder(decoder, "4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565") == nil)
        #expect(decoder.insertCount == 3)
        #expect(Self.hex("01").withUnsafeBytes { decoderStream.consume($0) } == nil)
        #expect(decoderStream.insertCountIncrements == 1)

        // B.4: the field section on stream 8 arrives before the Duplicate it needs: it waits, then decodes.
        let early = decoder.decode(Self.hex("0500 80 c1 81"), stream: 8)
        guard case .blocked(let required, let inserted) = early else { Issue.record("not blocked: \(early)"); return }
        #expect(required == 4 && inserted == 3)
        #expect(decoder.unblocked().isEmpty)
        #expect(Self.encoder(decoder, "02") == nil)
        let resumed = decoder.unblocked()
        try #require(resumed.count == 1)
        #expect(resumed[0].stream == 8)
        #expect(Self.fields(resumed[0].outcome) == [":authority=www.example.com", ":path=/", "custom-key=custom-value"])
        #expect(Self.hex("48").withUnsafeBytes { decoderStream.consume($0) } == nil)
        #expect(decoderStream.streamCancellations == 1)

        // B.5: Insert With Name Reference to dynamic entry 2 evicts entry 0 (table size 215 of 220).
        #expect(Self.encoder(decoder, "810d 6375 7374 6f6d 2d76 616c 7565 32") == nil)
        #expect(decoder.insertCount == 5)
        // Required Insert Count 5 (encoded 6 with 6 entries at most), Base 5: relative 0 is entry 4, 1 is entry 3.
        #expect(Self.fields(decoder.decode(Self.hex("0600 80 81"), stream: 12)) == ["custom-key=custom-value2", ":authority=www.example.com"])
        // Entry 0 was evicted: a reference to it fails, and the table is no longer followed.
        guard case .failed(let warning) = decoder.decode(Self.hex("0600 84"), stream: 16) else {
            Issue.record("a reference to an evicted entry decoded"); return
        }
        #expect(warning == .qpackFailed("ERR_QPACK_DECOMPRESSION_FAILED"))
        #expect(!decoder.tableTracked)
        // Static references and literals still decode after that; dynamic ones say the table is not followed.
        #expect(Self.fields(decoder.decode(Self.hex("0000 510b 2f69 6e64 6578 2e68 746d 6c"), stream: 20)) == [":path=/index.html"])
        guard case .failed(.qpackTableNotTracked) = decoder.decode(Self.hex("0381 10"), stream: 24) else {
            Issue.record("a dynamic reference decoded without a table"); return
        }
    }

    @Test("blocked blocks are bounded, and a lost table fails the blocks that waited for it")
    func blockedBounds() {
        let decoder = QPACKDecoder(maxTableCapacity: 220, limit: 1 << 20, maxBlockedStreams: 1)
        #expect(Self.encoder(decoder, "3fbd01") == nil)
        guard case .blocked = decoder.decode(Self.hex("0381 10"), stream: 0) else { Issue.record("not blocked"); return }
        guard case .failed(.qpackTooManyBlockedStreams(limit: 1)) = decoder.decode(Self.hex("0381 10"), stream: 4) else {
            Issue.record("second blocked block was held past the limit"); return
        }
        decoder.markTableLost()
        let results = decoder.unblocked()
        #expect(results.count == 1 && results.first?.stream == 0)
        if case .failed(.qpackTableNotTracked)? = results.first?.outcome {} else { Issue.record("waiting block not failed") }
    }

    @Test("a table capacity over the limit is not followed: encoder input ignored, dynamic references reported")
    func capacityOverLimit() {
        let decoder = QPACKDecoder(maxTableCapacity: 1 << 30, limit: 4096, maxBlockedStreams: 16)
        #expect(!decoder.tableTracked)
        #expect(Self.encoder(decoder, "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d") == nil)
        #expect(Self.fields(decoder.decode(Self.hex("0000 d1"), stream: 0)) == [":method=GET"])
        guard case .failed(.qpackTableNotTracked) = decoder.decode(Self.hex("0381 10"), stream: 4) else {
            Issue.record("dynamic reference decoded"); return
        }
    }

    @Test("one-byte references to a large entry stop at the header list limit")
    func headerListBomb() {
        let decoder = QPACKDecoder(maxTableCapacity: 4096, limit: 1 << 20, maxBlockedStreams: 16, maxHeaderListBytes: 256 * 1024)
        // Set Dynamic Table Capacity 4096; Insert With Literal Name x = 3000 bytes of "a".
        let insert = Self.hex("3fe11f 4178 7fb916") + [UInt8](repeating: 0x61, count: 3000)
        #expect(insert.withUnsafeBytes { decoder.readEncoderStream($0) } == nil)
        // Required Insert Count 1 (encoded 2), Base 1, then 20,000 references to that entry: 60 MB decoded.
        let block = Self.hex("0200") + [UInt8](repeating: 0x80, count: 20_000)
        guard case .failed(.qpackHeaderListOverLimit(limit: 256 * 1024)) = decoder.decode(block, stream: 0) else {
            Issue.record("the block was not stopped at the limit"); return
        }
        // The table is still followed: a small block referring to the same entry decodes.
        #expect(decoder.tableTracked)
        #expect(Self.fields(decoder.decode(Self.hex("0200 80"), stream: 4)).first?.hasPrefix("x=aaa") == true)
    }

    @Test("a waiting block that fails on resuming loses the table; the blocks waiting with it are told, not run freed (found by fuzzing)")
    func failureWhileResuming() throws {
        let decoder = QPACKDecoder(maxTableCapacity: 220, limit: 1 << 20, maxBlockedStreams: 16)
        #expect(Self.encoder(decoder, "3fbd01") == nil)
        // Both need one insert; the first refers to a post-base entry that will not exist.
        guard case .blocked = decoder.decode(Self.hex("0280 15"), stream: 0),
              case .blocked = decoder.decode(Self.hex("0280 10"), stream: 4) else { Issue.record("not blocked"); return }
        #expect(Self.encoder(decoder, "c00f 7777 772e 6578 616d 706c 652e 636f 6d") == nil)
        let results = decoder.unblocked()
        try #require(results.count == 2)
        #expect(results[0].stream == 0 && results[1].stream == 4)
        guard case .failed(.qpackFailed) = results[0].outcome, case .failed(.qpackTableNotTracked) = results[1].outcome else {
            Issue.record("outcomes \(results)"); return
        }
        #expect(decoder.unblocked().isEmpty && !decoder.tableTracked)
    }

    @Test("decoder stream instructions split anywhere are read alike; a broken one is reported")
    func decoderStreamSplits() {
        // Section Acknowledgment of stream 300 (multi-byte), Insert Count Increment 2, Stream Cancellation 8.
        let bytes = Self.hex("ff ad 01 02 48")
        for split in 0...bytes.count {
            var reader = QPACKDecoderStreamReader()
            #expect(bytes[..<split].withUnsafeBytes { reader.consume($0) } == nil)
            #expect(bytes[split...].withUnsafeBytes { reader.consume($0) } == nil)
            #expect(reader.sectionAcknowledgments == 1 && reader.insertCountIncrements == 1 && reader.streamCancellations == 1)
        }
        var reader = QPACKDecoderStreamReader()
        #expect(Self.hex("ff ff ff ff ff ff ff ff ff ff ff ff").withUnsafeBytes { reader.consume($0) } != nil)
    }
}
