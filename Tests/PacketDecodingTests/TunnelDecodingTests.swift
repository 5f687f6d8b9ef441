import Foundation
import Testing
import TestSupport
@testable import PacketDecoding

/// Tunnels and encapsulations, on the captures Scripts/fixtures/make-tunnels.sh made from real kernel tunnels.
@Suite("Tunnel decoding")
struct TunnelDecodingTests {
    static func fixture(_ name: String) throws -> PcapFixture {
        try PcapFixture(TestEnvironment.fixtures.appendingPathComponent("tunnels/\(name)"))
    }

    static func kind(_ layer: EncapsulationLayer) -> String {
        switch layer {
        case .ipv4: "ipv4"
        case .ipv6: "ipv6"
        case .udp: "udp"
        case .gre: "gre"
        case .erspan: "erspan"
        case .vxlan: "vxlan"
        case .geneve: "geneve"
        case .mpls: "mpls"
        case .pppoe: "pppoe"
        case .ethernet: "ethernet"
        }
    }

    /// The outer layers every HTTP segment of each capture must show.
    static let expectedLayers: [(String, [String])] = [
        ("tunnel-gre.pcap", ["ipv4", "gre"]),
        ("tunnel-gretap-key-seq.pcap", ["ipv4", "gre", "ethernet"]),
        ("tunnel-ip6gre.pcap", ["ipv6", "gre"]),
        ("tunnel-erspan2.pcap", ["ipv4", "gre", "erspan", "ethernet"]),
        ("tunnel-erspan3.pcap", ["ipv4", "gre", "erspan", "ethernet"]),
        ("tunnel-ipip.pcap", ["ipv4"]),
        ("tunnel-sit.pcap", ["ipv4"]),
        ("tunnel-ip6ip6.pcap", ["ipv6"]),
        ("tunnel-ipip6.pcap", ["ipv6"]),
        ("tunnel-vxlan.pcap", ["ipv4", "udp", "vxlan", "ethernet"]),
        ("tunnel-vxlan-8472.pcap", ["ipv4", "udp", "vxlan", "ethernet"]),
        ("tunnel-vxlan6.pcap", ["ipv6", "udp", "vxlan", "ethernet"]),
        ("tunnel-geneve.pcap", ["ipv4", "udp", "geneve", "ethernet"]),
        ("tunnel-pppoe.pcap", ["pppoe"]),
        ("tunnel-pppoe-pfc.pcap", ["pppoe"]),
        ("tunnel-ppp.pcap", []),  // a PPP link, not an encapsulation: the link header is PPP
    ]

    static var availableExpectations: [(String, [String])] {
        expectedLayers.filter { FileManager.default.fileExists(atPath: TestEnvironment.fixtures.appendingPathComponent("tunnels/\($0.0)").path) }
    }

    @Test("HTTP segments decode to the inner TCP with the outer layers recorded", arguments: availableExpectations)
    func innerTCPAndOuterLayers(name: String, layers: [String]) throws {
        let capture = try Self.fixture(name)
        var segments = 0
        for index in capture.records.indices {
            try capture.decode(index) { packet in
                guard let tcp = packet.tcp else { return }
                segments += 1
                #expect(packet.error == nil, "\(name) #\(index + 1): \(packet.error.map(String.init(describing:)) ?? "")")
                #expect(packet.encapsulation.map(Self.kind) == layers, "\(name) #\(index + 1)")
                #expect(tcp.source.port == 80 || tcp.destination.port == 80)
                // The inner addresses are the overlay's (10.215.0.0/16, fd00:215::/32), never the underlay's.
                let inner = try #require(packet.addresses).source.description
                #expect(inner.hasPrefix("10.215.") || inner.hasPrefix("fd00:215:") || inner == "10.214.0.2",
                        "\(name) #\(index + 1): \(inner)")
            }
        }
        #expect(segments >= 10)
    }

    @Test func greKeyAndSequenceNumbers() throws {
        let capture = try Self.fixture("tunnel-gretap-key-seq.pcap")
        var sequences: [UInt32] = []
        for index in capture.records.indices {
            try capture.decode(index) { packet in
                guard packet.tcp != nil, case .gre(let gre) = packet.encapsulation[1] else { return }
                #expect(gre.key == 42)
                #expect(gre.protocolType == 0x6558)
                #expect(gre.version == 0)
                sequences.append(try #require(gre.sequence))
            }
        }
        #expect(!sequences.isEmpty)
    }

    @Test func erspanSessions() throws {
        for (name, type, session) in [("tunnel-erspan2.pcap", UInt8(2), UInt16(7)), ("tunnel-erspan3.pcap", 3, 8)] {
            let capture = try Self.fixture(name)
            try capture.decode(capture.records.count - 1) { packet in
                guard case .erspan(let erspan) = packet.encapsulation[2] else {
                    Issue.record("\(name): no ERSPAN layer")
                    return
                }
                #expect(erspan.type == type)
                #expect(erspan.sessionID == session)
                if type == 3 { #expect(erspan.hardwareID == 3) }
            }
        }
    }

    @Test func vxlanAndGeneveNetworkIdentifiers() throws {
        for (name, vni) in [("tunnel-vxlan.pcap", UInt32(42)), ("tunnel-vxlan-8472.pcap", 1), ("tunnel-vxlan6.pcap", 43),
                            ("tunnel-geneve.pcap", 77)] {
            let capture = try Self.fixture(name)
            try capture.decode(capture.records.count - 1) { packet in
                switch packet.encapsulation[2] {
                case .vxlan(let vxlan): #expect(vxlan.networkIdentifier == vni, "\(name)")
                case .geneve(let geneve): #expect(geneve.networkIdentifier == vni, "\(name)")
                default: Issue.record("\(name): no VXLAN or Geneve layer")
                }
            }
        }
    }

    /// Requests carry two labels (100, then 200 at the bottom), responses one (300); IPv4 is found under them.
    @Test func mplsLabelStacks() throws {
        let capture = try Self.fixture("tunnel-mpls.pcap")
        var stacks = Set<[UInt32]>()
        for index in capture.records.indices {
            try capture.decode(index) { packet in
                #expect(packet.error == nil)
                guard let tcp = packet.tcp else { return }
                let labels = packet.encapsulation.compactMap { layer -> MPLSLabel? in
                    if case .mpls(let label) = layer { return label }
                    return nil
                }
                #expect(labels.last?.bottomOfStack == true)
                #expect(labels.dropLast().allSatisfy { !$0.bottomOfStack })
                #expect(labels.map(\.label) == (tcp.destination.port == 80 ? [100, 200] : [300]))
                stacks.insert(labels.map(\.label))
            }
        }
        #expect(stacks == [[100, 200], [300]])
    }

    /// PPPoE used to decode to nothing; now discovery is labelled and sessions carry their IP packets, with the
    /// PPP protocol field in two bytes or, compressed (PFC), in one (`0x21` then the IPv4 header).
    @Test(arguments: ["tunnel-pppoe.pcap", "tunnel-pppoe-pfc.pcap"])
    func pppoeDiscoveryAndSession(name: String) throws {
        let capture = try Self.fixture(name)
        var codes: [UInt8] = []
        var sessionSegments = 0
        for index in capture.records.indices {
            try capture.decode(index) { packet in
                #expect(packet.error == nil)
                guard case .pppoe(let pppoe) = packet.encapsulation.first else {
                    Issue.record("#\(index + 1) has no PPPoE layer")
                    return
                }
                if pppoe.isDiscovery {
                    codes.append(pppoe.code)
                } else {
                    #expect(pppoe.sessionID == 0x1234)
                    #expect(pppoe.pppProtocol == 0x0021)
                    #expect(packet.tcp != nil)
                    sessionSegments += 1
                }
            }
        }
        #expect(codes == [0x09, 0x07, 0x19, 0x65, 0xa7])
        #expect(sessionSegments == capture.records.count - 5)
    }

    // MARK: Hostile bytes

    static var allTunnelCaptures: [String] {
        let folder = TestEnvironment.fixtures.appendingPathComponent("tunnels")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".pcap") }.sorted()
    }

    /// Every prefix of every packet (the snap length cutting anywhere) decodes without trapping, and a cut inside an
    /// outer header is reported at that header's layer and offset.
    @Test("every cut of every tunnelled packet decodes without trapping", arguments: allTunnelCaptures)
    func everyPrefixDecodes(name: String) throws {
        let capture = try Self.fixture(name)
        let decoder = try PacketDecoder(linkType: capture.linkType)
        for record in capture.records {
            for cut in 0...record.bytes.count {
                record.bytes.withUnsafeBytes { raw in
                    let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<cut])
                    let packet = decoder.decode(bytes, timestamp: record.timestamp, originalLength: record.originalLength)
                    #expect(packet.encapsulation.count <= Encapsulations.capacity)
                    if let error = packet.error {
                        #expect(error.offset <= cut || error.kind != .truncated, "\(name) cut at \(cut): \(error)")
                    }
                }
            }
        }
    }

    /// Random byte changes (a fixed-seed generator, so failures reproduce) never trap.
    @Test("mutated tunnel packets decode without trapping", arguments: allTunnelCaptures)
    func mutatedPacketsDecode(name: String) throws {
        let capture = try Self.fixture(name)
        let decoder = try PacketDecoder(linkType: capture.linkType)
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        func random() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        for record in capture.records {
            for _ in 0..<64 {
                var bytes = record.bytes
                for _ in 0..<(1 + Int(random() % 4)) where !bytes.isEmpty {
                    bytes[Int(random() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random())
                }
                bytes.withUnsafeBytes { raw in
                    let packet = decoder.decode(raw, timestamp: record.timestamp, originalLength: record.originalLength)
                    #expect(packet.encapsulation.count <= Encapsulations.capacity)
                }
            }
        }
    }

    /// GRE inside GRE inside GRE... (built from a real GRE packet) stops at `Encapsulations.capacity` layers with an
    /// error that says so, keeping the outer layers.
    @Test func nestingStopsAtTheDocumentedDepth() throws {
        let capture = try Self.fixture("tunnel-gre.pcap")
        let frame = capture.records[0].bytes
        let ethernet = Array(frame[0..<14])
        let deliveryAndGRE = Array(frame[14..<(14 + 24)])
        var packet = Array(frame[(14 + 24)...])
        for _ in 0..<10 {
            var outer = deliveryAndGRE
            let total = outer.count + packet.count
            outer[2] = UInt8(total >> 8)
            outer[3] = UInt8(total & 0xff)
            packet = outer + packet
        }
        let nested = ethernet + packet
        let decoder = try PacketDecoder(linkType: .ethernet)
        nested.withUnsafeBytes { raw in
            let decoded = decoder.decode(raw, timestamp: Timestamp(seconds: 0, nanoseconds: 0), originalLength: nested.count)
            #expect(decoded.encapsulation.count == Encapsulations.capacity)
            #expect(decoded.error?.layer == .encapsulation)
            #expect(decoded.error?.description.contains("more than 8 nested encapsulation layers") == true)
        }
    }

    /// An MPLS stack that never sets bottom-of-stack runs into the same limit instead of reading on.
    @Test func endlessLabelStackStops() throws {
        var frame: [UInt8] = [0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x88, 0x47]
        for label in 0..<40 { frame += [0, UInt8(label), 0x10, 64] }  // S bit never set
        let decoder = try PacketDecoder(linkType: .ethernet)
        frame.withUnsafeBytes { raw in
            let decoded = decoder.decode(raw, timestamp: Timestamp(seconds: 0, nanoseconds: 0), originalLength: frame.count)
            #expect(decoded.encapsulation.count == Encapsulations.capacity)
            #expect(decoded.error?.layer == .encapsulation)
        }
    }
}
