import Foundation
import Testing
import TestSupport

@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "needs the built capture binary"))
struct CommandTests {
    @Test func helpListsEveryFlag() throws {
        let help = try capture(["--help"])
        #expect(help.status == 0)
        for flag in ["-i <interface>", "-r <file>", "-w <file>", "-c <count>", "-s <snaplen>", "-B <KiB>", "<filter>",
                     "-D, --list-interfaces", "-q", "-t", "-A", "-X", "-l", "--json", "--http", "setcap"] {
            #expect(help.stdoutText.contains(flag), "help lacks \(flag)")
        }
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func tcpdumpStyleAttachedValuesAndNumericFlag() throws {
        let result = try capture(["-n", "-c1", "-r" + publicFixture("zeek_http_get.pcap")])
        #expect(result.status == 0)
        #expect(lines(result.stdoutText).count == 1)
    }

    /// A file broken part-way still shows, in every --http view, the exchanges decoded before the damage.
    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"), arguments: [[], ["--json"]])
    func truncatedFileInHTTPModeKeepsWhatCameBefore(extra: [String]) throws {
        let result = try capture(["-r", publicFixture("pcap2har_out-of-order.pcap"), "--http"] + extra)
        #expect(result.status == 1)
        #expect(result.stderrText.contains("capture file broken at packet 3215"))
        let shown = lines(result.stdoutText).filter { extra.isEmpty ? $0.contains(" → ") : $0.hasPrefix("{") }
        #expect(shown.count >= 249, "only \(shown.count) exchanges shown")
    }

    @Test func noSourceIsAUsageError() throws {
        let result = try capture([])
        #expect(result.status == 64)
        #expect(result.stderrText.contains("-i INTERFACE"))
    }

    @Test func listsInterfacesWithLoopback() throws {
        let result = try capture(["-D"])
        #expect(result.status == 0)
        let loopback = try #require(lines(result.stdoutText).first { $0.contains(".lo ") })
        #expect(loopback.contains("Loopback"))
        #expect(loopback.contains("127.0.0.1"))
        #expect(loopback.contains("index 1"))
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func badFilterExitsTwoWithLibpcapMessage() throws {
        let result = try capture(["-r", publicFixture("zeek_http_get.pcap"), "tcp", "port", "eighty"])
        #expect(result.status == 2)
        #expect(result.stderrText.contains("bad filter expression 'tcp port eighty'"))
        #expect(result.stderrText.contains("eighty"))
        #expect(result.stdoutText.isEmpty)
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func filterAndCountSelectPackets() throws {
        let result = try capture(["-t", "-c", "2", "-r", publicFixture("zeek_http_get.pcap"), "tcp[tcpflags]", "&", "tcp-syn", "!=", "0"])
        #expect(result.status == 0)
        let output = lines(result.stdoutText)
        #expect(output.count == 2)
        #expect(output.allSatisfy { $0.hasPrefix("IP ") && $0.contains("Flags [S") })
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func readsStandardInput() throws {
        let path = publicFixture("zeek_http_get.pcap")
        let fromFile = try capture(["-r", path])
        let fromPipe = try capture(["-r", "-"], input: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(fromPipe.status == 0)
        #expect(fromPipe.stdoutText == fromFile.stdoutText)
        #expect(!fromPipe.stdoutText.isEmpty)
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func writtenFileReadsBackToTheSameLines() throws {
        let path = publicFixture("zeek_http_cooper-grill-dvwa.pcapng")
        let copy = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let write = try capture(["-r", path, "-w", copy])
        #expect(write.status == 0)
        #expect(write.stdoutText.isEmpty)
        #expect(try capture(["-r", copy]).stdoutText == (try capture(["-r", path])).stdoutText)
        #expect(try tcpdump(["-n", "-r", copy]).stdoutText == (try tcpdump(["-n", "-r", path])).stdoutText)
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func truncatedFilePrintsWhatCameBeforeThenFails() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_http_get.pcap")))
        let cut = data.prefix(data.count - 100)
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try cut.write(to: URL(fileURLWithPath: path))
        let result = try capture(["-r", path])
        #expect(result.status == 1)
        let reference = lines(try tcpdump(["-n", "-r", path]).stdoutText)
        #expect(lines(result.stdoutText) == reference)
        #expect(result.stderrText.contains("capture file broken at packet \(reference.count + 1) (byte offset "))
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func corruptRecordHeaderFailsWithIndexAndOffset() throws {
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_http_get.pcap"))))
        // Second record starts after the 24-byte file header and the first record (16 + its captured length).
        let firstLength = Int(data[32]) | Int(data[33]) << 8
        let second = 24 + 16 + firstLength
        data.replaceSubrange((second + 8)..<(second + 12), with: [0xff, 0xff, 0xff, 0x7f])
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(data).write(to: URL(fileURLWithPath: path))
        let result = try capture(["-r", path])
        #expect(result.status == 1)
        #expect(lines(result.stdoutText).count == 1)
        #expect(result.stderrText.contains("packet 2 (byte offset \(second))"))
    }

    /// Non-first IPv4 fragments, derived from a real packet by setting its fragment offset, print as tcpdump prints them.
    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func ipv4FragmentsMatchTcpdump() throws {
        var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_http_get.pcap"))))
        var offset = 24
        var records: [Range<Int>] = []
        while offset + 16 <= data.count {
            let caplen = Int(data[offset + 8]) | Int(data[offset + 9]) << 8
            records.append(offset..<(offset + 16 + caplen))
            offset += 16 + caplen
        }
        for record in records[3...5] {
            data[record.lowerBound + 16 + 14 + 6] = 0x20  // more fragments
            data[record.lowerBound + 16 + 14 + 7] = 185   // offset 1480
        }
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(data).write(to: URL(fileURLWithPath: path))
        let ours = try capture(["-r", path])
        #expect(ours.status == 0)
        #expect(ours.stdoutText == (try tcpdump(["-n", "-r", path])).stdoutText)
        #expect(ours.stdoutText.contains("ip-proto-6"))
    }

    /// Non-first IPv6 fragments, derived from real atomic fragments by setting their offsets, print as tcpdump's.
    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func ipv6FragmentsMatchTcpdump() throws {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_ipv6-http-atomic-frag.pcap"))))
        var output = Array(data[0..<24])
        var offset = 24
        var fragments = 0
        while offset + 16 <= data.count {
            let caplen = Int(data[offset + 8]) | Int(data[offset + 9]) << 8
            var record = Array(data[offset..<(offset + 16 + caplen)])
            offset += 16 + caplen
            // Ethernet + IPv6 whose next header is a fragment header (44).
            guard record.count > 16 + 62, record[16 + 12] == 0x86, record[16 + 13] == 0xdd, record[16 + 14 + 6] == 44 else { continue }
            fragments += 1
            if fragments == 2 { record[16 + 54 + 2] = 0x00; record[16 + 54 + 3] = 0x09 }  // offset 8, more fragments
            if fragments == 3 { record[16 + 54 + 2] = 0x01; record[16 + 54 + 3] = 0x00 }  // offset 256
            output += record
        }
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(output).write(to: URL(fileURLWithPath: path))
        let ours = try capture(["-r", path])
        #expect(ours.status == 0)
        #expect(ours.stdoutText == (try tcpdump(["-n", "-r", path])).stdoutText)
        #expect(ours.stdoutText.contains("frag (8|20)\n"))
    }

    @Test func unsupportedLinkTypeUsesLibpcapsName() throws {
        // Link type 50 (PPP over serial): libpcap calls it PPP_SERIAL, never LINKTYPE_50.
        var file: [UInt8] = [0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 50, 0, 0, 0]
        file += [1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0xff, 0x03, 0, 0x21]
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(file).write(to: URL(fileURLWithPath: path))
        let result = try capture(["-r", path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("unsupported link type PPP_SERIAL (PPP over serial, DLT 50)"), "\(result.stderrText)")
        #expect(!result.stderrText.contains("LINKTYPE_"))
    }

    @Test func unsupportedLinkTypeIsNamed() throws {
        // A valid pcap header with link type 147 (USER0, which libpcap has no name for) and one 4-byte packet.
        var file: [UInt8] = [0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 147, 0, 0, 0]
        file += [1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4]
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(file).write(to: URL(fileURLWithPath: path))
        let result = try capture(["-r", path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("unsupported link type LINKTYPE_147 (DLT 147)"), "\(result.stderrText)")
        #expect(result.stdoutText.isEmpty)
        // Saving needs no decoding, so it still works and copies the packet unchanged.
        let copy = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        #expect(try capture(["-r", path, "-w", copy]).status == 0)
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)))
        #expect(written.count == file.count)
        #expect(Array(written.suffix(4)) == [1, 2, 3, 4])
    }

    @Test(.enabled(if: TestEnvironment.isRoot, "needs root: as a normal user the error is about permission"))
    func unknownInterfaceSaysHowToList() throws {
        let result = try capture(["-i", "tknosuch\(UInt16.random(in: 0...9999))"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("no such interface"))
        #expect(result.stderrText.contains("capture -D"))
    }

    @Test func missingFileSaysWhich() throws {
        let result = try capture(["-r", "/nonexistent/x.pcap"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("cannot read capture '/nonexistent/x.pcap'"))
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func jsonHasOneObjectPerPacket() throws {
        let path = publicFixture("zeek_http_get.pcap")
        let result = try capture(["--json", "-r", path])
        #expect(result.status == 0)
        let objects = try lines(result.stdoutText).map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 14)
        let first = try #require(objects.first)
        #expect(first["index"] as? Int == 1)
        #expect(first["link_type"] as? String == "EN10MB")
        #expect(first["network"] as? String == "ipv4")
        #expect(first["src"] as? String == "141.142.228.5")
        #expect(first["dst_port"] as? Int == 80)
        #expect(first["tcp_flags"] as? [String] == ["SYN"])
        #expect(first["seq"] as? Int == 4_263_588_410)
        #expect(first["payload_length"] as? Int == 0)
        #expect(first["truncated"] as? Bool == false)
        #expect((first["timestamp"] as? Double).map { abs($0 - 1_362_692_526.869344) < 1e-5 } == true)
        #expect(objects[3]["payload_length"] as? Int == 136)
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func asciiAndHexDumpsMatchTcpdump() throws {
        let path = publicFixture("zeek_http_get.pcap")
        #expect(try capture(["-X", "-c", "4", "-r", path]).stdoutText == (try tcpdump(["-n", "-X", "-c", "4", "-r", path])).stdoutText)
        let ascii = try capture(["-A", "-c", "4", "-r", path]).stdoutText
        #expect(ascii.contains("GET /download/CHANGES.bro-aux.txt HTTP/1.1\n"))
    }

    @Test(.enabled(if: haveFixtures, "needs fixtures and tcpdump"))
    func noTimestampFlag() throws {
        let path = publicFixture("zeek_http_get.pcap")
        let withTime = lines(try capture(["-r", path]).stdoutText)
        let without = lines(try capture(["-t", "-r", path]).stdoutText)
        #expect(without.first == withTime.first.map { String($0.drop { $0 != " " }.dropFirst()) })
    }
}
