import Foundation
import Testing
import TLS

/// A pcapng file's secrets scan reports what stopped it as values, with the offsets where it happened.
@Suite struct PcapngSecretsWarningTests {
    /// Little-endian block: type, total length, body, total length again (the body padded to 4 bytes).
    static func block(_ type: UInt32, _ body: [UInt8], length: UInt32? = nil) -> [UInt8] {
        var padded = body
        while padded.count % 4 != 0 { padded.append(0) }
        let total = length ?? UInt32(12 + padded.count)
        return le(type) + le(total) + padded + le(total)
    }

    static func le(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// Section header: byte-order magic, version 1.0, section length unknown.
    static let sectionHeader = block(0x0A0D_0D0A, le(0x1A2B_3C4D) + [1, 0, 0, 0] + [UInt8](repeating: 0xff, count: 8))

    static func scan(_ bytes: [UInt8]) throws -> (TLSKeyLog?, [PcapngSecrets.Warning]) {
        let path = FileManagerPath.temporary("w22w-pcapng-secrets")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var warnings: [PcapngSecrets.Warning] = []
        let log = PcapngSecrets.read(path: path, warnings: &warnings)
        return (log, warnings)
    }

    @Test func aBlockLengthThatCannotBeRightStopsTheScan() throws {
        let file = Self.sectionHeader + Self.le(1) + Self.le(13) + [UInt8](repeating: 0, count: 8)
        let (log, warnings) = try Self.scan(file)
        #expect(log == nil)
        #expect(warnings == [.badBlockLength(offset: UInt64(Self.sectionHeader.count), length: 13)])
    }

    @Test func aBadKeyLogLineNamesItsBlockAndLine() throws {
        let random = String(repeating: "ab", count: 32), secret = String(repeating: "cd", count: 48)
        let text = Array("not a key log line\nCLIENT_RANDOM \(random) \(secret)\n".utf8)
        let secrets = Self.block(0x0000_000A, Self.le(0x544C_534B) + Self.le(UInt32(text.count)) + text)
        let (log, warnings) = try Self.scan(Self.sectionHeader + secrets)
        #expect(log?.sessions.count == 1)
        try #require(warnings.count == 1, "\(warnings)")
        guard case .keyLogLine(let offset, let line) = warnings[0] else {
            Issue.record("not a key log line warning: \(warnings[0])")
            return
        }
        #expect(offset == UInt64(Self.sectionHeader.count))
        #expect(line.line == 1)
    }

    @Test func aSecretsBlockLongerThanItsBlockIsSkipped() throws {
        let secrets = Self.block(0x0000_000A, Self.le(0x544C_534B) + Self.le(1000) + [UInt8](repeating: 0x41, count: 8))
        let (log, warnings) = try Self.scan(Self.sectionHeader + secrets)
        #expect(log == nil)
        #expect(warnings == [.secretsTooLong(offset: UInt64(Self.sectionHeader.count), secretsLength: 1000,
                                             blockLength: UInt64(secrets.count))])
    }
}
