/// The outer layers a packet was carried in: tunnels (GRE, ERSPAN, VXLAN, Geneve, IP-in-IP, IPv6-in-IPv4), label
/// stacks (MPLS) and session headers (PPPoE), outermost first.
///
/// `DecodedPacket.network` and `.transport` always describe the INNERMOST IP and TCP/UDP layers, so flow tracking and
/// `--http` see the tunnelled conversation exactly as if it had been captured without the tunnel. The outer layers
/// are kept here, by value, in a fixed-capacity inline list: nothing is allocated per packet.

/// An Ethernet header found inside a tunnel (GRE transparent Ethernet bridging, ERSPAN, VXLAN, Geneve).
public struct InnerEthernetHeader: Sendable {
    public var source: MACAddress
    public var destination: MACAddress
    /// EtherType after any VLAN tags.
    public var etherType: UInt16
    public var vlanTagCount: Int
    /// Header bytes, VLAN tags included.
    public var length: Int
    /// The whole inner frame on the wire, per the outer headers.
    public var frameLength: Int
}

/// A GRE header (RFC 2784 and RFC 2890; version 1 is PPTP's enhanced GRE, RFC 2637).
public struct GREHeader: Sendable {
    /// The first 16 bits: C, R, K, S, s flags, recursion control, A (version 1), flags and version.
    public var flagsAndVersion: UInt16
    /// EtherType of the payload (0x0800, 0x86dd, 0x6558 Ethernet, 0x88be/0x22eb ERSPAN, 0x880b PPP for version 1).
    public var protocolType: UInt16
    public var checksum: UInt16?
    public var offset: UInt16?
    public var key: UInt32?
    public var sequence: UInt32?
    /// Version 1 only: the acknowledgment number (A flag).
    public var acknowledgment: UInt32?
    public var headerLength: Int
    /// GRE header plus payload, per the delivery header's length.
    public var length: Int

    public var version: UInt8 { UInt8(flagsAndVersion & 7) }
    public var hasChecksum: Bool { flagsAndVersion & 0x8000 != 0 }
    public var hasRouting: Bool { flagsAndVersion & 0x4000 != 0 }
    public var hasKey: Bool { flagsAndVersion & 0x2000 != 0 }
    public var hasSequence: Bool { flagsAndVersion & 0x1000 != 0 }
    public var hasAcknowledgment: Bool { flagsAndVersion & 0x0080 != 0 }
}

/// An ERSPAN header (type I has none: the mirrored frame follows GRE directly).
public struct ERSPANHeader: Sendable {
    /// 1 (type I), 2 (type II, version field 1) or 3 (type III, version field 2).
    public var type: UInt8
    public var vlan: UInt16
    public var classOfService: UInt8
    /// Type II: encapsulation type; type III: bad/short/oversized frame bits.
    public var encapsulationOrBSO: UInt8
    public var truncated: Bool
    public var sessionID: UInt16
    /// Type II: port index (20 bits). Type III: the 32-bit timestamp.
    public var indexOrTimestamp: UInt32
    /// Type III: security group tag, hardware ID, direction (true = egress), granularity, frame type.
    public var securityGroupTag: UInt16 = 0
    public var hardwareID: UInt8 = 0
    public var egress: Bool = false
    public var granularity: UInt8 = 0
    public var frameType: UInt8 = 0
    public var hasPlatformSubheader: Bool = false
    public var headerLength: Int
}

/// The UDP header a VXLAN or Geneve packet rode in. Ports only: the addresses are the delivery IP header's, and
/// repeating them here would make every `Encapsulations` slot larger.
public struct TunnelUDPHeader: Sendable {
    public var sourcePort: UInt16
    public var destinationPort: UInt16
    /// The UDP length field.
    public var length: Int
}

/// A VXLAN header (RFC 7348).
public struct VXLANHeader: Sendable {
    public var flags: UInt8
    /// The 24 bits after the flags (reserved in VXLAN; OTV's overlay ID).
    public var reserved: UInt32
    /// 24 bits.
    public var networkIdentifier: UInt32
    /// The UDP port it was recognised on (4789, or 8472 as Linux uses by default).
    public var port: UInt16
}

/// A Geneve header (RFC 8926). Options are skipped by their declared length; `optionsLength` says how much.
public struct GeneveHeader: Sendable {
    public var version: UInt8
    public var optionsLength: Int
    public var controlPacket: Bool
    public var criticalOptions: Bool
    public var protocolType: UInt16
    /// 24 bits.
    public var networkIdentifier: UInt32
    /// The byte after the VNI (reserved; tcpdump prints it when not zero).
    public var reserved: UInt8
    public var headerLength: Int { 8 + optionsLength }
}

/// One MPLS label stack entry (RFC 3032).
public struct MPLSLabel: Sendable {
    public var label: UInt32
    public var trafficClass: UInt8
    public var bottomOfStack: Bool
    public var timeToLive: UInt8
}

/// A PPPoE header (RFC 2516): a session packet carrying PPP, or a discovery packet (PADI, PADO, PADR, PADS, PADT).
public struct PPPoEHeader: Sendable {
    public var version: UInt8
    public var type: UInt8
    /// 0 for session data; 0x09 PADI, 0x07 PADO, 0x19 PADR, 0x65 PADS, 0xa7 PADT.
    public var code: UInt8
    public var sessionID: UInt16
    /// The length field: the PPPoE payload (PPP protocol field included for session data).
    public var length: Int
    /// Session data: the PPP protocol (0x0021 IPv4, 0x0057 IPv6, ...).
    public var pppProtocol: UInt16
    /// Discovery: the tag bytes (captured part of the payload). Borrowed from the capture, like TCP options.
    public nonisolated(unsafe) var tags: UnsafeRawBufferPointer
    public var isDiscovery: Bool { code != 0 }
}

/// A delivery IP header, kept to what the tunnel printers and JSON read. `IPv6Header` is about 200 bytes (its
/// extension list) and every slot of `Encapsulations` is as large as the largest layer, so storing the full headers
/// made every `DecodedPacket` (returned by value, per packet) four times larger and cost 15-33% CPU on traffic with
/// no tunnel at all.
public struct DeliveryIPHeader: Sendable {
    public var source: IPAddress
    public var destination: IPAddress
    /// The upper-layer protocol (for IPv6, after all extension headers).
    public var protocolNumber: UInt8
    /// IPv4 time to live; IPv6 hop limit.
    public var timeToLive: UInt8
    private var storedExtensionCount: UInt8
    private var extensions: (DeliveryIPv6Extension, DeliveryIPv6Extension, DeliveryIPv6Extension,
                             DeliveryIPv6Extension)

    public var hopLimit: UInt8 { timeToLive }
    /// IPv6 extension headers walked (saturating at 255; `IPv6Header` keeps the first four); 0 for IPv4.
    public var extensionCount: Int { Int(storedExtensionCount) }

    public init(_ header: IPv4Header) {
        source = header.source
        destination = header.destination
        protocolNumber = header.protocolNumber
        timeToLive = header.timeToLive
        storedExtensionCount = 0
        let none = DeliveryIPv6Extension(type: 0, length: 0, routingType: 0, segmentsLeft: 0)
        extensions = (none, none, none, none)
    }

    public init(_ header: IPv6Header) {
        source = header.source
        destination = header.destination
        protocolNumber = header.protocolNumber
        timeToLive = header.hopLimit
        storedExtensionCount = UInt8(clamping: header.extensionCount)
        func compact(_ index: Int) -> DeliveryIPv6Extension {
            guard let ext = header.extension(at: index) else {
                return DeliveryIPv6Extension(type: 0, length: 0, routingType: 0, segmentsLeft: 0)
            }
            return DeliveryIPv6Extension(type: ext.type, length: UInt16(clamping: ext.length),
                                         routingType: ext.routingType, segmentsLeft: ext.segmentsLeft)
        }
        extensions = (compact(0), compact(1), compact(2), compact(3))
    }

    /// The extension header at `index` among the first four kept, as `IPv6Header.extension(at:)`.
    public func `extension`(at index: Int) -> DeliveryIPv6Extension? {
        guard index >= 0, index < min(extensionCount, 4) else { return nil }
        switch index {
        case 0: return extensions.0
        case 1: return extensions.1
        case 2: return extensions.2
        default: return extensions.3
        }
    }
}

/// One IPv6 extension header of a delivery header, in 6 bytes instead of `IPv6Extension`'s 24.
public struct DeliveryIPv6Extension: Sendable {
    /// Its own protocol number: 0 hop-by-hop, 43 routing, 44 fragment, 60 destination options, 51 AH.
    public var type: UInt8
    /// At most 2,048 bytes (routing: (255 + 1) * 8), so 16 bits hold it.
    private var storedLength: UInt16
    public var routingType: UInt8
    public var segmentsLeft: UInt8
    public var length: Int { Int(storedLength) }

    public init(type: UInt8, length: UInt16, routingType: UInt8, segmentsLeft: UInt8) {
        self.type = type
        self.storedLength = length
        self.routingType = routingType
        self.segmentsLeft = segmentsLeft
    }
}

/// One outer layer.
public enum EncapsulationLayer: Sendable {
    /// A delivery IPv4 header whose payload was another IP packet, GRE, or a UDP tunnel.
    case ipv4(DeliveryIPHeader)
    case ipv6(DeliveryIPHeader)
    case udp(TunnelUDPHeader)
    case gre(GREHeader)
    case erspan(ERSPANHeader)
    case vxlan(VXLANHeader)
    case geneve(GeneveHeader)
    case mpls(MPLSLabel)
    case pppoe(PPPoEHeader)
    case ethernet(InnerEthernetHeader)
}

/// A fixed-capacity list of outer layers, held inline.
public struct Encapsulations: Sendable, RandomAccessCollection {
    /// Most layers kept; deeper nesting stops decoding with a `DecodingError` on layer `.encapsulation` that says so.
    /// Eight holds every real overlay seen (VXLAN over IPv4: IP, UDP, VXLAN, Ethernet) twice over.
    public static let capacity = 8

    private var storage: (EncapsulationLayer?, EncapsulationLayer?, EncapsulationLayer?, EncapsulationLayer?,
                          EncapsulationLayer?, EncapsulationLayer?, EncapsulationLayer?, EncapsulationLayer?)
        = (nil, nil, nil, nil, nil, nil, nil, nil)
    public private(set) var count = 0
    /// Offset of the innermost network header in the captured frame (the link header length when not tunnelled).
    public var innerOffset = 0
    /// Where the innermost region ends, in wire bytes from the frame start, per the outer length fields.
    public var innerWireEnd = 0

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var isFull: Bool { count == Self.capacity }

    public subscript(position: Int) -> EncapsulationLayer {
        precondition(position >= 0 && position < count, "encapsulation index out of range")
        let layer: EncapsulationLayer?
        switch position {
        case 0: layer = storage.0
        case 1: layer = storage.1
        case 2: layer = storage.2
        case 3: layer = storage.3
        case 4: layer = storage.4
        case 5: layer = storage.5
        case 6: layer = storage.6
        default: layer = storage.7
        }
        return layer!
    }

    /// Appends `layer`; false (and nothing stored) when the list is full.
    @discardableResult
    public mutating func append(_ layer: EncapsulationLayer) -> Bool {
        switch count {
        case 0: storage.0 = layer
        case 1: storage.1 = layer
        case 2: storage.2 = layer
        case 3: storage.3 = layer
        case 4: storage.4 = layer
        case 5: storage.5 = layer
        case 6: storage.6 = layer
        case 7: storage.7 = layer
        default: return false
        }
        count += 1
        return true
    }
}
