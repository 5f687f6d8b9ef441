import Foundation
import TestSupport
import Testing

/// Capture files whose timestamps sit at the edges of what the formats can hold: every one must print or be
/// refused with a message, never crash (issue 9: tv_usec above 2,147,483, pcapng near Int64 limits, if_tsresol=0,
/// times before 1970).
@Suite struct ExtremeTimestampTests {
    /// Ethernet + IPv4 + TCP carrying a small request, then its response, from the same two endpoints.
    static func frame(fromClient: Bool, payload: String) -> [UInt8] {
        let body = Array(payload.utf8)
        var bytes: [UInt8] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00]
        let total = 20 + 20 + body.count
        bytes += [0x45, 0, UInt8(total >> 8), UInt8(total & 0xff), 0, 1, 0x40, 0, 64, 6, 0, 0]
        let a: [UInt8] = [10, 0, 0, 5], b: [UInt8] = [10, 0, 0, 1]
        bytes += fromClient ? a + b : b + a
        let ports: [UInt8] = fromClient ? [0xc8, 0x22, 0, 80] : [0, 80, 0xc8, 0x22]
        let seq: [UInt8] = fromClient ? [0, 0, 0, 1] : [0, 0, 0x10, 1]
        let ack: [UInt8] = fromClient ? [0, 0, 0x10, 1] : [0, 0, 0, UInt8(1 + 27)]
        bytes += ports + seq + ack + [0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]
        return bytes + body
    }

    static let request = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
    static let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"

    static func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
    static func le16(_ v: UInt16) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }

    /// Classic microsecond pcap with the given (seconds, microseconds) per packet.
    static func classicPcap(times: [(UInt32, UInt32)]) -> [UInt8] {
        var file = le32(0xa1b2c3d4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(65535) + le32(1)
        for (index, time) in times.enumerated() {
            let frame = frame(fromClient: index % 2 == 0, payload: index % 2 == 0 ? request : response)
            file += le32(time.0) + le32(time.1) + le32(UInt32(frame.count)) + le32(UInt32(frame.count)) + frame
        }
        return file
    }

    /// pcapng with one interface (resolution option `tsresol`, offset option `tsoffset` when given) and the given
    /// raw 64-bit timestamps.
    static func pcapng(tsresol: UInt8?, tsoffset: Int64?, stamps: [UInt64]) -> [UInt8] {
        func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
            var padded = body
            while padded.count % 4 != 0 { padded.append(0) }
            let length = UInt32(12 + padded.count)
            return le32(type) + le32(length) + padded + le32(length)
        }
        var file = block(0x0a0d0d0a, le32(0x1a2b3c4d) + le16(1) + le16(0) + [UInt8](repeating: 0xff, count: 8))
        var options: [UInt8] = []
        if let tsresol { options += le16(9) + le16(1) + [tsresol, 0, 0, 0] }
        if let tsoffset { options += le16(14) + le16(8) + withUnsafeBytes(of: tsoffset.littleEndian, Array.init) }
        if !options.isEmpty { options += le16(0) + le16(0) }
        file += block(1, le16(1) + le16(0) + le32(65535) + options)
        for (index, stamp) in stamps.enumerated() {
            let frame = frame(fromClient: index % 2 == 0, payload: index % 2 == 0 ? request : response)
            var body = le32(0) + le32(UInt32(stamp >> 32)) + le32(UInt32(stamp & 0xffff_ffff))
            body += le32(UInt32(frame.count)) + le32(UInt32(frame.count)) + frame
            file += block(6, body)
        }
        return file
    }

    static let files: [(String, [UInt8])] = [
        ("usec-overflow", classicPcap(times: [(1_700_000_000, 2_147_484), (1_700_000_000, 0xffff_ffff)])),
        ("usec-max-seconds", classicPcap(times: [(0xffff_ffff, 0xffff_ffff), (0, 0)])),
        ("ng-tsresol-0", pcapng(tsresol: 0, tsoffset: nil, stamps: [UInt64.max, UInt64.max - 1])),
        ("ng-near-max", pcapng(tsresol: 9, tsoffset: nil, stamps: [UInt64(Int64.max), UInt64.max])),
        ("ng-pre-1970", pcapng(tsresol: 6, tsoffset: -1_000_000, stamps: [250_000, 500_000])),
        ("ng-offset-min", pcapng(tsresol: 0, tsoffset: Int64.min, stamps: [0, UInt64.max])),
        ("ng-offset-max", pcapng(tsresol: 0, tsoffset: Int64.max, stamps: [UInt64.max, 0])),
    ]

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary)),
          arguments: files.map(\.0))
    func everyOutputSurvives(name: String) throws {
        let bytes = try #require(Self.files.first { $0.0 == name }?.1)
        let path = temporaryPath("-\(name).pcap")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let har = temporaryPath("-\(name).har")
        defer { try? FileManager.default.removeItem(atPath: har) }
        for mode in [[], ["--json"], ["--http"], ["--http", "--json"], ["--http", "--har", har], ["-v", "--http"]] {
            let result = try capture(["-r", path] + mode)
            // Exit status 0 (printed) or 1 (refused with a message); a signal or Swift trap is a failure.
            #expect(result.status == 0 || (result.status == 1 && !result.stderrText.isEmpty),
                    "\(name) \(mode): status \(result.status), stderr \(result.stderrText)")
            #expect(!result.stderrText.contains("Fatal error"), "\(name) \(mode): \(result.stderrText)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary)))
    func preEpochTimesPrintExactly() throws {
        let path = temporaryPath("-pre1970.pcapng")
        try Data(Self.files.first { $0.0 == "ng-pre-1970" }!.1).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try capture(["-r", path, "--json"])
        #expect(result.status == 0, "\(result.stderrText)")
        // 250,000 µs after an offset of -1,000,000 s is 999,999.75 s before 1970.
        #expect(result.stdoutText.contains("\"timestamp\":-999999.750000000"), "\(result.stdoutText)")
    }
}

/// `--http` on a capture whose snap length cut the packets says why it shows little (issue 9).
@Suite struct SnapLengthWarningTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary) && TestEnvironment.hasProgram("editcap"),
                   "needs the capture binary and editcap"))
    func aSmallSnapLengthIsExplained() throws {
        let cut = temporaryPath("-s120.pcap")
        defer { try? FileManager.default.removeItem(atPath: cut) }
        let source = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        let edit = try run("/usr/bin/env", ["editcap", "-s", "120", source, cut])
        #expect(edit.status == 0, "\(edit.stderrText)")
        let result = try capture(["-r", cut, "--http"])
        #expect(result.status == 0)
        #expect(result.stderrText.contains("packets were cut by the snap length (at most 120 bytes of each kept)"),
                "\(result.stderrText)")
        // The exchanges are still shown, incomplete, with what the packets held.
        #expect(result.stdoutText.contains("GET shop.test/static/app.js → 200 OK"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("[incomplete]"))
    }
}
