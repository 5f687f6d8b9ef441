import Testing
import TLSWire

@Suite struct ByteCursorTests {
    @Test func readsBigEndianAndStopsAtTheEnd() {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a]
        bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            #expect(cursor.u8() == 0x01)
            #expect(cursor.u16() == 0x0203)
            #expect(cursor.u24() == 0x04_0506)
            #expect(cursor.u32() == 0x0708_090a)
            #expect(cursor.isAtEnd)
            #expect(cursor.u8() == nil)
            #expect(cursor.offset == 10)
        }
    }

    @Test func aShortReadReadsNothing() {
        let bytes: [UInt8] = [0x00, 0x05, 0xaa, 0xbb]
        bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            #expect(cursor.u32() != nil)
            cursor.offset = 2
            #expect(cursor.u24() == nil)
            #expect(cursor.take(3) == nil)
            #expect(cursor.take(-1) == nil)
            let skipped = cursor.skip(3)
            #expect(!skipped)
            #expect(cursor.offset == 2)
            cursor.offset = 0
            // A vector whose length claims more than is left: nothing read, the length byte included.
            #expect(cursor.vector16() == nil)
            #expect(cursor.offset == 0)
            // ... or, when asked for, what is there.
            #expect(cursor.vector16OrRest().map(Array.init) == [0xaa, 0xbb])
            #expect(cursor.isAtEnd)
        }
    }

    @Test func vectorsAreViewsOfTheirLength() {
        let bytes: [UInt8] = [0x02, 0x61, 0x62, 0x00, 0x01, 0x63, 0x64]
        bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            #expect(cursor.vector8().map(Array.init) == [0x61, 0x62])
            #expect(cursor.vector16().map(Array.init) == [0x63])
            #expect(cursor.rest().map { $0 } == [0x64])
            #expect(cursor.rest().isEmpty)
        }
    }

    @Test(arguments: [
        ([], nil), ([0x16], nil), ([0x16, 0x03], true), ([0x16, 0x03, 0x01], true), ([0x16, 0x02], false),
        ([0x17, 0x03], false), ([0x47, 0x45, 0x54], false), ([0x50, 0x52, 0x49], false),
    ] as [([UInt8], Bool?)])
    func startsTLS(bytes: [UInt8], expected: Bool?) {
        #expect(TLSRecordHeader.startsTLS(bytes) == expected)
        #expect(bytes.withUnsafeBytes { TLSRecordHeader.startsTLS($0) } == expected)
    }
}
