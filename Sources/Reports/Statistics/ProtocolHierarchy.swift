import PacketDecoding

/// A protocol in a packet's stack, named as Wireshark's display filters name it (the names `-z io,phs` prints).
public enum ProtocolLayer: UInt8, Sendable, CaseIterable {
    case eth = 1, sll, raw, null, nflog, vlan, mpls, pppoes, gre, erspan, vxlan, geneve
    case ip, ipv6, arp, tcp, udp, icmp, icmpv6
    case http, tls, dns, quic, ntp, dhcp, data
    case ppp, chdlc

    public var name: String {
        switch self {
        case .eth: "eth"
        case .sll: "sll"
        case .raw: "raw"
        case .null: "null"
        case .nflog: "nflog"
        case .ppp: "ppp"
        case .chdlc: "chdlc"
        case .vlan: "vlan"
        case .mpls: "mpls"
        case .pppoes: "pppoes"
        case .gre: "gre"
        case .erspan: "erspan"
        case .vxlan: "vxlan"
        case .geneve: "geneve"
        case .ip: "ip"
        case .ipv6: "ipv6"
        case .arp: "arp"
        case .tcp: "tcp"
        case .udp: "udp"
        case .icmp: "icmp"
        case .icmpv6: "icmpv6"
        case .http: "http"
        case .tls: "tls"
        case .dns: "dns"
        case .quic: "quic"
        case .ntp: "ntp"
        case .dhcp: "dhcp"
        case .data: "data"
        }
    }
}

/// A packet's protocol stack, outermost first, packed into one word (eight layers of one byte): counting a packet
/// costs one dictionary update and allocates nothing.
public struct ProtocolPath: Hashable, Sendable {
    public private(set) var packed: UInt64 = 0
    public private(set) var depth = 0

    public init() {}

    public mutating func push(_ layer: ProtocolLayer) {
        guard depth < 8 else { return }
        packed |= UInt64(layer.rawValue) << UInt64(8 * depth)
        depth += 1
    }

    public var layers: [ProtocolLayer] {
        (0..<depth).map { ProtocolLayer(rawValue: UInt8(truncatingIfNeeded: packed >> UInt64(8 * $0)))! }
    }

    /// The first `count` layers.
    func prefix(_ count: Int) -> ProtocolPath {
        var result = ProtocolPath()
        for layer in layers.prefix(count) { result.push(layer) }
        return result
    }
}

/// Frames and bytes per protocol stack, shown as a tree the way `tshark -z io,phs` shows it: each node counts
/// the frames whose stack passes through it.
public struct ProtocolHierarchy: Sendable {
    public struct Node: Sendable, Hashable {
        public var layer: ProtocolLayer
        public var frames: Int
        public var bytes: Int
        public var children: [Node]
    }

    private var counts: [ProtocolPath: (frames: Int, bytes: Int)] = [:]
    /// Stacks in order of first appearance, so the tree lists protocols as the capture met them.
    private var order: [ProtocolPath] = []
    public private(set) var frames = 0
    public private(set) var bytes = 0

    public init() {}

    public mutating func count(_ path: ProtocolPath, frameLength: Int) {
        frames += 1
        bytes += frameLength
        if let existing = counts[path] {
            counts[path] = (existing.frames + 1, existing.bytes + frameLength)
        } else {
            counts[path] = (1, frameLength)
            order.append(path)
        }
    }

    /// The tree: roots are link layers.
    public var tree: [Node] {
        var roots: [Node] = []
        for path in order {
            guard let (frames, bytes) = counts[path] else { continue }
            Self.insert(path.layers[...], frames: frames, bytes: bytes, into: &roots)
        }
        return roots
    }

    private static func insert(_ layers: ArraySlice<ProtocolLayer>, frames: Int, bytes: Int, into nodes: inout [Node]) {
        guard let first = layers.first else { return }
        let index: Int
        if let existing = nodes.firstIndex(where: { $0.layer == first }) {
            index = existing
            nodes[index].frames += frames
            nodes[index].bytes += bytes
        } else {
            nodes.append(Node(layer: first, frames: frames, bytes: bytes, children: []))
            index = nodes.count - 1
        }
        insert(layers.dropFirst(), frames: frames, bytes: bytes, into: &nodes[index].children)
    }
}

extension ProtocolPath {
    /// The stack of a decoded packet: link, any tunnels, network, transport, and an application guess from the
    /// payload's first bytes and well-known ports (per packet: continuation segments of a message count as `data`).
    public init(_ packet: DecodedPacket) {
        self.init()
        switch packet.link.kind {
        case .ethernet, .ethernetCarryingIP: push(.eth)
        case .linuxCooked, .linuxCooked2: push(.sll)
        case .rawIP: push(.raw)
        case .loopback: push(.null)
        case .nflog: push(.nflog)
        case .ppp: push(.ppp)
        case .ciscoHDLC: push(.chdlc)
        }
        for _ in 0..<min(packet.link.vlanTagCount, 2) { push(.vlan) }
        for layer in packet.encapsulation {
            switch layer {
            case .ipv4: push(.ip)
            case .ipv6: push(.ipv6)
            case .udp: push(.udp)
            case .gre: push(.gre)
            case .erspan: push(.erspan)
            case .vxlan: push(.vxlan)
            case .geneve: push(.geneve)
            case .mpls: push(.mpls)
            case .pppoe: push(.pppoes)
            case .ethernet: push(.eth)
            }
        }
        switch packet.network {
        case .ipv4: push(.ip)
        case .ipv6: push(.ipv6)
        case .arp: push(.arp)
        case .none, .other: return
        }
        switch packet.transport {
        case .tcp(let segment):
            push(.tcp)
            if let application = Self.application(tcp: segment) { push(application) }
        case .udp(let datagram):
            push(.udp)
            if let application = Self.application(udp: datagram) { push(application) }
        case .cutTCP: push(.tcp)
        case .cutUDP: push(.udp)
        case .icmp: push(.icmp)
        case .icmpv6: push(.icmpv6)
        case .none, .fragment, .other: break
        }
    }

    private static func application(tcp segment: TCPSegment) -> ProtocolLayer? {
        let payload = segment.payload
        guard segment.payloadLength > 0 else { return nil }
        if segment.source.port == 53 || segment.destination.port == 53 { return .dns }
        if payload.count >= 3 && (0x14...0x17).contains(payload[0]) && payload[1] == 3 && payload[2] <= 4 { return .tls }
        if case .unrecognised = HTTPFirstLine(payload: payload, length: segment.payloadLength) { return .data }
        return .http
    }

    private static func application(udp datagram: UDPDatagram) -> ProtocolLayer? {
        let ports = (datagram.source.port, datagram.destination.port)
        func either(_ port: UInt16) -> Bool { ports.0 == port || ports.1 == port }
        if either(53) || either(5353) { return .dns }
        if either(123) { return .ntp }
        if either(67) || either(68) { return .dhcp }
        if either(443) { return .quic }
        return datagram.payloadLength > 0 ? .data : nil
    }
}
