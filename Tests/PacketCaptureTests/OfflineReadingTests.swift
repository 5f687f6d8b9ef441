import Foundation
import Testing
import TestSupport
@testable import PacketCapture
import PacketDecoding

/// Every public fixture, by file name (empty when the folder is absent).
let publicFixtureNames: [String] = {
    guard let folder = TestEnvironment.publicFixtures,
          let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
    return names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") }.sorted()
}()

func publicFixture(_ name: String) -> String { TestEnvironment.publicFixtures!.appendingPathComponent(name).path }

/// A fresh temporary file path.
func temporaryPath(_ suffix: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString)\(suffix)").path
}

/// One packet's bytes and header, copied out of the callback.
struct PacketCopy: Equatable {
    var timestamp: Timestamp
    var originalLength: Int
    var bytes: [UInt8]
}

func readAll(_ path: String, filter: String? = nil) throws -> [PacketCopy] {
    try readUntilBreak(path, filter: filter).packets
}

/// Every packet up to the end of the file or the point where it breaks, and the error if it broke.
func readUntilBreak(_ path: String, filter: String? = nil) throws -> (packets: [PacketCopy], error: CaptureError?) {
    let handle = try CaptureHandle.openOffline(path)
    if let filter { try handle.setFilter(filter) }
    var packets: [PacketCopy] = []
    do {
        try handle.forEachPacket { packet in
            packets.append(PacketCopy(timestamp: packet.timestamp, originalLength: packet.originalLength, bytes: Array(packet.bytes)))
        }
    } catch let error as CaptureError {
        return (packets, error)
    }
    return (packets, nil)
}

@Suite(.enabled(if: TestEnvironment.publicFixtures != nil && TestEnvironment.hasProgram("tcpdump"),
                "needs ../shared/fixtures/public and tcpdump"))
struct OfflineReadingTests {
    /// tcpdump's packet count for a file (one line per packet with -q), and whether it found the file broken.
    static func tcpdumpCount(_ path: String) throws -> (count: Int, broken: Bool) {
        let result = try run("tcpdump", ["-nq", "-r", path])
        return (result.stdoutText.split(separator: "\n").count, result.stderrText.contains("truncated"))
    }

    /// One public fixture (pcap2har_out-of-order.pcap) really is cut short; both tools must stop at the same packet.
    @Test(arguments: publicFixtureNames)
    func packetCountMatchesTcpdump(name: String) throws {
        let (packets, error) = try readUntilBreak(publicFixture(name))
        let tcpdump = try Self.tcpdumpCount(publicFixture(name))
        #expect(packets.count == tcpdump.count)
        #expect((error != nil) == tcpdump.broken, "capture error: \(String(describing: error))")
        #expect(packets.allSatisfy { $0.bytes.count <= $0.originalLength })
    }

    @Test(arguments: publicFixtureNames)
    func writerRoundTripReadsBackIdentically(name: String) throws {
        let original = try readAll(publicFixture(name))
        let copy = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        do {
            let handle = try CaptureHandle.openOffline(publicFixture(name))
            let writer = try handle.makeWriter(path: copy)
            try? handle.forEachPacket { writer.write($0) }  // a broken fixture: keep what came before the break
            try writer.flush()
        }
        #expect(try readAll(copy) == original)
    }

    @Test func filterIsApplied() throws {
        let all = try readAll(publicFixture("zeek_http_get.pcap"))
        let syns = try readAll(publicFixture("zeek_http_get.pcap"), filter: "tcp[tcpflags] & tcp-syn != 0")
        #expect(all.count == 14)
        #expect(syns.count == 2)
    }

    @Test func badFilterCarriesLibpcapMessage() throws {
        let handle = try CaptureHandle.openOffline(publicFixture("zeek_http_get.pcap"))
        do {
            try handle.setFilter("tcp port eighty")
            Issue.record("bad filter accepted")
        } catch {
            guard case .badFilter(let expression, let message) = error else { Issue.record("wrong error \(error)"); return }
            #expect(expression == "tcp port eighty")
            #expect(message.contains("eighty"))
        }
    }

    @Test func limitStopsEarly() throws {
        let handle = try CaptureHandle.openOffline(publicFixture("pcap2har_fhs.pcap"))
        var seen = 0
        try handle.forEachPacket(limit: 5) { _ in seen += 1 }
        #expect(seen == 5)
    }

    @Test func missingFileSaysSo() {
        #expect {
            _ = try CaptureHandle.openOffline("/nonexistent/file.pcap")
        } throws: { error in
            "\(error)".contains("/nonexistent/file.pcap")
        }
    }
}

/// Broken captures, made by cutting and corrupting real fixtures.
@Suite(.enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public"))
struct BrokenFileTests {
    /// Offsets of each record in a classic pcap file.
    static func recordOffsets(_ data: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = 24
        while offset + 16 <= data.count {
            offsets.append(offset)
            let caplen = Int(data[offset + 8]) | Int(data[offset + 9]) << 8 | Int(data[offset + 10]) << 16 | Int(data[offset + 11]) << 24
            offset += 16 + caplen
        }
        return offsets
    }

    func readUntilError(_ bytes: [UInt8]) throws -> (delivered: Int, error: CaptureError?) {
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let handle = try CaptureHandle.openOffline(path)
        var delivered = 0
        do {
            try handle.forEachPacket { _ in delivered += 1 }
            return (delivered, nil)
        } catch let error as CaptureError {
            return (delivered, error)
        }
    }

    @Test func truncatedInsidePacketData() throws {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_http_get.pcap"))))
        let offsets = Self.recordOffsets(data)
        let cut = Array(data[0..<(offsets[5] + 16 + 10)])
        let (delivered, error) = try readUntilError(cut)
        #expect(delivered == 5)
        guard case .readFailed(let index, let offset, let message) = try #require(error) else { Issue.record("\(String(describing: error))"); return }
        #expect(index == 6)
        #expect(offset == Int64(offsets[5]))
        #expect(message.contains("truncated"))
        #expect(error!.description.contains("packet 6"))
        #expect(error!.description.contains("byte offset \(offsets[5])"))
    }

    @Test func truncatedInsideRecordHeader() throws {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_http_get.pcap"))))
        let offsets = Self.recordOffsets(data)
        let (delivered, error) = try readUntilError(Array(data[0..<(offsets[3] + 7)]))
        #expect(delivered == 3)
        guard case .readFailed(let index, let offset, _) = try #require(error) else { Issue.record("wrong error"); return }
        #expect(index == 4)
        #expect(offset == Int64(offsets[3]))
    }

    @Test func corruptCaptureLength() throws {
        var data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: publicFixture("zeek_http_get.pcap"))))
        let offsets = Self.recordOffsets(data)
        // A captured length of 0x7fffffff in packet 8's record header.
        data.replaceSubrange((offsets[7] + 8)..<(offsets[7] + 12), with: [0xff, 0xff, 0xff, 0x7f])
        let (delivered, error) = try readUntilError(data)
        #expect(delivered == 7)
        guard case .readFailed(let index, let offset, _) = try #require(error) else { Issue.record("wrong error"); return }
        #expect(index == 8)
        #expect(offset == Int64(offsets[7]))
    }

    @Test func garbageIsNotACapture() throws {
        let path = temporaryPath(".pcap")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("this is not a capture file at all".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: CaptureError.self) { _ = try CaptureHandle.openOffline(path) }
    }
}

@Suite struct PacketQueueTests {
    /// Pushes packets of many sizes through a small ring so it wraps often; every packet comes out intact, in order.
    @Test func wrapsAndKeepsOrder() throws {
        let queue = PacketQueue(capacity: 4096)
        var expected: [[UInt8]] = []
        var received: [[UInt8]] = []
        func popOne() {
            _ = queue.pop(index: 0) { packet in
                #expect(packet.originalLength == packet.bytes.count + 3)
                received.append(Array(packet.bytes))
            }
        }
        for round in 0..<300 {
            let size = (round * 37) % 700
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            bytes.withUnsafeBytes { raw in
                let packet = CapturedPacket(index: round, timestamp: Timestamp(seconds: Int64(round), nanoseconds: 5),
                                            originalLength: size + 3, bytes: raw)
                // When full, the consumer catches up by one packet and the producer tries again.
                var attempts = 0
                while !queue.push(packet) {
                    popOne()
                    attempts += 1
                    #expect(attempts < 20)
                }
            }
            expected.append(bytes)
            if round % 3 == 0 { popOne() }
        }
        queue.close()
        while queue.pop(index: 0, { received.append(Array($0.bytes)) }) {}
        #expect(received == expected)
        #expect(queue.dropped > 0)  // each failed push above counts as a drop
    }

    @Test func fullQueueDropsAndCounts() {
        let queue = PacketQueue(capacity: 1024)
        let bytes = [UInt8](repeating: 7, count: 200)
        var accepted = 0
        bytes.withUnsafeBytes { raw in
            for i in 0..<10 {
                if queue.push(CapturedPacket(index: i, timestamp: Timestamp(seconds: 0, nanoseconds: 0), originalLength: 200, bytes: raw)) {
                    accepted += 1
                }
            }
        }
        #expect(accepted == 4)
        #expect(queue.dropped == 6)
    }
}

/// The capture-thread/consumer split, driven by a file so it is deterministic.
@Suite(.enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public"))
struct BufferedCaptureTests {
    @Test func deliversEveryPacketInOrderWhenTheQueueKeepsUp() throws {
        let path = publicFixture("pcap2har_fhs_ncomp.pcap")
        let direct = try readAll(path)
        let buffered = BufferedCapture(handle: try CaptureHandle.openOffline(path))
        var received: [PacketCopy] = []
        try buffered.forEachPacket { packet in
            received.append(PacketCopy(timestamp: packet.timestamp, originalLength: packet.originalLength, bytes: Array(packet.bytes)))
        }
        #expect(received == direct)
        #expect(buffered.droppedByQueue == 0)
    }

    /// A consumer slower than the producer loses packets at the queue, and every loss is counted.
    @Test func slowConsumerDropsAreCounted() throws {
        let path = publicFixture("pcap2har_fhs_ncomp.pcap")
        let total = try readAll(path).count
        let buffered = BufferedCapture(handle: try CaptureHandle.openOffline(path), queueBytes: 16 << 10)
        var delivered = 0
        try buffered.forEachPacket { _ in
            delivered += 1
            usleep(200)
        }
        #expect(buffered.droppedByQueue > 0)
        #expect(delivered + buffered.droppedByQueue == total)
    }

    @Test func limitIsHonoured() throws {
        let buffered = BufferedCapture(handle: try CaptureHandle.openOffline(publicFixture("pcap2har_fhs_ncomp.pcap")))
        var delivered = 0
        try buffered.forEachPacket(limit: 10) { _ in delivered += 1 }
        #expect(delivered == 10)
    }
}
