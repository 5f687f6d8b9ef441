import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

extension PacketLineRenderer {
    /// tcpdump prints the interface name and direction of Linux cooked v2 captures even without `-e`.
    mutating func appendInterfacePrefix(index: UInt32, packetType: UInt16, to output: inout TextOutput) {
        let name: String
        if let known = interfaceNames[index] {
            name = known
        } else {
            var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            if if_indextoname(index, &buffer) != nil {
                name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            } else {
                name = "?"
            }
            // A file can name any of 2^32 indexes: keep the cache small (a host has a few dozen interfaces).
            if interfaceNames.count >= Self.maxCachedInterfaceNames { interfaceNames.removeAll(keepingCapacity: true) }
            interfaceNames[index] = name
        }
        output.append(name)
        for _ in name.utf8.count..<max(name.utf8.count, 5) { output.append(UInt8(ascii: " ")) }
        output.append(UInt8(ascii: " "))
        let direction: StaticString
        switch packetType {
        case 0: direction = "In  "
        case 1: direction = "B   "
        case 2: direction = "M   "
        case 3: direction = "P   "
        case 4: direction = "Out "
        default: direction = "?   "
        }
        output.append(direction)
    }

    func appendEtherTypeName(_ etherType: UInt16, to output: inout TextOutput) {
        switch etherType {
        case 0x88cc: output.append("LLDP")
        case 0x8035: output.append("RARP")
        default:
            output.append("Unknown (0x")
            output.append(hexByte: UInt8(etherType >> 8))
            output.append(hexByte: UInt8(etherType & 0xff))
            output.append(")")
        }
    }
}

/// `-e`: the link-level header, as tcpdump's print-ether.c, print-sll.c, print-raw.c, print-null.c and
/// print-nflog.c print it. With `-e` the network printers leave out their own `IP `/`IP6 `/`ARP, ` prefix.
extension PacketLineRenderer {
    mutating func appendLinkHeader(_ packet: DecodedPacket, to output: inout TextOutput) {
        let link = packet.link
        // A link header the capture cut: what was read before the cut (tcpdump prints nothing for a cut fixed part).
        let cut = packet.error.map { $0.layer == .link || $0.layer == .vlan } ?? false
        if cut && link.length == 0 { return }
        switch link.kind {
        case .ethernet:
            if let source = link.source, let destination = link.destination {
                output.append(source)
                output.append(" > ")
                output.append(destination)
                output.append(", ")
            }
            if cut && link.vlanTagCount == 0 { return }
            appendEtherTypeWithValue(link.linkEtherType, to: &output)
            output.append(", length ")
            output.append(decimal: packet.originalLength)
            output.append(": ")
            for index in 0..<min(link.vlanTagCount, 2) {
                let tag = index == 0 ? link.vlanTags.0 : link.vlanTags.1
                output.append("vlan ")
                output.append(decimal: tag.id)
                output.append(", p ")
                output.append(decimal: tag.priority)
                if tag.dropEligible { output.append(", DEI") }
                output.append(", ")
                if cut && index + 1 == link.vlanTagCount { break }  // the next tag is the one cut
                let next = index + 1 < link.vlanTagCount ? (index == 0 ? link.vlanTags.1.tagProtocol : link.etherType)
                    : link.etherType
                appendEtherTypeWithValue(next, to: &output)
                output.append(", ")
            }
        case .linuxCooked:
            let type = Self.packetTypeName(link.packetType ?? 0)
            for _ in 0..<max(0, 3 - type.utf8CodeUnitCount) { output.append(UInt8(ascii: " ")) }
            output.append(type)
            output.append(UInt8(ascii: " "))
            if let source = link.source {
                output.append(source)
                output.append(UInt8(ascii: " "))
            }
            if !options.quiet {  // tcpdump's sll_print leaves type and length out with -q
                appendEtherTypeWithValue(link.linkEtherType, to: &output)
                output.append(", length ")
                output.append(decimal: packet.originalLength)
                output.append(": ")
            }
        case .linuxCooked2:
            output.append("ifindex ")
            output.append(decimal: link.interfaceIndex ?? 0)
            output.append(UInt8(ascii: " "))
            if let source = link.source {
                output.append(source)
                output.append(UInt8(ascii: " "))
            }
            if !options.quiet {
                appendEtherTypeWithValue(link.linkEtherType, to: &output)
                output.append(", length ")
                output.append(decimal: packet.originalLength)
                output.append(": ")
            }
        case .rawIP, .ethernetCarryingIP:
            output.append("ip: ")
        case .loopback:
            output.append("AF ")
            switch link.addressFamily {
            case 2: output.append("IPv4")
            case 24, 28, 30: output.append("IPv6")
            default: output.append("Unknown")
            }
            output.append(" (")
            output.append(decimal: link.addressFamily)
            output.append(")")
            output.append(", length ")
            output.append(decimal: packet.originalLength)
            output.append(": ")
        case .ppp:
            // print-ppp.c: the direction pppd recorded, the protocol's name and number, the frame's length.
            switch link.packetType {
            case 0?: output.append("In  ")
            case 4?: output.append("Out ")
            default: break
            }
            let name = Self.pppProtocolName(link.pppProtocol)
            output.append(name ?? "unknown")
            output.append(" (0x")
            output.append(hexByte: UInt8(link.pppProtocol >> 8))
            output.append(hexByte: UInt8(link.pppProtocol & 0xff))
            output.append("), length ")
            output.append(decimal: packet.originalLength)
            if name != nil { output.append(": ") }
        case .ciscoHDLC:
            // print-chdlc.c: the address byte's meaning, the type with its name and number (-q keeps them), the length.
            switch link.hdlcAddress {
            case 0x0f: output.append("unicast")
            case 0x8f: output.append("bcast")
            default:
                output.append("0x")
                output.append(hexByte: link.hdlcAddress)
            }
            output.append(", ")
            appendEtherTypeWithValue(link.linkEtherType, short: false, to: &output)
            output.append(", length ")
            output.append(decimal: packet.originalLength)
            output.append(": ")
        case .nflog:
            output.append("version ")
            output.append(decimal: link.nflogVersion)
            output.append(", resource ID ")
            output.append(decimal: link.nflogResourceID)
            output.append(options.quiet ? ", " : ", family ")
            switch link.nflogFamily {
            case 2: output.append("IPv4")
            case 10: output.append("IPv6")
            default: output.append("Unknown")
            }
            if !options.quiet {
                output.append(" (")
                output.append(decimal: link.nflogFamily)
                output.append(")")
            }
            output.append(", length ")
            output.append(decimal: packet.originalLength)
            output.append(": ")
        }
    }

    /// tcpdump's names for PPP protocol numbers (ppptype2str), for those a PPP link commonly carries.
    static func pppProtocolName(_ value: UInt16) -> StaticString? {
        switch value {
        case 0x0021: "IP"
        case 0x0057: "IP6"
        case 0x002d: "VJC"
        case 0x002f: "VJNC"
        case 0x8021: "IPCP"
        case 0x8057: "IP6CP"
        case 0x80fd: "CCP"
        case 0xc021: "LCP"
        case 0xc023: "PAP"
        case 0xc223: "CHAP"
        default: nil
        }
    }

    static func packetTypeName(_ type: UInt16) -> StaticString {
        switch type {
        case 0: "In"
        case 1: "B"
        case 2: "M"
        case 3: "P"
        case 4: "Out"
        default: "?"
        }
    }

    /// `ethertype IPv4 (0x0800)`, with tcpdump's names.
    /// With -q just the name, as tcpdump prints it.
    func appendEtherTypeWithValue(_ etherType: UInt16, to output: inout TextOutput) {
        appendEtherTypeWithValue(etherType, short: options.quiet, to: &output)
    }

    /// `short`: the name alone (Ethernet and cooked headers with -q); Cisco HDLC's printer ignores -q.
    func appendEtherTypeWithValue(_ etherType: UInt16, short: Bool, to output: inout TextOutput) {
        if !short { output.append("ethertype ") }
        switch etherType {
        case 0x0800: output.append("IPv4")
        case 0x86dd: output.append("IPv6")
        case 0x0806: output.append("ARP")
        case 0x8035: output.append("Reverse ARP")
        case 0x8100: output.append("802.1Q")
        case 0x88a8: output.append("802.1Q-QinQ")
        case 0x9100: output.append("802.1Q-9100")
        case 0x9000: output.append("Loopback")
        case 0x88cc: output.append("LLDP")
        case 0x8863: output.append("PPPoE D")
        case 0x8864: output.append("PPPoE S")
        case 0x8847: output.append("MPLS unicast")
        case 0x8848: output.append("MPLS multicast")
        default: output.append("Unknown")
        }
        if short { return }
        output.append(" (0x")
        output.append(hexByte: UInt8(etherType >> 8))
        output.append(hexByte: UInt8(etherType & 0xff))
        output.append(")")
    }
}
