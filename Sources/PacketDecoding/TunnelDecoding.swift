/// Tunnel and encapsulation headers: each decoder checks its header's length once with `need()`, records the layer
/// in `packet.encapsulation`, and says where the carried packet starts. Nothing here loops without a bound: label
/// stacks, VLAN tags and GRE routing entries advance by at least four bytes per step, and nesting is capped by
/// `Encapsulations.capacity`.

/// Where decoding continues: the carried packet's EtherType-style type, its first byte, and where it ends on the wire.
struct InnerPacket {
    var etherType: UInt16
    var start: Int
    var wireEnd: Int
}

/// An IP packet's payload, as its header describes it.
struct UpperLayer {
    var protocolNumber: UInt8
    var start: Int
    /// Payload bytes per the IP length fields (clipped to the frame's wire length).
    var length: Int
    var source: IPAddress
    var destination: IPAddress
}

/// UDP ports that carry tunnels, as tcpdump recognises them (either end).
enum TunnelPorts {
    static let vxlan: UInt16 = 4789
    /// Linux's default VXLAN port (flannel); tcpdump names traffic on it OTV (RFC draft, same header).
    static let linuxVXLAN: UInt16 = 8472
    static let geneve: UInt16 = 6081
}

extension PacketDecoder {
    /// What follows an IP header: a tunnel (IP-in-IP, IPv6-in-IP, GRE, or VXLAN/Geneve over UDP) or a transport.
    func decodeUpperLayer(_ bytes: UnsafeRawBufferPointer, _ upper: UpperLayer,
                          into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        switch upper.protocolNumber {
        case 4, 41:
            packet.transport = .other(protocolNumber: upper.protocolNumber)
            try pushDeliveryHeader(bytes, at: upper.start, into: &packet)
            return InnerPacket(etherType: upper.protocolNumber == 4 ? 0x0800 : 0x86dd, start: upper.start,
                               wireEnd: upper.start + upper.length)
        case 47:
            packet.transport = .other(protocolNumber: 47)
            return try decodeGRE(bytes, upper, into: &packet)
        default:
            try decodeTransport(bytes, protocolNumber: upper.protocolNumber, at: upper.start, length: upper.length,
                                source: upper.source, destination: upper.destination, into: &packet)
            guard case .udp(let datagram) = packet.transport else { return nil }
            return try decodeUDPTunnel(bytes, datagram, at: upper.start, into: &packet)
        }
    }

    /// Moves the IP header just decoded from `packet.network` to the outer layers, before its payload is decoded.
    private func pushDeliveryHeader(_ bytes: UnsafeRawBufferPointer, at offset: Int,
                                    into packet: inout DecodedPacket) throws(DecodingError) {
        switch packet.network {
        case .ipv4(let header): try push(.ipv4(DeliveryIPHeader(header)), bytes, at: offset, into: &packet)
        case .ipv6(let header): try push(.ipv6(DeliveryIPHeader(header)), bytes, at: offset, into: &packet)
        default: break
        }
        packet.network = .none
        packet.transport = .none
    }

    private func push(_ layer: EncapsulationLayer, _ bytes: UnsafeRawBufferPointer, at offset: Int,
                      into packet: inout DecodedPacket) throws(DecodingError) {
        guard packet.encapsulation.append(layer) else {
            throw DecodingError(layer: .encapsulation, kind: .malformed(
                "more than \(Encapsulations.capacity) nested encapsulation layers; the rest is not decoded"),
                offset: offset, needed: 0, actual: max(bytes.count - offset, 0))
        }
    }

    // MARK: GRE and ERSPAN

    private func decodeGRE(_ bytes: UnsafeRawBufferPointer, _ upper: UpperLayer,
                           into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        let start = upper.start
        try need(bytes, start + 4, layer: .gre, at: start)
        var header = GREHeader(flagsAndVersion: bytes.u16(start), protocolType: bytes.u16(start + 2),
                               headerLength: 4, length: upper.length)
        var offset = start + 4
        switch header.version {
        case 0:
            if header.hasChecksum || header.hasRouting {
                try need(bytes, offset + 4, layer: .gre, at: start)
                header.checksum = bytes.u16(offset)
                header.offset = bytes.u16(offset + 2)
                offset += 4
            }
            if header.hasKey {
                try need(bytes, offset + 4, layer: .gre, at: start)
                header.key = bytes.u32(offset)
                offset += 4
            }
            if header.hasSequence {
                try need(bytes, offset + 4, layer: .gre, at: start)
                header.sequence = bytes.u32(offset)
                offset += 4
            }
            if header.hasRouting {
                // Source route entries (RFC 1701), ended by one with family 0 and length 0; each is 4+ bytes.
                while true {
                    try need(bytes, offset + 4, layer: .gre, at: start)
                    let family = bytes.u16(offset), length = Int(bytes[offset + 3])
                    offset += 4 + length
                    if family == 0 && length == 0 { break }
                }
            }
        case 1:
            // PPTP's enhanced GRE: the key holds payload length and call ID; sequence and acknowledgment optional.
            guard header.hasKey else {
                throw DecodingError(layer: .gre, kind: .malformed("GRE version 1 without its key field"),
                                    offset: start, needed: 8, actual: max(bytes.count - start, 0))
            }
            try need(bytes, offset + 4, layer: .gre, at: start)
            header.key = bytes.u32(offset)
            offset += 4
            if header.hasSequence {
                try need(bytes, offset + 4, layer: .gre, at: start)
                header.sequence = bytes.u32(offset)
                offset += 4
            }
            if header.hasAcknowledgment {
                try need(bytes, offset + 4, layer: .gre, at: start)
                header.acknowledgment = bytes.u32(offset)
                offset += 4
            }
        default:
            // Unknown version: shown as GRE, not looked into.
            try pushDeliveryHeader(bytes, at: start, into: &packet)
            header.headerLength = 4
            try push(.gre(header), bytes, at: start, into: &packet)
            packet.network = .other(etherType: 0)
            return nil
        }
        try need(bytes, offset, layer: .gre, at: start)
        header.headerLength = offset - start
        let wireEnd = start + max(upper.length, header.headerLength)
        try pushDeliveryHeader(bytes, at: start, into: &packet)
        try push(.gre(header), bytes, at: start, into: &packet)
        switch header.protocolType {
        case 0x88be, 0x22eb:
            return try decodeERSPAN(bytes, at: offset, gre: header, wireEnd: wireEnd, into: &packet)
        case 0x880b where header.version == 1:
            return try decodePPPInGRE(bytes, at: offset, wireEnd: wireEnd, into: &packet)
        default:
            return InnerPacket(etherType: header.protocolType, start: offset, wireEnd: wireEnd)
        }
    }

    /// ERSPAN type II (GRE 0x88be with a sequence number), type III (0x22eb), or type I (0x88be without one: the
    /// mirrored frame follows GRE directly).
    private func decodeERSPAN(_ bytes: UnsafeRawBufferPointer, at start: Int, gre: GREHeader, wireEnd: Int,
                              into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        if gre.protocolType == 0x88be && !gre.hasSequence {
            try push(.erspan(ERSPANHeader(type: 1, vlan: 0, classOfService: 0, encapsulationOrBSO: 0, truncated: false,
                                          sessionID: 0, indexOrTimestamp: 0, headerLength: 0)),
                     bytes, at: start, into: &packet)
            return InnerPacket(etherType: 0x6558, start: start, wireEnd: wireEnd)
        }
        let isTypeIII = gre.protocolType == 0x22eb
        try need(bytes, start + (isTypeIII ? 12 : 8), layer: .erspan, at: start)
        let first = bytes.u16(start), second = bytes.u16(start + 2)
        var header = ERSPANHeader(
            type: isTypeIII ? 3 : 2, vlan: first & 0x0fff, classOfService: UInt8(second >> 13),
            encapsulationOrBSO: UInt8((second >> 11) & 3), truncated: second & 0x0400 != 0,
            sessionID: second & 0x03ff,
            indexOrTimestamp: isTypeIII ? bytes.u32(start + 4) : bytes.u32(start + 4) & 0xfffff,
            headerLength: isTypeIII ? 12 : 8)
        if isTypeIII {
            let flags = bytes.u16(start + 10)
            header.securityGroupTag = bytes.u16(start + 8)
            header.frameType = UInt8((flags >> 10) & 0x1f)
            header.hardwareID = UInt8((flags >> 4) & 0x3f)
            header.egress = flags & 0x0008 != 0
            header.granularity = UInt8((flags >> 1) & 3)
            header.hasPlatformSubheader = flags & 1 != 0
            if header.hasPlatformSubheader {
                try need(bytes, start + 20, layer: .erspan, at: start)
                header.headerLength = 20
            }
        }
        try push(.erspan(header), bytes, at: start, into: &packet)
        return InnerPacket(etherType: 0x6558, start: start + header.headerLength, wireEnd: wireEnd)
    }

    /// PPP inside PPTP's GRE: optional address and control bytes (0xff 0x03), then a one- or two-byte protocol.
    private func decodePPPInGRE(_ bytes: UnsafeRawBufferPointer, at start: Int, wireEnd: Int,
                                into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        var offset = start
        try need(bytes, offset + 2, layer: .gre, at: start)
        if bytes[offset] == 0xff && bytes[offset + 1] == 0x03 { offset += 2 }
        let field = try readPPPProtocol(bytes, at: offset, layer: .gre, headerStart: start)
        offset += field.length
        switch field.value {
        case 0x0021: return InnerPacket(etherType: 0x0800, start: offset, wireEnd: wireEnd)
        case 0x0057: return InnerPacket(etherType: 0x86dd, start: offset, wireEnd: wireEnd)
        default:
            packet.network = .other(etherType: 0x880b)
            return nil
        }
    }

    // MARK: VXLAN and Geneve

    private func decodeUDPTunnel(_ bytes: UnsafeRawBufferPointer, _ datagram: UDPDatagram, at start: Int,
                                 into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        func uses(_ port: UInt16) -> Bool { datagram.source.port == port || datagram.destination.port == port }
        let payload = start + 8
        let wireEnd = payload + datagram.payloadLength
        let udp = TunnelUDPHeader(sourcePort: datagram.source.port, destinationPort: datagram.destination.port,
                                  length: datagram.length)
        if uses(TunnelPorts.vxlan) || uses(TunnelPorts.linuxVXLAN) {
            try need(bytes, payload + 8, layer: .vxlan, at: payload)
            let vxlan = VXLANHeader(flags: bytes[payload], reserved: bytes.u32(payload) & 0xffffff,
                                    networkIdentifier: bytes.u32(payload + 4) >> 8,
                                    port: uses(TunnelPorts.vxlan) ? TunnelPorts.vxlan : TunnelPorts.linuxVXLAN)
            try pushDeliveryHeader(bytes, at: start, into: &packet)
            try push(.udp(udp), bytes, at: start, into: &packet)
            try push(.vxlan(vxlan), bytes, at: payload, into: &packet)
            return InnerPacket(etherType: 0x6558, start: payload + 8, wireEnd: max(wireEnd, payload + 8))
        }
        if uses(TunnelPorts.geneve) {
            try need(bytes, payload + 8, layer: .geneve, at: payload)
            let geneve = GeneveHeader(
                version: bytes[payload] >> 6, optionsLength: Int(bytes[payload] & 0x3f) * 4,
                controlPacket: bytes[payload + 1] & 0x80 != 0, criticalOptions: bytes[payload + 1] & 0x40 != 0,
                protocolType: bytes.u16(payload + 2), networkIdentifier: bytes.u32(payload + 4) >> 8,
                reserved: bytes[payload + 7])
            // Only version 0 is defined; anything else is shown as plain UDP.
            guard geneve.version == 0 else { return nil }
            try need(bytes, payload + geneve.headerLength, layer: .geneve, at: payload)
            try pushDeliveryHeader(bytes, at: start, into: &packet)
            try push(.udp(udp), bytes, at: start, into: &packet)
            try push(.geneve(geneve), bytes, at: payload, into: &packet)
            let inner = payload + geneve.headerLength
            return InnerPacket(etherType: geneve.protocolType, start: inner, wireEnd: max(wireEnd, inner))
        }
        return nil
    }

    // MARK: Ethernet inside a tunnel

    func decodeInnerEthernet(_ bytes: UnsafeRawBufferPointer, at start: Int, wireEnd: Int,
                             into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        try need(bytes, start + 14, layer: .innerEthernet, at: start)
        var header = InnerEthernetHeader(
            source: MACAddress(rawValue: UInt64(bytes.u16(start + 6)) << 32 | UInt64(bytes.u32(start + 8))),
            destination: MACAddress(rawValue: bytes.u64(start) >> 16), etherType: bytes.u16(start + 12),
            vlanTagCount: 0, length: 14, frameLength: max(wireEnd - start, 14))
        while header.etherType == 0x8100 || header.etherType == 0x88a8 || header.etherType == 0x9100 {
            try need(bytes, start + header.length + 4, layer: .vlan, at: start + header.length)
            header.etherType = bytes.u16(start + header.length + 2)
            header.length += 4
            header.vlanTagCount += 1
        }
        try push(.ethernet(header), bytes, at: start, into: &packet)
        return InnerPacket(etherType: header.etherType, start: start + header.length,
                           wireEnd: max(wireEnd, start + header.length))
    }

    // MARK: MPLS

    func decodeMPLS(_ bytes: UnsafeRawBufferPointer, at start: Int, wireEnd: Int,
                    into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        var offset = start
        var last: MPLSLabel
        repeat {
            try need(bytes, offset + 4, layer: .mpls, at: offset)
            let entry = bytes.u32(offset)
            last = MPLSLabel(label: entry >> 12, trafficClass: UInt8((entry >> 9) & 7),
                             bottomOfStack: entry & 0x100 != 0, timeToLive: UInt8(entry & 0xff))
            try push(.mpls(last), bytes, at: offset, into: &packet)
            offset += 4
        } while !last.bottomOfStack
        // Nothing says what is under the stack; like tcpdump, trust the reserved labels, else the first nibble.
        let end = max(wireEnd, offset)
        switch last.label {
        case 0, 3: return InnerPacket(etherType: 0x0800, start: offset, wireEnd: end)
        case 2: return InnerPacket(etherType: 0x86dd, start: offset, wireEnd: end)
        default:
            try need(bytes, offset + 1, layer: .mpls, at: offset)
            switch bytes[offset] {
            case 0x45...0x4f: return InnerPacket(etherType: 0x0800, start: offset, wireEnd: end)
            case 0x60...0x6f: return InnerPacket(etherType: 0x86dd, start: offset, wireEnd: end)
            default:
                packet.network = .other(etherType: 0x8847)
                return nil
            }
        }
    }

    // MARK: PPPoE

    /// A PPP protocol field (RFC 1661 section 2): two bytes, or one when the peers negotiated protocol-field
    /// compression (PFC, RFC 1661 section 6.5). Protocol numbers are odd in their low byte and even in their high
    /// byte, so an odd first byte is a whole, compressed protocol (`0x21` for IPv4) and the datagram follows it.
    func readPPPProtocol(_ bytes: UnsafeRawBufferPointer, at offset: Int, layer: Layer,
                                 headerStart: Int) throws(DecodingError) -> (value: UInt16, length: Int) {
        try need(bytes, offset + 1, layer: layer, at: headerStart)
        if bytes[offset] & 1 == 1 { return (UInt16(bytes[offset]), 1) }
        try need(bytes, offset + 2, layer: layer, at: headerStart)
        return (bytes.u16(offset), 2)
    }

    func decodePPPoE(_ bytes: UnsafeRawBufferPointer, etherType: UInt16, at start: Int, wireEnd: Int,
                     into packet: inout DecodedPacket) throws(DecodingError) -> InnerPacket? {
        try need(bytes, start + 6, layer: .pppoe, at: start)
        let length = Int(bytes.u16(start + 4))
        var header = PPPoEHeader(version: bytes[start] >> 4, type: bytes[start] & 0x0f, code: bytes[start + 1],
                                 sessionID: bytes.u16(start + 2), length: length, pppProtocol: 0,
                                 tags: bytes.slice(start + 6, start + 6 + length))
        if etherType == 0x8863 || header.isDiscovery {
            try push(.pppoe(header), bytes, at: start, into: &packet)
            packet.network = .other(etherType: 0x8863)
            return nil
        }
        header.tags = bytes.slice(0, 0)
        let field = try readPPPProtocol(bytes, at: start + 6, layer: .pppoe, headerStart: start)
        header.pppProtocol = field.value
        try push(.pppoe(header), bytes, at: start, into: &packet)
        let inner = start + 6 + field.length
        // The carried datagram ends where the PPPoE length says, unless the frame is shorter.
        let end = max(min(wireEnd, start + 6 + length), inner)
        switch header.pppProtocol {
        case 0x0021: return InnerPacket(etherType: 0x0800, start: inner, wireEnd: end)
        case 0x0057: return InnerPacket(etherType: 0x86dd, start: inner, wireEnd: end)
        case 0x0281: return InnerPacket(etherType: 0x8847, start: inner, wireEnd: end)
        default:
            packet.network = .other(etherType: 0x8864)
            return nil
        }
    }
}
