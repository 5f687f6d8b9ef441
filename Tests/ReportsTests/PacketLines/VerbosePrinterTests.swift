import Testing
@testable import PacketDecoding
@testable import Reports

/// tcpdump's -v fields, on a real frame (the first SYN of zeek_http_get.pcap) decoded and printed here; the
/// expected lines are what tcpdump 4.99 prints for it. FlagConformanceTests compares whole captures.
@Suite struct VerbosePrinterTests {
    static let synFrame = hexBytes(
        "0010db88d2efc8bcc896d2a0080045000040df8e400040066dd38d8ee405c096bb2be9d00050fe21323a00000000b002ffff3bc00000"
            + "020405b4010303040101080a164add200000000004020000")

    static func hexBytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// `originalLength`: the frame's length on the wire when `frame` is only its captured start.
    static func render(_ frame: [UInt8], verbosity: Int, originalLength: Int? = nil) throws -> String {
        let decoder = try PacketDecoder(linkType: .ethernet)
        return frame.withUnsafeBytes { bytes in
            let packet = decoder.decode(bytes, timestamp: Timestamp(seconds: 0, nanoseconds: 0),
                                        originalLength: originalLength ?? bytes.count)
            var renderer = PacketLineRenderer()
            renderer.options.showTimestamp = false
            renderer.options.verbosity = verbosity
            var output = TextOutput(fileDescriptor: -1)
            renderer.render(packet, frame: bytes, to: &output)
            return String(decoding: output.bytes.dropLast(), as: UTF8.self)
        }
    }

    @Test func ipv4AndTCPFieldsWithACorrectChecksum() throws {
        #expect(try Self.render(Self.synFrame, verbosity: 1) == """
            IP (tos 0x0, ttl 64, id 57230, offset 0, flags [DF], proto TCP (6), length 64)
                141.142.228.5.59856 > 192.150.187.43.80: Flags [S], cksum 0x3bc0 (correct), seq 4263588410, win 65535, \
            options [mss 1460,nop,wscale 4,nop,nop,TS val 374005024 ecr 0,sackOK,eol], length 0
            """)
    }

    @Test func wrongChecksumsSayWhatTheyShouldBe() throws {
        var frame = Self.synFrame
        frame[14 + 20 + 16] = 0x3c  // TCP checksum 0x3bc0 -> 0x3cc0
        frame[14 + 10] = 0x6e        // IPv4 header checksum 0x6dd3 -> 0x6ed3
        let line = try Self.render(frame, verbosity: 1)
        #expect(line.contains("length 64, bad cksum 6ed3 (->6dd3)!)"), "\(line)")
        #expect(line.contains("cksum 0x3cc0 (incorrect -> 0x3bc0)"), "\(line)")
    }

    @Test func checksumsAreNotJudgedWhenTheSegmentWasNotCapturedWhole() throws {
        let cut = Array(Self.synFrame.prefix(14 + 20 + 30))
        let line = try Self.render(cut, verbosity: 1)
        #expect(!line.contains("cksum"), "\(line)")
    }

    @Test func relativeTimesAsTcpdumpPrintsTTLs() {
        let renderer = PacketLineRenderer()
        #expect(Printed.text { renderer.appendRelativeTime(0, to: &$0) } == "0s")
        #expect(Printed.text { renderer.appendRelativeTime(48_321, to: &$0) } == "13h25m21s")
        #expect(Printed.text { renderer.appendRelativeTime(86_400 * 8 + 1, to: &$0) } == "1w1d1s")
    }

    static func verboseLines(_ text: String, captured: Int? = nil) -> (lines: [String], end: HTTPFirstLine.VerboseLinesEnd) {
        let bytes = Array(text.utf8)
        var lines: [String] = []
        let end = bytes.withUnsafeBytes { all in
            HTTPFirstLine.forEachVerboseLine(payload: UnsafeRawBufferPointer(rebasing: all.prefix(captured ?? bytes.count)),
                                             length: bytes.count) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        return (lines, end)
    }

    @Test func httpLinesRunUntilBinaryOrTheEnd() {
        let whole = Self.verboseLines("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody\n\u{1}rest")
        #expect(whole.lines == ["GET / HTTP/1.1", "Host: a", "", "body"] && whole.end == .stopped)
        let unterminated = Self.verboseLines("HTTP/1.1 200 OK\r\nX: y")
        #expect(unterminated.lines == ["HTTP/1.1 200 OK", "X: y"] && unterminated.end == .segmentEndedMidLine)
        let snapped = Self.verboseLines("GET / HTTP/1.1\r\nHost: example\r\n", captured: 20)
        #expect(snapped.lines == ["GET / HTTP/1.1"] && snapped.end == .captureEndedMidLine)
        let bareCR = Self.verboseLines("GET / HTTP/1.1\rX\r\n")
        #expect(bareCR.lines.isEmpty && bareCR.end == .stopped)
    }
}
