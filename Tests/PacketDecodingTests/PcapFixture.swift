import Testing
import Foundation
import TestSupport
@testable import PacketDecoding

/// Reads a classic pcap file into memory so decoder tests run on real captured bytes without libpcap.
struct PcapFixture {
    struct Record {
        var timestamp: Timestamp
        var originalLength: Int
        var bytes: [UInt8]
    }

    var linkType: LinkType
    var records: [Record]

    init(_ url: URL) throws {
        let data = try [UInt8](Data(contentsOf: url))
        func u32(_ at: Int, _ swapped: Bool) -> UInt32 {
            let value = UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24
            return swapped ? value.byteSwapped : value
        }
        let magic = u32(0, false)
        let swapped = magic == 0xd4c3_b2a1 || magic == 0x4d3c_b2a1
        let nanosecond = magic == 0xa1b2_3c4d || magic == 0x4d3c_b2a1
        guard [0xa1b2_c3d4, 0xd4c3_b2a1, 0xa1b2_3c4d, 0x4d3c_b2a1].contains(magic) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        linkType = LinkType(rawValue: Int32(u32(20, swapped) & 0x0fff_ffff))
        records = []
        var offset = 24
        while offset + 16 <= data.count {
            let caplen = Int(u32(offset + 8, swapped))
            guard offset + 16 + caplen <= data.count else { break }
            let fraction = Int32(u32(offset + 4, swapped))
            records.append(Record(
                timestamp: Timestamp(seconds: Int64(u32(offset, swapped)), nanoseconds: nanosecond ? fraction : fraction * 1000),
                originalLength: Int(u32(offset + 12, swapped)),
                bytes: Array(data[(offset + 16)..<(offset + 16 + caplen)])))
            offset += 16 + caplen
        }
    }

    static func publicFixture(_ name: String) throws -> PcapFixture {
        let folder = try #require(TestEnvironment.publicFixtures, "../shared/fixtures/public is missing")
        return try PcapFixture(folder.appendingPathComponent(name))
    }

    /// Decodes record `index` (0-based), optionally cut to `captured` bytes, with `linkType` overriding the file's.
    func decode<T>(_ index: Int, captured: Int? = nil, as linkType: LinkType? = nil,
                   _ body: (DecodedPacket) throws -> T) throws -> T {
        let record = records[index]
        let bytes = captured.map { Array(record.bytes.prefix($0)) } ?? record.bytes
        let decoder = try PacketDecoder(linkType: linkType ?? self.linkType)
        return try bytes.withUnsafeBytes { raw in
            try body(decoder.decode(raw, timestamp: record.timestamp, originalLength: record.originalLength))
        }
    }
}

