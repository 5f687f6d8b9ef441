/// Decodes captured frames of one link type into `DecodedPacket` values. A value type with no per-packet
/// allocation: every header is length-checked once, then read in place.
public struct PacketDecoder: Sendable {
    public let linkType: LinkType

    public struct UnsupportedLinkType: Error, Sendable, CustomStringConvertible {
        public var linkType: LinkType
        public var description: String {
            "unsupported link type \(linkType.name) (\(linkType.rawValue)); supported: EN10MB, LINUX_SLL, "
                + "LINUX_SLL2, RAW (12, 14, 101), IPV4, IPV6, NULL, LOOP, NFLOG, PPP, C_HDLC"
        }
    }

    public init(linkType: LinkType) throws(UnsupportedLinkType) {
        guard linkType.isSupported else { throw UnsupportedLinkType(linkType: linkType) }
        self.linkType = linkType
    }

    /// Decodes `bytes` (the captured part of a frame of `originalLength` bytes).
    public func decode(_ bytes: UnsafeRawBufferPointer, timestamp: Timestamp, originalLength: Int) -> DecodedPacket {
        var packet = DecodedPacket(
            timestamp: timestamp, capturedLength: bytes.count, originalLength: originalLength, linkType: linkType,
            link: LinkHeader(kind: .ethernet, length: 0, etherType: 0), network: .none, transport: .none, error: nil)
        do throws(DecodingError) {
            try decodeLink(bytes, originalLength: originalLength, into: &packet.link)
            try decodeNetwork(bytes, into: &packet)
        } catch {
            packet.error = error
        }
        return packet
    }

    // MARK: Link layer

    /// Decodes the link header into `header`. When the capture cuts it after its fixed part (a VLAN tag, an
    /// NFLOG TLV), `header` keeps what was read, as tcpdump prints it before its `[|vlan]` or `[|nflog]`.
    private func decodeLink(_ bytes: UnsafeRawBufferPointer, originalLength: Int,
                            into header: inout LinkHeader) throws(DecodingError) {
        switch linkType {
        case .ethernet:
            if let carried = Self.ipHeaderAtStart(bytes, originalLength: originalLength) {
                header = LinkHeader(kind: .ethernetCarryingIP, length: 0, etherType: carried)
                return
            }
            try decodeEthernet(bytes, into: &header)
        case .linuxSLL:
            try need(bytes, 16, layer: .link, at: 0)
            header = LinkHeader(kind: .linuxCooked, length: 16, etherType: bytes.u16(14))
            header.packetType = bytes.u16(0)
            if bytes.u16(4) == 6 {  // any hardware type with a 6-byte address (tcpdump prints it)
                header.source = MACAddress(rawValue: bytes.u64(6) >> 16)
            }
            try skipVLANTags(bytes, header: &header)
        case .linuxSLL2:
            try need(bytes, 20, layer: .link, at: 0)
            header = LinkHeader(kind: .linuxCooked2, length: 20, etherType: bytes.u16(0))
            header.interfaceIndex = bytes.u32(4)
            header.packetType = UInt16(bytes[10])
            if bytes[11] == 6 {  // any hardware type with a 6-byte address (tcpdump prints it)
                header.source = MACAddress(rawValue: bytes.u64(12) >> 16)
            }
            try skipVLANTags(bytes, header: &header)
        case .raw, .rawDLT12, .rawDLT14, .ipv4, .ipv6:
            // The version nibble says what the packet is, on LINKTYPE_IPV4 and _IPV6 too (tcpdump's ip_print reads
            // it the same way). Another version is no IP packet: no network layer, the version kept for the line.
            try need(bytes, 1, layer: .link, at: 0)
            let version = bytes[0] >> 4
            header = LinkHeader(kind: .rawIP, length: 0, etherType: version == 4 ? 0x0800 : version == 6 ? 0x86dd : 0)
            header.rawIPVersion = version
        case .null, .loop:
            try need(bytes, 4, layer: .link, at: 0)
            // NULL holds the family in the capturing host's byte order, LOOP in network order.
            var family = linkType == .loop ? bytes.u32(0) : bytes.u32le(0)
            if family > 0xffff { family = family.byteSwapped }
            let etherType: UInt16
            switch family {
            case 2: etherType = 0x0800
            case 10, 24, 28, 30: etherType = 0x86dd
            default: etherType = 0
            }
            header = LinkHeader(kind: .loopback, length: 4, etherType: etherType)
            header.addressFamily = family
        case .nflog:
            try decodeNFLOG(bytes, into: &header)
        case .ppp:
            try decodePPPLink(bytes, into: &header)
        case .ciscoHDLC:
            try decodeCiscoHDLC(bytes, into: &header)
        default:
            throw DecodingError(layer: .link, kind: .malformed("unsupported link type \(linkType.name)"),
                                offset: 0, needed: 0, actual: bytes.count)
        }
    }

    /// PPP (RFC 1661), read as tcpdump's ppp_print does: address and control bytes (0xff 0x03) or pppd's direction
    /// bytes (0x00 0x03 in, 0x01 0x03 out) when present, then a one-byte (compressed, RFC 1661 6.5) or two-byte
    /// protocol field. IPv4 and IPv6 are decoded further; other protocols (LCP, IPCP, ...) are named only.
    private func decodePPPLink(_ bytes: UnsafeRawBufferPointer, into header: inout LinkHeader) throws(DecodingError) {
        try need(bytes, 4, layer: .link, at: 0)  // tcpdump's PPP_HDRLEN: less is a cut header
        var offset = 0
        if bytes[1] == 0x03, bytes[0] == 0xff || bytes[0] <= 0x01 {
            offset = 2
            if bytes[0] != 0xff { header.packetType = bytes[0] == 0 ? 0 : 4 }  // pppd: in, out
        }
        let field = try readPPPProtocol(bytes, at: offset, layer: .link, headerStart: 0)
        let etherType: UInt16 = field.value == 0x0021 ? 0x0800 : field.value == 0x0057 ? 0x86dd : 0
        let direction = header.packetType
        header = LinkHeader(kind: .ppp, length: offset + field.length, etherType: etherType)
        header.packetType = direction
        header.pppProtocol = field.value
    }

    /// Cisco HDLC: address, control, then an EtherType, 4 bytes in all. The network layer is decoded for what
    /// runs over it as tcpdump's chdlc_print reads it (IPv4, IPv6, MPLS); anything else (SLARP, CDP, ...) is named by
    /// its type only (`linkEtherType`), never read as what the same EtherType means on Ethernet (0x8035 is SLARP
    /// here, not RARP).
    private func decodeCiscoHDLC(_ bytes: UnsafeRawBufferPointer, into header: inout LinkHeader) throws(DecodingError) {
        try need(bytes, 4, layer: .link, at: 0)
        let type = bytes.u16(2)
        let decoded = type == 0x0800 || type == 0x86dd || type == 0x8847 || type == 0x8848
        header = LinkHeader(kind: .ciscoHDLC, length: 4, etherType: decoded ? type : 0)
        header.linkEtherType = type
        header.hdlcAddress = bytes[0]
    }

    /// Recognises an IP header where an Ethernet header should be: the version nibble, the length field
    /// matching the frame, and (IPv4) a valid header checksum. Returns the EtherType it stands for.
    static func ipHeaderAtStart(_ bytes: UnsafeRawBufferPointer, originalLength: Int) -> UInt16? {
        guard bytes.count >= 20 else { return nil }
        let first = bytes[0]
        if first >> 4 == 4 {
            let headerLength = Int(first & 0x0f) * 4
            guard headerLength >= 20, bytes.count >= headerLength, Int(bytes.u16(2)) == originalLength else { return nil }
            var sum: UInt32 = 0
            for i in stride(from: 0, to: headerLength, by: 2) { sum &+= UInt32(bytes.u16(i)) }
            while sum > 0xffff { sum = (sum & 0xffff) + (sum >> 16) }
            return sum == 0xffff ? 0x0800 : nil
        }
        if first >> 4 == 6, bytes.count >= 40, Int(bytes.u16(4)) + 40 == originalLength {
            return 0x86dd
        }
        return nil
    }

    func decodeEthernet(_ bytes: UnsafeRawBufferPointer, into header: inout LinkHeader) throws(DecodingError) {
        try need(bytes, 14, layer: .link, at: 0)
        header = LinkHeader(kind: .ethernet, length: 14, etherType: bytes.u16(12))
        header.destination = MACAddress(rawValue: bytes.u64(0) >> 16)
        header.source = MACAddress(rawValue: UInt64(bytes.u16(6)) << 32 | UInt64(bytes.u32(8)))
        try skipVLANTags(bytes, header: &header)
    }

    /// Steps over 802.1Q (0x8100), 802.1ad (0x88a8) and old QinQ (0x9100) tags.
    func skipVLANTags(_ bytes: UnsafeRawBufferPointer, header: inout LinkHeader) throws(DecodingError) {
        header.linkEtherType = header.etherType
        while header.etherType == 0x8100 || header.etherType == 0x88a8 || header.etherType == 0x9100 {
            try need(bytes, header.length + 4, layer: .vlan, at: header.length)
            let vlanID = bytes.u16(header.length) & 0x0fff
            var tag = VLANTag()
            tag.tagProtocol = header.etherType
            tag.controlInformation = bytes.u16(header.length)
            if header.vlanTagCount == 0 {
                header.vlanIDs.0 = vlanID
                header.vlanTags.0 = tag
            } else if header.vlanTagCount == 1 {
                header.vlanIDs.1 = vlanID
                header.vlanTags.1 = tag
            }
            header.vlanTagCount += 1
            header.etherType = bytes.u16(header.length + 2)
            header.length += 4
        }
    }

    private func decodeNFLOG(_ bytes: UnsafeRawBufferPointer, into header: inout LinkHeader) throws(DecodingError) {
        try need(bytes, 4, layer: .link, at: 0)
        let family = bytes[0]
        let etherType: UInt16 = family == 2 ? 0x0800 : family == 10 ? 0x86dd : 0
        header = LinkHeader(kind: .nflog, length: 4, etherType: etherType)
        header.nflogFamily = family
        header.nflogVersion = bytes[1]
        header.nflogResourceID = bytes.u16(2)
        var offset = 4
        // TLVs: 16-bit length (host order; libpcap converts it when reading a file) and type; 4-byte aligned.
        while offset + 4 <= bytes.count {
            let length = Int(bytes.u16le(offset))
            let type = bytes.u16le(offset + 2) & 0x7fff
            guard length >= 4 else {
                throw DecodingError(layer: .link, kind: .malformed("NFLOG TLV length \(length) below 4"),
                                    offset: offset, needed: 4, actual: length)
            }
            if type == 9 {  // NFULA_PAYLOAD
                header.length = offset + 4
                return
            }
            let size = (length + 3) & ~3
            guard offset + size <= bytes.count else { break }  // a TLV before the payload, cut: tcpdump stops too
            offset += size
        }
        throw DecodingError(layer: .link, kind: .truncated, offset: offset, needed: offset + 4, actual: bytes.count)
    }

    // MARK: Network layer

    /// Decodes the network layer and, through any tunnels and encapsulations, the innermost one: `packet.network`
    /// and `.transport` end up describing the innermost IP packet, the outer layers go to `packet.encapsulation`.
    /// A loop, not recursion, bounded by `Encapsulations.capacity`.
    private func decodeNetwork(_ bytes: UnsafeRawBufferPointer, into packet: inout DecodedPacket) throws(DecodingError) {
        var next = InnerPacket(etherType: packet.link.etherType, start: packet.link.length,
                               wireEnd: packet.originalLength)
        while true {
            packet.encapsulation.innerOffset = next.start
            packet.encapsulation.innerWireEnd = next.wireEnd
            let start = next.start
            // Bytes the network layer had on the wire, per the frame length or the outer headers.
            let wireLength = next.wireEnd - start
            let inner: InnerPacket?
            switch next.etherType {
            case 0x0800, 0x86dd:
                let upper = next.etherType == 0x0800
                    ? try decodeIPv4(bytes, at: start, wireLength: wireLength, into: &packet)
                    : try decodeIPv6(bytes, at: start, wireLength: wireLength, into: &packet)
                guard let upper else { return }
                inner = try decodeUpperLayer(bytes, upper, into: &packet)
            case 0x0806, 0x8035:  // ARP and RARP share the format
                try decodeARP(bytes, at: start, etherType: next.etherType, into: &packet)
                return
            case 0x8847, 0x8848:
                inner = try decodeMPLS(bytes, at: start, wireEnd: next.wireEnd, into: &packet)
            case 0x8863, 0x8864:
                inner = try decodePPPoE(bytes, etherType: next.etherType, at: start, wireEnd: next.wireEnd, into: &packet)
            case 0x6558:
                inner = try decodeInnerEthernet(bytes, at: start, wireEnd: next.wireEnd, into: &packet)
            default:
                packet.network = .other(etherType: next.etherType)
                return
            }
            guard let inner else { return }
            next = inner
        }
    }

    private func decodeARP(_ bytes: UnsafeRawBufferPointer, at start: Int, etherType: UInt16, into packet: inout DecodedPacket) throws(DecodingError) {
        try need(bytes, start + 8, layer: .arp, at: start)
        guard bytes.u16(start) == 1, bytes.u16(start + 2) == 0x0800, bytes[start + 4] == 6, bytes[start + 5] == 4 else {
            packet.network = .other(etherType: etherType)
            return
        }
        try need(bytes, start + 28, layer: .arp, at: start)
        packet.network = .arp(ARPPacket(
            operation: bytes.u16(start + 6),
            senderHardware: MACAddress(rawValue: bytes.u64(start + 8) >> 16),
            senderAddress: .v4(bytes.u32(start + 14)),
            targetHardware: MACAddress(rawValue: UInt64(bytes.u16(start + 18)) << 32 | UInt64(bytes.u32(start + 20))),
            targetAddress: .v4(bytes.u32(start + 24))))
    }

    private func decodeIPv4(_ bytes: UnsafeRawBufferPointer, at start: Int, wireLength: Int,
                            into packet: inout DecodedPacket) throws(DecodingError) -> UpperLayer? {
        try need(bytes, start + 20, layer: .ipv4, at: start)
        let versionAndLength = bytes[start]
        guard versionAndLength >> 4 == 4 else {
            throw DecodingError(layer: .ipv4, kind: .malformed("IP version \(versionAndLength >> 4) in an IPv4 header"),
                                offset: start, needed: 20, actual: bytes.count - start)
        }
        let headerLength = Int(versionAndLength & 0x0f) * 4
        guard headerLength >= 20 else {
            throw DecodingError(layer: .ipv4, kind: .malformed("header length \(headerLength) below 20"),
                                offset: start, needed: 20, actual: headerLength)
        }
        try need(bytes, start + headerLength, layer: .ipv4, at: start)
        let fragmentField = bytes.u16(start + 6)
        let header = IPv4Header(
            source: .v4(bytes.u32(start + 12)), destination: .v4(bytes.u32(start + 16)),
            headerLength: headerLength, totalLength: Int(bytes.u16(start + 2)), typeOfService: bytes[start + 1],
            identification: bytes.u16(start + 4), dontFragment: fragmentField & 0x4000 != 0,
            moreFragments: fragmentField & 0x2000 != 0, fragmentOffset: Int(fragmentField & 0x1fff) * 8,
            timeToLive: bytes[start + 8], protocolNumber: bytes[start + 9], reservedFlag: fragmentField & 0x8000 != 0)
        packet.network = .ipv4(header)
        guard header.totalLength >= headerLength else {
            throw DecodingError(layer: .ipv4, kind: .malformed("total length \(header.totalLength) below header length"),
                                offset: start, needed: headerLength, actual: header.totalLength)
        }
        if header.fragmentOffset != 0 {
            packet.transport = .fragment(protocolNumber: header.protocolNumber)
            return nil
        }
        // Frames are often padded beyond the IP length; TSO captures may claim more than the frame has.
        let ipLength = min(header.totalLength, max(wireLength, headerLength))
        return UpperLayer(protocolNumber: header.protocolNumber, start: start + headerLength,
                          length: ipLength - headerLength, source: header.source, destination: header.destination)
    }

    private func decodeIPv6(_ bytes: UnsafeRawBufferPointer, at start: Int, wireLength: Int,
                            into packet: inout DecodedPacket) throws(DecodingError) -> UpperLayer? {
        try need(bytes, start + 40, layer: .ipv6, at: start)
        let first = bytes.u32(start)
        guard first >> 28 == 6 else {
            throw DecodingError(layer: .ipv6, kind: .malformed("IP version \(first >> 28) in an IPv6 header"),
                                offset: start, needed: 40, actual: bytes.count - start)
        }
        var header = IPv6Header(
            source: .v6(high: bytes.u64(start + 8), low: bytes.u64(start + 16)),
            destination: .v6(high: bytes.u64(start + 24), low: bytes.u64(start + 32)),
            payloadLength: Int(bytes.u16(start + 4)), trafficClass: UInt8(truncatingIfNeeded: first >> 20),
            flowLabel: first & 0xfffff, hopLimit: bytes[start + 7], protocolNumber: bytes[start + 6],
            extensionsLength: 0)
        var offset = start + 40
        walk: while true {
            let type = header.protocolNumber
            packet.network = .ipv6(header)  // kept when an extension header is cut (tcpdump prints the addresses)
            var ext = IPv6Extension(type: type, length: 0)
            switch type {
            case 0, 43, 60:  // hop-by-hop, routing, destination options
                try need(bytes, offset + 8, layer: .ipv6Extension, at: offset)
                ext.length = (Int(bytes[offset + 1]) + 1) * 8
                if type == 43 { ext.routingType = bytes[offset + 2]; ext.segmentsLeft = bytes[offset + 3] }
            case 44:
                try need(bytes, offset + 8, layer: .ipv6Extension, at: offset)
                ext.length = 8
                let field = bytes.u16(offset + 2)
                header.fragment = IPv6Fragment(identification: bytes.u32(offset + 4), offset: Int(field & 0xfff8),
                                               moreFragments: field & 1 != 0)
            case 51:
                try need(bytes, offset + 8, layer: .ipv6Extension, at: offset)
                ext.length = (Int(bytes[offset + 1]) + 2) * 4
            default:
                break walk
            }
            try need(bytes, offset + ext.length, layer: .ipv6Extension, at: offset)
            switch header.extensionCount {
            case 0: header.extensions.0 = ext
            case 1: header.extensions.1 = ext
            case 2: header.extensions.2 = ext
            case 3: header.extensions.3 = ext
            default: break
            }
            header.extensionCount += 1
            header.protocolNumber = bytes[offset]
            offset += ext.length
            header.extensionsLength += ext.length
            if type == 44 && header.fragment!.offset != 0 { break walk }
        }
        packet.network = .ipv6(header)
        if let fragment = header.fragment, fragment.offset != 0 {
            packet.transport = .fragment(protocolNumber: header.protocolNumber)
            return nil
        }
        let ipPayload = min(header.payloadLength, max(wireLength - 40, 0))
        guard ipPayload >= header.extensionsLength else {
            throw DecodingError(layer: .ipv6, kind: .malformed("payload length \(header.payloadLength) shorter than its extension headers"),
                                offset: start, needed: header.extensionsLength, actual: header.payloadLength)
        }
        return UpperLayer(protocolNumber: header.protocolNumber, start: offset,
                          length: ipPayload - header.extensionsLength, source: header.source,
                          destination: header.destination)
    }

    // MARK: Transport layer

    /// `length` is the upper-layer length per the IP header; the captured bytes may be fewer.
    func decodeTransport(_ bytes: UnsafeRawBufferPointer, protocolNumber: UInt8, at start: Int, length: Int,
                                 source: IPAddress, destination: IPAddress,
                                 into packet: inout DecodedPacket) throws(DecodingError) {
        switch protocolNumber {
        case 6:
            try decodeTCP(bytes, at: start, length: length, source: source, destination: destination, into: &packet)
        case 17:
            if bytes.count >= start + 4 && bytes.count < start + 8 {
                packet.transport = .cutUDP(CutTransportHeader(
                    source: Endpoint(address: source, port: bytes.u16(start)),
                    destination: Endpoint(address: destination, port: bytes.u16(start + 2)), fixedTCPHeader: nil))
            }
            try need(bytes, start + 8, layer: .udp, at: start)
            let udpLength = Int(bytes.u16(start + 4))
            let payloadLength = max(min(udpLength, length) - 8, 0)
            packet.transport = .udp(UDPDatagram(
                source: Endpoint(address: source, port: bytes.u16(start)),
                destination: Endpoint(address: destination, port: bytes.u16(start + 2)),
                length: udpLength, payload: bytes.slice(start + 8, start + 8 + payloadLength),
                payloadLength: payloadLength))
        case 1, 58:
            try need(bytes, start + 8, layer: protocolNumber == 1 ? .icmp : .icmpv6, at: start)
            var message = ICMPMessage(type: bytes[start], code: bytes[start + 1], restOfHeader: bytes.u32(start + 4),
                                      body: bytes.slice(start + 8, start + max(length, 8)), length: length)
            if protocolNumber == 1 {
                message.quote = Self.quotedIPv4Header(message.body)
            } else if message.type == 135 || message.type == 136, message.body.count >= 16 {
                message.target = .v6(high: message.body.u64(0), low: message.body.u64(8))
            }
            packet.transport = protocolNumber == 1 ? .icmp(message) : .icmpv6(message)
        default:
            packet.transport = .other(protocolNumber: protocolNumber)
        }
    }

    /// TCP, or as much of its header as was captured (`.cutTCP`, with the error saying what was missing).
    private func decodeTCP(_ bytes: UnsafeRawBufferPointer, at start: Int, length: Int, source: IPAddress,
                           destination: IPAddress, into packet: inout DecodedPacket) throws(DecodingError) {
        let available = bytes.count - start
        if available >= 4 {
            var cut = CutTransportHeader(source: Endpoint(address: source, port: bytes.u16(start)),
                                         destination: Endpoint(address: destination, port: bytes.u16(start + 2)),
                                         fixedTCPHeader: nil)
            if available >= 20 {
                let headerLength = Int(bytes[start + 12] >> 4) * 4
                cut.fixedTCPHeader = TCPSegment(
                    source: cut.source, destination: cut.destination, sequenceNumber: bytes.u32(start + 4),
                    acknowledgmentNumber: bytes.u32(start + 8), flags: TCPFlags(rawValue: bytes[start + 13]),
                    window: bytes.u16(start + 14), urgentPointer: bytes.u16(start + 18), headerLength: headerLength,
                    options: bytes.slice(start + 20, start + max(headerLength, 20)), payload: bytes.slice(0, 0),
                    payloadLength: max(length - headerLength, 0))
            }
            packet.transport = .cutTCP(cut)
        }
        try need(bytes, start + 20, layer: .tcp, at: start)
        let headerLength = Int(bytes[start + 12] >> 4) * 4
        guard headerLength >= 20 else {
            throw DecodingError(layer: .tcp, kind: .malformed("data offset \(headerLength) below 20"),
                                offset: start, needed: 20, actual: headerLength)
        }
        try need(bytes, start + headerLength, layer: .tcp, at: start)
        let payloadLength = max(length - headerLength, 0)
        let payloadEnd = min(start + headerLength + payloadLength, bytes.count)
        packet.transport = .tcp(TCPSegment(
            source: Endpoint(address: source, port: bytes.u16(start)),
            destination: Endpoint(address: destination, port: bytes.u16(start + 2)),
            sequenceNumber: bytes.u32(start + 4), acknowledgmentNumber: bytes.u32(start + 8),
            flags: TCPFlags(rawValue: bytes[start + 13]), window: bytes.u16(start + 14),
            urgentPointer: bytes.u16(start + 18), headerLength: headerLength,
            options: bytes.slice(start + 20, start + headerLength),
            payload: bytes.slice(start + headerLength, payloadEnd), payloadLength: payloadLength))
        if headerLength > length {
            throw DecodingError(layer: .tcp, kind: .malformed("header length \(headerLength) exceeds segment length \(length)"),
                                offset: start, needed: headerLength, actual: length)
        }
    }

    /// The IPv4 header an ICMP error quotes (RFC 792: the header plus at least 8 bytes of the datagram).
    static func quotedIPv4Header(_ body: UnsafeRawBufferPointer) -> ICMPQuote? {
        guard body.count >= 20, body[0] >> 4 == 4 else { return nil }
        let headerLength = Int(body[0] & 0x0f) * 4
        var quote = ICMPQuote(source: .v4(body.u32(12)), destination: .v4(body.u32(16)), protocolNumber: body[9])
        if headerLength >= 20, body.count >= headerLength + 4 {
            quote.sourcePort = body.u16(headerLength)
            quote.destinationPort = body.u16(headerLength + 2)
        }
        return quote
    }

    @inline(__always)
    func need(_ bytes: UnsafeRawBufferPointer, _ end: Int, layer: Layer, at offset: Int) throws(DecodingError) {
        if bytes.count < end {
            throw DecodingError(layer: layer, kind: .truncated, offset: offset, needed: end - offset,
                                actual: max(bytes.count - offset, 0))
        }
    }
}
