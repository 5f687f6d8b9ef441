import FlowReassembly
import Foundation
import PacketCapture
import PacketDecoding
import TestSupport
import Testing

/// Reassembles real captures from public projects' test suites through the capture engine's reader.
@Suite("Reassembly: public captures")
struct CaptureFileTests {
    static let publicFixtures = TestEnvironment.publicFixtures

    static func reassemble(_ name: String, in folder: URL? = publicFixtures) throws -> (RecordingConsumer, TCPReassembler) {
        let folder = try #require(folder)
        let handle = try CaptureHandle.openOffline(folder.appendingPathComponent(name).path)
        let decoder = try PacketDecoder(linkType: handle.linkType)
        var reassembler = TCPReassembler()
        var consumer = RecordingConsumer()
        do {
            try handle.forEachPacket { captured in
                let packet = decoder.decode(captured.bytes, timestamp: captured.timestamp,
                                            originalLength: captured.originalLength)
                reassembler.process(packet, into: &consumer)
            }
        } catch CaptureError.readFailed {
            // A file cut short (pcap2har_out-of-order.pcap is) still had every whole packet delivered: end there.
        }
        reassembler.finish(into: &consumer)
        return (consumer, reassembler)
    }

    static func startsWith(_ bytes: [UInt8], _ pattern: String) -> Bool {
        let head = String(decoding: bytes.prefix(16_384), as: UTF8.self)
        return head.range(of: pattern, options: .regularExpression) != nil
    }

    @Test("Out-of-order captures give clean HTTP streams",
          .enabled(if: publicFixtures != nil, "../shared/fixtures/public is absent"),
          arguments: ["httpflow_httpbin-outoforder.pcapng", "pcap2har_out-of-order.pcap",
                      "httpflow_httpbin-retransmission.pcap"])
    func outOfOrderCaptureGivesCleanHTTPStreams(name: String) throws {
        let (consumer, reassembler) = try Self.reassemble(name)
        #expect(consumer.contractViolations.isEmpty, "\(consumer.contractViolations)")
        #expect(!consumer.connectionIDs.isEmpty)
        #expect(reassembler.statistics.outOfOrderSegments > 0, "the capture is known to hold reordered segments")
        #expect(reassembler.statistics.gapBytes == 0)
        var requests = 0
        for id in consumer.connectionIDs {
            #expect(consumer.opened[id]?.server.port == 80)
            let request = try #require(consumer.bytes(id, .clientToServer), "gap in request stream \(id.rawValue)")
            let response = try #require(consumer.bytes(id, .serverToClient), "gap in response stream \(id.rawValue)")
            if request.isEmpty { continue }
            requests += 1
            #expect(Self.startsWith(request, #"^[A-Z]+ [^ ]+ HTTP/1\.[01]\r\n"#), "request line of \(id.rawValue)")
            #expect(Self.startsWith(response, #"^HTTP/1\.[01] [0-9]{3} "#), "status line of \(id.rawValue)")
        }
        #expect(requests > 0)
        #expect(consumer.warnings.isEmpty, "\(consumer.warnings)")
    }

    @Test("Missing SYN: the stream is picked up at the first byte with the right roles",
          .enabled(if: publicFixtures != nil, "../shared/fixtures/public is absent"))
    func captureWithoutSYN() throws {
        let (consumer, reassembler) = try Self.reassemble("zeek_http_get_nosyn.pcap")
        let id = try #require(consumer.connectionIDs.first)
        #expect(consumer.connectionIDs.count == 1)
        #expect(consumer.opened[id]?.server.port == 80)
        let request = try #require(consumer.bytes(id, .clientToServer))
        let response = try #require(consumer.bytes(id, .serverToClient))
        #expect(Self.startsWith(request, #"^GET [^ ]+ HTTP/1\.1\r\n"#))
        #expect(Self.startsWith(response, #"^HTTP/1\.1 200 "#))
        #expect(response.count == 5007)
        #expect(consumer.endReason(id, .clientToServer) == .fin)
        #expect(consumer.endReason(id, .serverToClient) == .fin)
        #expect(reassembler.statistics.gapBytes == 0)
    }

    @Test("TCP Fast Open: the request carried on the SYN starts the client stream",
          .enabled(if: publicFixtures != nil, "../shared/fixtures/public is absent"))
    func fastOpenCapture() throws {
        let (consumer, reassembler) = try Self.reassemble("httpflow_tcp-fast-open.pcap")
        let ids = consumer.connectionIDs
        #expect(ids.count == 2)
        for id in ids {
            let request = try #require(consumer.bytes(id, .clientToServer))
            let response = try #require(consumer.bytes(id, .serverToClient))
            #expect(Self.startsWith(request, #"^GET [^ ]+ HTTP/1\.[01]\r\n"#))
            #expect(Self.startsWith(response, #"^HTTP/1\.[01] [0-9]{3} "#))
            #expect(consumer.endReason(id, .clientToServer) == .fin)
        }
        // The second connection's whole request rode on its SYN.
        #expect(consumer.bytes(ids[1], .clientToServer)?.count == 86)
        #expect(consumer.bytes(ids[1], .serverToClient)?.count == 1307)
        #expect(reassembler.statistics.gapBytes == 0)
    }

    @Test("A capture with a lost segment gets exactly that gap",
          .enabled(if: publicFixtures != nil, "../shared/fixtures/public is absent"))
    func lostSegmentBecomesAGap() throws {
        let (consumer, reassembler) = try Self.reassemble("zeek_http_entity_gap.pcap")
        let id = try #require(consumer.connectionIDs.first)
        let pieces = consumer.pieces(id, .serverToClient)
        #expect(pieces.filter { if case .gap = $0 { true } else { false } } == [.gap(1448)])
        guard case .bytes(let head)? = pieces.first else {
            Issue.record("response stream does not start with bytes: \(pieces.count) pieces")
            return
        }
        #expect(Self.startsWith(head, #"^HTTP/1\.[01] [0-9]{3} "#))
        #expect(reassembler.statistics.gapBytes == 1448)
        #expect(consumer.endReason(id, .serverToClient) == .fin, "the ACK of the FIN proves the hole")
        #expect(consumer.bytes(id, .clientToServer) != nil, "no gap in the request")
    }

    /// Missing bytes per direction, counted independently from tshark's sequence numbers and lengths (the span
    /// from SYN to FIN minus the bytes any captured segment covered).
    @Test("Captures with drops: every missing byte is announced, and only those",
          .enabled(if: publicFixtures != nil, "../shared/fixtures/public is absent"),
          arguments: [("zeek_http_zero-length-bodies-with-drops.pcap", 2549, 542), ("zeek_http_entity_gap.pcap", 0, 1448)])
    func dropsBecomeExactGaps(name: String, clientGap: Int, serverGap: Int) throws {
        let (consumer, _) = try Self.reassemble(name)
        let id = try #require(consumer.connectionIDs.first)
        func gapTotal(_ direction: StreamDirection) -> Int {
            consumer.pieces(id, direction).reduce(0) { total, piece in
                if case .gap(let length) = piece { total + length } else { total }
            }
        }
        #expect(gapTotal(.clientToServer) == clientGap)
        #expect(gapTotal(.serverToClient) == serverGap)
        #expect(consumer.contractViolations.isEmpty)
    }

    static let allFixtures: [String] = {
        guard let folder = publicFixtures,
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") }.sorted()
    }()

    @Test("Every public capture reassembles within the stream contract",
          .enabled(if: publicFixtures != nil, "../shared/fixtures/public is absent"),
          arguments: allFixtures)
    func everyCaptureKeepsTheContract(name: String) throws {
        let (consumer, reassembler) = try Self.reassemble(name)
        #expect(consumer.contractViolations.isEmpty, "\(consumer.contractViolations)")
        #expect(Set(consumer.closedIDs) == Set(consumer.connectionIDs), "finish closes everything")
        #expect(reassembler.connectionCount == 0)
        #expect(reassembler.bufferedBytes == 0)
    }

    // MARK: The project's own fixtures (Tests/Fixtures, made by Scripts/make-fixtures)

    static func ownFixture(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: TestEnvironment.fixtures.appendingPathComponent(name).path)
    }

    /// Each connection's two streams, keyed by client endpoint, from a reassembly.
    static func streams(_ consumer: RecordingConsumer) -> [String: [[Piece]]] {
        var result: [String: [[Piece]]] = [:]
        for id in consumer.connectionIDs {
            let key = consumer.opened[id].map { "\($0.client) -> \($0.server)" } ?? "?"
            result[key] = [consumer.pieces(id, .clientToServer), consumer.pieces(id, .serverToClient)]
        }
        return result
    }

    @Test("Reordered and duplicated variants give exactly the streams of their source capture",
          .enabled(if: ownFixture("http-reordered.pcap") && ownFixture("http-duplicated.pcap"),
                   "Tests/Fixtures is absent (made by Scripts/make-fixtures)"),
          arguments: [("http-reordered.pcap", "http-keepalive.pcap"), ("http-duplicated.pcap", "http-chunked-gzip.pcap")])
    func derivedVariantMatchesItsSource(variant: String, source: String) throws {
        let (original, _) = try Self.reassemble(source, in: TestEnvironment.fixtures)
        let (derived, statistics) = try Self.reassemble(variant, in: TestEnvironment.fixtures)
        #expect(derived.contractViolations.isEmpty)
        #expect(!original.connectionIDs.isEmpty)
        #expect(Self.streams(derived) == Self.streams(original))
        #expect(statistics.statistics.gapBytes == 0)
        #expect(statistics.statistics.outOfOrderSegments + statistics.statistics.duplicateBytes > 0,
                "the variant really differs from its source")
        for id in derived.connectionIDs {
            #expect(derived.bytes(id, .clientToServer) != nil && derived.bytes(id, .serverToClient) != nil)
        }
    }
}
