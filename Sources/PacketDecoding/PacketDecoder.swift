/// Decodes captured frames of one link type into `DecodedPacket` values. A value type with no per-packet
/// allocation: every header is length-checked once, then read in place.
public struct PacketDecoder: Sendable {
    public let linkType: LinkType

    public struct UnsupportedLinkType: Error, Sendable, CustomStringConvertible {
        public var linkType: LinkType
        public var description: String {
            "unsupported link type \(linkType.name) (\(linkType.rawValue)); supported: EN10MB, LINUX_SLL, "
                + "LINUX_SLL2, RAW (12, 14, 101), IPV4, IPV6, NULL, LOOP, NFLOG"
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
            packet.link = try decodeLink(bytes, originalLength: originalLength)
            try decodeNetwork(bytes, into: &packet)
        } catch {
            packet.error = error
        }
        return packet
    }

    // MARK: Link layer

    private func decodeLink(_ bytes: UnsafeRawBufferPointer, originalLength: Int) throws(DecodingError) -> LinkHeader {
        switch linkType {
        case .ethernet:
            if let carried = Self.ipHeaderAtStart(bytes, originalLength: originalLength) {
                return LinkHeader(kind: .ethernetCarryingIP, length: 0, etherType: carried)
            }
            return try decodeEthernet(bytes)
        case .linuxSLL:
            try need(bytes, 16, layer: .link, at: 0)
            var header = LinkHeader(kind: .linuxCooked, length: 16, etherType: bytes.u16(14))
            header.packetType = bytes.u16(0)
            if bytes.u16(2) == 1 && bytes.u16(4) == 6 {
                header.source = MACAddress(rawValue: bytes.u64(6) >> 16)
            }
            return try skipVLANTags(bytes, header: header)
        case .linuxSLL2:
            try need(bytes, 20, layer: .link, at: 0)
            var header = LinkHeader(kind: .linuxCooked2, length: 20, etherType: bytes.u16(0))
            header.interfaceIndex = bytes.u32(4)
            header.packetType = UInt16(bytes[10])
            if bytes.u16(8) == 1 && bytes[11] == 6 {
                header.source = MACAddress(rawValue: bytes.u64(12) >> 16)
            }
            return try skipVLANTags(bytes, header: header)
        case .raw, .rawDLT12, .rawDLT14:
            try need(bytes, 1, layer: .link, at: 0)
            let version = bytes[0] >> 4
            guard version == 4 || version == 6 else {
                throw DecodingError(layer: .link, kind: .malformed("raw IP packet with IP version \(version)"),
                                    offset: 0, needed: 1, actual: bytes.count)
            }
            return LinkHeader(kind: .rawIP, length: 0, etherType: version == 4 ? 0x0800 : 0x86dd)
        case .ipv4:
            return LinkHeader(kind: .rawIP, length: 0, etherType: 0x0800)
        case .ipv6:
            return LinkHeader(kind: .rawIP, length: 0, etherType: 0x86dd)
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
            return LinkHeader(kind: .loopback, length: 4, etherType: etherType)
        case .nflog:
            return try decodeNFLOG(bytes)
        default:
            throw DecodingError(layer: .link, kind: .malformed("unsupported link type \(linkType.name)"),
                                offset: 0, needed: 0, actual: bytes.count)
        }
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

    private func decodeEthernet(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> LinkHeader {
        try need(bytes, 14, layer: .link, at: 0)
        var header = LinkHeader(kind: .ethernet, length: 14, etherType: bytes.u16(12))
        header.destination = MACAddress(rawValue: bytes.u64(0) >> 16)
        header.source = MACAddress(rawValue: UInt64(bytes.u16(6)) << 32 | UInt64(bytes.u32(8)))
        return try skipVLANTags(bytes, header: header)
    }

    /// Steps over 802.1Q (0x8100), 802.1ad (0x88a8) and old QinQ (0x9100) tags.
    private func skipVLANTags(_ bytes: UnsafeRawBufferPointer, header: LinkHeader) throws(DecodingError) -> LinkHeader {
        var header = header
        while header.etherType == 0x8100 || header.etherType == 0x88a8 || header.etherType == 0x9100 {
            try need(bytes, header.length + 4, layer: .vlan, at: header.length)
            let vlanID = bytes.u16(header.length) & 0x0fff
            if header.vlanTagCount == 0 { header.vlanIDs.0 = vlanID } else if header.vlanTagCount == 1 { header.vlanIDs.1 = vlanID }
            header.vlanTagCount += 1
            header.etherType = bytes.u16(header.length + 2)
            header.length += 4
        }
        return header
    }

    private func decodeNFLOG(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> LinkHeader {
        try need(bytes, 4, layer: .link, at: 0)
        let family = bytes[0]
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
                let etherType: UInt16 = family == 2 ? 0x0800 : family == 10 ? 0x86dd : 0
                return LinkHeader(kind: .nflog, length: offset + 4, etherType: etherType)
            }
            offset += (length + 3) & ~3
        }
        throw DecodingError(layer: .link, kind: .truncated, offset: offset, needed: offset + 4, actual: bytes.count)
    }

    // MARK: Network layer

    private func decodeNetwork(_ bytes: UnsafeRawBufferPointer, into packet: inout DecodedPacket) throws(DecodingError) {
        let start = packet.link.length
        // Bytes the IP layer had on the wire, per the frame length.
        let wireLength = packet.originalLength - start
        switch packet.link.etherType {
        case 0x0800: try decodeIPv4(bytes, at: start, wireLength: wireLength, into: &packet)
        case 0x86dd: try decodeIPv6(bytes, at: start, wireLength: wireLength, into: &packet)
        case 0x0806: try decodeARP(bytes, at: start, into: &packet)
        default: packet.network = .other(etherType: packet.link.etherType)
        }
    }

    private func decodeARP(_ bytes: UnsafeRawBufferPointer, at start: Int, into packet: inout DecodedPacket) throws(DecodingError) {
        try need(bytes, start + 8, layer: .arp, at: start)
        guard bytes.u16(start) == 1, bytes.u16(start + 2) == 0x0800, bytes[start + 4] == 6, bytes[start + 5] == 4 else {
            packet.network = .other(etherType: 0x0806)
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
                            into packet: inout DecodedPacket) throws(DecodingError) {
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
            timeToLive: bytes[start + 8], protocolNumber: bytes[start + 9])
        packet.network = .ipv4(header)
        guard header.totalLength >= headerLength else {
            throw DecodingError(layer: .ipv4, kind: .malformed("total length \(header.totalLength) below header length"),
                                offset: start, needed: headerLength, actual: header.totalLength)
        }
        if header.fragmentOffset != 0 {
            packet.transport = .fragment(protocolNumber: header.protocolNumber)
            return
        }
        // Frames are often padded beyond the IP length; TSO captures may claim more than the frame has.
        let ipLength = min(header.totalLength, max(wireLength, headerLength))
        try decodeTransport(bytes, protocolNumber: header.protocolNumber, at: start + headerLength,
                            length: ipLength - headerLength, source: header.source, destination: header.destination,
                            into: &packet)
    }

    private func decodeIPv6(_ bytes: UnsafeRawBufferPointer, at start: Int, wireLength: Int,
                            into packet: inout DecodedPacket) throws(DecodingError) {
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
            return
        }
        let ipPayload = min(header.payloadLength, max(wireLength - 40, 0))
        guard ipPayload >= header.extensionsLength else {
            throw DecodingError(layer: .ipv6, kind: .malformed("payload length \(header.payloadLength) shorter than its extension headers"),
                                offset: start, needed: header.extensionsLength, actual: header.payloadLength)
        }
        try decodeTransport(bytes, protocolNumber: header.protocolNumber, at: offset,
                            length: ipPayload - header.extensionsLength, source: header.source,
                            destination: header.destination, into: &packet)
    }

    // MARK: Transport layer

    /// `length` is the upper-layer length per the IP header; the captured bytes may be fewer.
    private func decodeTransport(_ bytes: UnsafeRawBufferPointer, protocolNumber: UInt8, at start: Int, length: Int,
                                 source: IPAddress, destination: IPAddress,
                                 into packet: inout DecodedPacket) throws(DecodingError) {
        switch protocolNumber {
        case 6:
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
        case 17:
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
            let message = ICMPMessage(type: bytes[start], code: bytes[start + 1], restOfHeader: bytes.u32(start + 4),
                                      body: bytes.slice(start + 8, start + max(length, 8)), length: length)
            packet.transport = protocolNumber == 1 ? .icmp(message) : .icmpv6(message)
        default:
            packet.transport = .other(protocolNumber: protocolNumber)
        }
    }

    @inline(__always)
    private func need(_ bytes: UnsafeRawBufferPointer, _ end: Int, layer: Layer, at offset: Int) throws(DecodingError) {
        if bytes.count < end {
            throw DecodingError(layer: layer, kind: .truncated, offset: offset, needed: end - offset,
                                actual: max(bytes.count - offset, 0))
        }
    }
}
