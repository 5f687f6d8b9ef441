/// A capture's link-layer header type, as numbered by tcpdump.org's LINKTYPE_/DLT_ registry.
public struct LinkType: RawRepresentable, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let null = LinkType(rawValue: 0)
    public static let ethernet = LinkType(rawValue: 1)
    /// PPP as libpcap delivers it (RFC 1661): the protocol field, optionally after HDLC-like address and control
    /// bytes (0xff 0x03) or pppd's direction bytes.
    public static let ppp = LinkType(rawValue: 9)
    /// DLT_RAW on most BSDs and Linux.
    public static let rawDLT12 = LinkType(rawValue: 12)
    /// DLT_RAW on OpenBSD.
    public static let rawDLT14 = LinkType(rawValue: 14)
    /// Cisco HDLC: an address byte (0x0f unicast, 0x8f broadcast), a control byte and an EtherType.
    public static let ciscoHDLC = LinkType(rawValue: 104)
    public static let loop = LinkType(rawValue: 108)
    public static let raw = LinkType(rawValue: 101)
    public static let linuxSLL = LinkType(rawValue: 113)
    public static let ipv4 = LinkType(rawValue: 228)
    public static let ipv6 = LinkType(rawValue: 229)
    public static let nflog = LinkType(rawValue: 239)
    public static let linuxSLL2 = LinkType(rawValue: 276)

    /// Whether `PacketDecoder` understands this link type.
    public var isSupported: Bool {
        switch self {
        case .null, .ethernet, .ppp, .rawDLT12, .rawDLT14, .ciscoHDLC, .loop, .raw, .linuxSLL, .ipv4, .ipv6, .nflog, .linuxSLL2:
            true
        default: false
        }
    }

    /// The short name libpcap and tcpdump use (`EN10MB`, `LINUX_SLL2`, ...), or `LINKTYPE_<n>`.
    public var name: String {
        switch self {
        case .null: "NULL"
        case .ethernet: "EN10MB"
        case .ppp: "PPP"
        case .rawDLT12, .rawDLT14, .raw: "RAW"
        case .ciscoHDLC: "C_HDLC"
        case .loop: "LOOP"
        case .linuxSLL: "LINUX_SLL"
        case .ipv4: "IPV4"
        case .ipv6: "IPV6"
        case .nflog: "NFLOG"
        case .linuxSLL2: "LINUX_SLL2"
        default: "LINKTYPE_\(rawValue)"
        }
    }
}
