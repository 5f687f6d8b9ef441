/// The decoded view of one captured packet: plain values plus byte views that borrow the capture's buffer.
///
/// Every `UnsafeRawBufferPointer` in here (payloads, options) points into the bytes the capture lent for one
/// callback; it is valid only until that callback returns. Copy what you need to keep.

/// A 48-bit MAC address held by value.
public struct MACAddress: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xffff_ffff_ffff }

    public var description: String {
        var text = ""
        for i in stride(from: 40, through: 0, by: -8) {
            let byte = UInt8(truncatingIfNeeded: rawValue >> UInt64(i))
            if i != 40 { text += ":" }
            if byte < 16 { text += "0" }
            text += String(byte, radix: 16)
        }
        return text
    }
}

/// What the link layer said about the packet.
public struct LinkHeader: Sendable {
    public enum Kind: Sendable, Hashable {
        case ethernet
        /// Labelled Ethernet, but the frame starts with an IP header (macOS `rvi` captures do this).
        case ethernetCarryingIP
        case linuxCooked
        case linuxCooked2
        case rawIP
        case loopback
        case nflog
        case ppp
        case ciscoHDLC
    }

    public var kind: Kind
    /// Bytes of link-layer header (including VLAN tags) before the network layer.
    public var length: Int
    /// EtherType of the network layer (0x0800 IPv4, 0x86dd IPv6, 0x0806 ARP), after any VLAN tags.
    public var etherType: UInt16
    public var source: MACAddress?
    public var destination: MACAddress?
    /// VLAN IDs of 802.1Q/802.1ad tags, outermost first; at most two are kept, `vlanTagCount` counts all.
    public var vlanIDs: (UInt16, UInt16) = (0, 0)
    /// The whole tag control fields (priority, DEI, ID) and the tag protocol of those two tags, for `-e`.
    public var vlanTags: (VLANTag, VLANTag) = (VLANTag(), VLANTag())
    /// The type field the link header itself carries (before any VLAN tags); `etherType` is the one after them.
    public var linkEtherType: UInt16 = 0
    /// NFLOG: the header's version and resource ID (the group), and the address family.
    public var nflogVersion: UInt8 = 0
    public var nflogResourceID: UInt16 = 0
    public var nflogFamily: UInt8 = 0
    /// PPP: the protocol field (0x0021 IPv4, 0x0057 IPv6, 0xc021 LCP, ...).
    public var pppProtocol: UInt16 = 0
    /// Raw IP: the version nibble of the first byte (4 or 6, or another when the frame is no IP packet).
    public var rawIPVersion: UInt8 = 0
    /// Cisco HDLC: the address byte (0x0f unicast, 0x8f broadcast).
    public var hdlcAddress: UInt8 = 0
    /// NULL/LOOP: the address family word (BSD numbering).
    public var addressFamily: UInt32 = 0
    public var vlanTagCount: Int = 0
    /// Linux cooked capture packet type (0 to us, 1 broadcast, 2 multicast, 3 other host, 4 outgoing); PPP: 0 or 4
    /// when pppd's direction bytes say in or out.
    public var packetType: UInt16?
    /// Linux cooked capture v2 interface index.
    public var interfaceIndex: UInt32?

    public init(kind: Kind, length: Int, etherType: UInt16) {
        self.kind = kind
        self.length = length
        self.etherType = etherType
    }
}

/// One 802.1Q/802.1ad tag: the tag protocol (0x8100, 0x88a8, 0x9100) and the tag control information.
public struct VLANTag: Sendable, Hashable {
    public var tagProtocol: UInt16 = 0
    public var controlInformation: UInt16 = 0
    public var id: UInt16 { controlInformation & 0x0fff }
    public var priority: UInt8 { UInt8(controlInformation >> 13) }
    public var dropEligible: Bool { controlInformation & 0x1000 != 0 }
    public init() {}
}

/// An IPv4 header, options excluded (their length is `headerLength - 20`).
public struct IPv4Header: Sendable {
    public var source: IPAddress
    public var destination: IPAddress
    public var headerLength: Int
    /// The total length field: header plus payload.
    public var totalLength: Int
    public var typeOfService: UInt8
    public var identification: UInt16
    public var dontFragment: Bool
    public var moreFragments: Bool
    /// Fragment offset in bytes.
    public var fragmentOffset: Int
    public var timeToLive: UInt8
    public var protocolNumber: UInt8
    /// The reserved flag bit (RFC 3514's "evil" bit); tcpdump -v shows it as `rsvd`.
    public var reservedFlag = false
    public var optionsLength: Int { headerLength - 20 }
    /// True for every piece of a fragmented datagram.
    public var isFragment: Bool { moreFragments || fragmentOffset != 0 }
}

/// One IPv6 extension header that was walked.
public struct IPv6Extension: Sendable {
    /// Its own protocol number: 0 hop-by-hop, 43 routing, 44 fragment, 60 destination options, 51 AH.
    public var type: UInt8
    public var length: Int
    /// Routing: routing type; fragment: unused.
    public var routingType: UInt8 = 0
    public var segmentsLeft: UInt8 = 0
}

/// IPv6 fragment header contents.
public struct IPv6Fragment: Sendable {
    public var identification: UInt32
    /// Offset in bytes.
    public var offset: Int
    public var moreFragments: Bool
}

/// An IPv6 header with its extension chain walked to the upper-layer protocol.
public struct IPv6Header: Sendable {
    public var source: IPAddress
    public var destination: IPAddress
    public var payloadLength: Int
    public var trafficClass: UInt8
    public var flowLabel: UInt32
    public var hopLimit: UInt8
    /// The upper-layer protocol after all extension headers.
    public var protocolNumber: UInt8
    /// Bytes of extension headers between the fixed header and the upper layer.
    public var extensionsLength: Int
    /// The first extension headers, in order (at most four are kept; `extensionCount` counts all).
    public var extensions: (IPv6Extension?, IPv6Extension?, IPv6Extension?, IPv6Extension?) = (nil, nil, nil, nil)
    public var extensionCount: Int = 0
    public var fragment: IPv6Fragment?

    public func `extension`(at index: Int) -> IPv6Extension? {
        switch index {
        case 0: extensions.0
        case 1: extensions.1
        case 2: extensions.2
        case 3: extensions.3
        default: nil
        }
    }
}

/// An ARP packet (Ethernet/IPv4 form).
public struct ARPPacket: Sendable {
    public var operation: UInt16
    public var senderHardware: MACAddress
    public var senderAddress: IPAddress
    public var targetHardware: MACAddress
    public var targetAddress: IPAddress
}

public enum NetworkLayer: Sendable {
    case none
    case ipv4(IPv4Header)
    case ipv6(IPv6Header)
    case arp(ARPPacket)
    /// A network protocol this decoder does not look into.
    case other(etherType: UInt16)
}

/// A TCP segment. `payloadLength` comes from the IP length fields; `payload` holds the bytes actually captured.
/// Borrows the packet's memory, so it is not `Sendable`: it lives and dies inside the capture callback.
public struct TCPSegment {
    public var source: Endpoint
    public var destination: Endpoint
    public var sequenceNumber: UInt32
    public var acknowledgmentNumber: UInt32
    public var flags: TCPFlags
    public var window: UInt16
    public var urgentPointer: UInt16
    public var headerLength: Int
    /// The captured option bytes (header beyond 20 bytes; fewer than `headerLength - 20` when the snap length cut
    /// them). Walk them with `TCPOptionIterator`.
    public var options: UnsafeRawBufferPointer
    public var payload: UnsafeRawBufferPointer
    public var payloadLength: Int
    /// Fewer payload bytes were captured than the segment carried (snap length).
    public var isTruncated: Bool { payload.count < payloadLength }

    /// The options as tcpdump walks them (declared length from the header, bytes as captured).
    public var optionIterator: TCPOptionIterator {
        TCPOptionIterator(options, declaredLength: max(headerLength - 20, 0))
    }

    public init(source: Endpoint, destination: Endpoint, sequenceNumber: UInt32, acknowledgmentNumber: UInt32,
                flags: TCPFlags, window: UInt16, urgentPointer: UInt16, headerLength: Int,
                options: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, payloadLength: Int) {
        self.source = source
        self.destination = destination
        self.sequenceNumber = sequenceNumber
        self.acknowledgmentNumber = acknowledgmentNumber
        self.flags = flags
        self.window = window
        self.urgentPointer = urgentPointer
        self.headerLength = headerLength
        self.options = options
        self.payload = payload
        self.payloadLength = payloadLength
    }
}

/// Borrows the packet's memory (not `Sendable`).
public struct UDPDatagram {
    public var source: Endpoint
    public var destination: Endpoint
    /// The UDP length field (header plus payload).
    public var length: Int
    public var payload: UnsafeRawBufferPointer
    /// Payload bytes the datagram carries per the IP length.
    public var payloadLength: Int
}

/// The IP header an ICMP error quotes: which datagram could not be delivered.
public struct ICMPQuote: Sendable, Hashable {
    public var source: IPAddress
    public var destination: IPAddress
    public var protocolNumber: UInt8
    /// Ports of the quoted TCP or UDP header, when its first four bytes were quoted.
    public var sourcePort: UInt16?
    public var destinationPort: UInt16?
}

/// An ICMP or ICMPv6 message. Borrows the packet's memory (not `Sendable`).
public struct ICMPMessage {
    public var type: UInt8
    public var code: UInt8
    /// The four bytes after the checksum (echo id and sequence, for example).
    public var restOfHeader: UInt32
    public var body: UnsafeRawBufferPointer
    /// Length of the ICMP message per the IP length fields.
    public var length: Int
    /// ICMP errors (unreachable, time exceeded, ...): the quoted IPv4 header, when 20 bytes of it were captured.
    public var quote: ICMPQuote?
    /// ICMPv6 neighbor solicitation/advertisement: the target address, when captured.
    public var target: IPAddress?
    public var identifier: UInt16 { UInt16(truncatingIfNeeded: restOfHeader >> 16) }
    public var sequence: UInt16 { UInt16(truncatingIfNeeded: restOfHeader) }
}

/// A transport header the snap length cut: the ports always (they are the first four bytes); for TCP also the
/// fixed 20-byte header when it was captured (its `options` then hold the option bytes that were captured).
/// tcpdump prints such headers as far as they go, then `[|tcp]` or `[|udp]`.
public struct CutTransportHeader {
    public var source: Endpoint
    public var destination: Endpoint
    public var fixedTCPHeader: TCPSegment?
}

/// Borrows the packet's memory (not `Sendable`).
public enum TransportLayer {
    case none
    case tcp(TCPSegment)
    case udp(UDPDatagram)
    /// TCP whose header was not captured whole (or is malformed); `DecodedPacket.error` says why.
    case cutTCP(CutTransportHeader)
    /// UDP whose 8-byte header was not captured whole.
    case cutUDP(CutTransportHeader)
    case icmp(ICMPMessage)
    case icmpv6(ICMPMessage)
    /// A non-first fragment: the upper-layer header is in another packet.
    case fragment(protocolNumber: UInt8)
    /// An upper-layer protocol this decoder does not look into.
    case other(protocolNumber: UInt8)
}

/// One decoded packet. Decoding stops at the first problem, which `error` describes; layers before it are filled.
/// Borrows the capture's buffer through its transport views, so it is not `Sendable`.
public struct DecodedPacket {
    public var timestamp: Timestamp
    /// Bytes captured (at most the snap length).
    public var capturedLength: Int
    /// Bytes the packet had on the wire.
    public var originalLength: Int
    public var linkType: LinkType
    public var link: LinkHeader
    public var network: NetworkLayer
    public var transport: TransportLayer
    public var error: DecodingError?
    /// Tunnels and encapsulations around `network`, outermost first; empty for most packets.
    public var encapsulation = Encapsulations()

    /// Where `network` starts in the captured frame: after the link header, or inside the innermost tunnel.
    public var networkOffset: Int { encapsulation.isEmpty ? link.length : encapsulation.innerOffset }

    /// The capture holds fewer bytes than the packet had (snap length); decoded lengths still come from headers.
    public var isTruncated: Bool { capturedLength < originalLength }

    public var tcp: TCPSegment? {
        if case .tcp(let segment) = transport { return segment }
        return nil
    }

    public var udp: UDPDatagram? {
        if case .udp(let datagram) = transport { return datagram }
        return nil
    }

    /// Source and destination addresses of the IP layer, if any.
    public var addresses: (source: IPAddress, destination: IPAddress)? {
        switch network {
        case .ipv4(let header): (header.source, header.destination)
        case .ipv6(let header): (header.source, header.destination)
        default: nil
        }
    }
}
