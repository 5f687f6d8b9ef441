import PacketDecoding

/// The outer part of a tunnelled packet's line, as `tcpdump -n` prints it: each delivery header and tunnel header in
/// order ("IP a > b: GREv0, length 88: ", "IP a.p > b.4789: VXLAN, flags [I] (0x08), vni 42\n", "MPLS (label 100, tc
/// 0, [S], ttl 64) ", "PPPoE  [ses 0x1] "), after which the ordinary network-layer printer prints the inner packet.
extension PacketLineRenderer {
    /// Appends the outer layers of `packet` and returns the packet as the network-layer printer should see it: the
    /// innermost header at `link.length`, the frame ending where the outer headers say the carried packet ends.
    /// Returns nil when the line is already complete (PPPoE discovery, a payload tcpdump does not look into, or the
    /// nesting limit); packets without outer layers come back unchanged.
    func appendEncapsulation(of packet: DecodedPacket, to output: inout TextOutput) -> DecodedPacket? {
        let layers = packet.encapsulation
        guard !layers.isEmpty else { return packet }
        var index = 0
        while index < layers.count {
            let next: EncapsulationLayer? = index + 1 < layers.count ? layers[index + 1] : nil
            switch layers[index] {
            case .ipv4(let header):
                if !options.linkHeader { output.append("IP ") }
                appendTunnelAddresses(header.source, header.destination, next: next, to: &output)
            case .ipv6(let header):
                if !options.linkHeader { output.append("IP6 ") }
                if header.extensionCount == 0 {
                    appendTunnelAddresses(header.source, header.destination, next: next, to: &output)
                } else {
                    // After extension headers tcpdump prints the addresses first and the ports (if any) alone.
                    appendTunnelAddresses(header.source, header.destination, next: nil, to: &output)
                    appendExtensionNames(header, to: &output)
                    if case .udp(let udp) = next {
                        output.append(decimal: udp.sourcePort)
                        output.append(" > ")
                        output.append(decimal: udp.destinationPort)
                        output.append(": ")
                    }
                }
            case .udp(let header):
                // With -q tcpdump does not look inside UDP: the tunnel shows as the datagram it rides in.
                if options.quiet {
                    output.append("UDP, length ")
                    output.append(decimal: max(header.length - 8, 0))
                    return nil
                }
            case .gre(let header):
                if !appendGRE(header, next: next, packet: packet, to: &output) { return nil }
            case .erspan:
                break  // not reached: the line stops at the GRE header, as tcpdump's does
            case .vxlan(let header):
                output.append(header.port == 4789 ? "VXLAN, flags [" : "OTV, flags [")
                output.append(header.flags & 0x08 != 0 ? "I" : ".")
                output.append("] (0x")
                output.append(hexByte: header.flags)
                output.append(")")
                if header.port == 4789 {
                    output.append(", vni ")
                } else {
                    output.append(", overlay ")
                    output.append(decimal: header.reserved)
                    output.append(", instance ")
                }
                output.append(decimal: header.networkIdentifier)
                output.append(10)
            case .geneve(let header):
                output.append("Geneve, Flags [")
                if !header.controlPacket && !header.criticalOptions { output.append("none") }
                if header.controlPacket { output.append("O") }
                if header.criticalOptions { output.append("C") }
                output.append("], vni 0x")
                appendHex(header.networkIdentifier, to: &output)
                if header.reserved != 0 {
                    output.append(", rsvd 0x")
                    appendHex(UInt32(header.reserved), to: &output)
                }
                if options.linkHeader { appendTunnelProtocol(header.protocolType, to: &output) }
                if header.optionsLength > 0 {
                    output.append(", options [")
                    output.append(decimal: header.optionsLength)
                    output.append(" bytes]")
                }
                output.append(": ")
                if next == nil, case .other(let type) = packet.network, type != 0x6558 {
                    output.append("geneve-proto-0x")
                    appendHex(UInt32(type), to: &output)
                    return nil
                }
            case .mpls(let label):
                if index == 0 || !Self.isMPLS(layers[index - 1]) { output.append("MPLS") }
                output.append(" (label ")
                output.append(decimal: label.label)
                output.append(", tc ")
                output.append(decimal: label.trafficClass)
                if label.bottomOfStack { output.append(", [S]") }
                output.append(", ttl ")
                output.append(decimal: label.timeToLive)
                output.append(")")
                if label.bottomOfStack {
                    // tcpdump prints nothing more for a payload it cannot identify.
                    if next == nil, case .other = packet.network { return nil }
                    output.append(" ")
                }
            case .pppoe(let header):
                if !appendPPPoE(header, packet: packet, isLast: next == nil, to: &output) { return nil }
            case .ethernet(let header):
                // tcpdump prints an inner Ethernet header only with -e.
                if options.linkHeader {
                    output.append(header.source)
                    output.append(" > ")
                    output.append(header.destination)
                    output.append(", ")
                    appendEtherTypeWithValue(header.etherType, to: &output)
                    output.append(", length ")
                    output.append(decimal: header.frameLength)
                    output.append(": ")
                }
            }
            index += 1
        }
        if let error = packet.error, error.layer == .encapsulation {
            output.append("[|encapsulation: more than ")
            output.append(decimal: Encapsulations.capacity)
            output.append(" nested layers, not decoded further]")
            return nil
        }
        var inner = packet
        inner.link.length = layers.innerOffset
        inner.originalLength = layers.innerWireEnd
        return inner
    }

    /// The extension headers of a delivery IPv6 header, as tcpdump names them without -v.
    private func appendExtensionNames(_ header: DeliveryIPHeader, to output: inout TextOutput) {
        for index in 0..<min(header.extensionCount, 4) {
            guard let ext = header.extension(at: index) else { break }
            switch ext.type {
            case 0: output.append("HBH ")
            case 60: output.append("DSTOPT ")
            case 51: output.append("AH ")
            case 43:
                output.append("RT6 (len=")
                output.append(decimal: ext.length / 8 - 1)
                output.append(", type=")
                output.append(decimal: ext.routingType)
                output.append(", segleft=")
                output.append(decimal: ext.segmentsLeft)
                output.append(") ")
            default: break
            }
        }
    }

    private static func isMPLS(_ layer: EncapsulationLayer) -> Bool {
        if case .mpls = layer { return true }
        return false
    }

    /// `a > b: `, or `a.p > b.q: ` when a UDP tunnel follows (tcpdump prints the ports with the addresses).
    private func appendTunnelAddresses(_ source: IPAddress, _ destination: IPAddress, next: EncapsulationLayer?,
                                       to output: inout TextOutput) {
        output.append(source)
        if case .udp(let udp) = next {
            output.append(UInt8(ascii: "."))
            output.append(decimal: udp.sourcePort)
        }
        output.append(" > ")
        output.append(destination)
        if case .udp(let udp) = next {
            output.append(UInt8(ascii: "."))
            output.append(decimal: udp.destinationPort)
        }
        output.append(": ")
    }

    /// tcpdump's GRE line part; false when the line ends here (version 1 without payload, unknown version or payload).
    private func appendGRE(_ header: GREHeader, next: EncapsulationLayer?, packet: DecodedPacket,
                           to output: inout TextOutput) -> Bool {
        output.append("GREv")
        output.append(decimal: header.version)
        switch header.version {
        case 0:
            if let offset = header.offset {
                output.append(", off 0x")
                appendHex(UInt32(offset), to: &output)
            }
            if let key = header.key {
                output.append(", key=0x")
                appendHex(key, to: &output)
            }
            if let sequence = header.sequence {
                output.append(", seq ")
                output.append(decimal: sequence)
            }
        case 1:
            if let key = header.key {
                output.append(", call ")
                output.append(decimal: key & 0xffff)
            }
            if let sequence = header.sequence {
                output.append(", seq ")
                output.append(decimal: sequence)
            }
            if let acknowledgment = header.acknowledgment {
                output.append(", ack ")
                output.append(decimal: acknowledgment)
            }
            if header.sequence == nil { output.append(", no-payload") }
        default:
            output.append(" ERROR: unknown-version")
            return false
        }
        if options.linkHeader { appendTunnelProtocol(header.protocolType, to: &output) }
        output.append(", length ")
        output.append(decimal: header.length)
        if header.version == 1 && header.sequence == nil { return false }
        output.append(": ")
        // tcpdump 4.99 does not decode ERSPAN either: the line stops at the GRE header (JSON and --http go inside).
        let erspan = header.protocolType == 0x88be || header.protocolType == 0x22eb
        if erspan || next == nil, erspan || packet.network.isOther, header.protocolType != 0x880b {
            output.append("gre-proto-0x")
            appendHex(UInt32(header.protocolType), to: &output)
            return false
        }
        return true
    }

    /// tcpdump's PPPoE part; false when the line ends here (discovery, or a PPP protocol that is not IP).
    private func appendPPPoE(_ header: PPPoEHeader, packet: DecodedPacket, isLast: Bool,
                             to output: inout TextOutput) -> Bool {
        output.append("PPPoE ")
        switch header.code {
        case 0x00: break
        case 0x09: output.append("PADI")
        case 0x07: output.append("PADO")
        case 0x19: output.append("PADR")
        case 0x65: output.append("PADS")
        case 0xa7: output.append("PADT")
        default:
            output.append("PAD-")
            appendHex(UInt32(header.code), to: &output)
        }
        if header.version != 1 {
            output.append(" [ver ")
            output.append(decimal: header.version)
            output.append("]")
        }
        if header.type != 1 {
            output.append(" [type ")
            output.append(decimal: header.type)
            output.append("]")
        }
        if header.sessionID != 0 {
            output.append(" [ses 0x")
            appendHex(UInt32(header.sessionID), to: &output)
            output.append("]")
        }
        if header.isDiscovery {
            appendPPPoETags(header.tags, declaredLength: header.length, to: &output)
            return false
        }
        output.append(" ")
        if options.linkHeader {
            // -e: tcpdump's PPP printer names the protocol and the length first.
            switch header.pppProtocol {
            case 0x0021: output.append("IP")
            case 0x0057: output.append("IPv6")
            case 0x0281: output.append("MPLS")
            default: output.append("unknown")
            }
            output.append(" (0x")
            output.append(hexByte: UInt8(header.pppProtocol >> 8))
            output.append(hexByte: UInt8(header.pppProtocol & 0xff))
            output.append("), length ")
            output.append(decimal: header.length)
            output.append(": ")
        }
        guard isLast, packet.network.isOtherPPPoE else { return true }
        // A PPP protocol TapKit does not decode (LCP, IPCP, CHAP...): named as tcpdump names unknown ones.
        output.append("unknown PPP protocol (0x")
        output.append(hexByte: UInt8(header.pppProtocol >> 8))
        output.append(hexByte: UInt8(header.pppProtocol & 0xff))
        output.append(")")
        return false
    }

    /// Discovery tags, as tcpdump prints them: ` [Name]`, ` [Name "text"]` when mostly printable (at most 79
    /// characters), else ` [Name 0xHEX]`. Stops after the End-of-List tag or at the end of the declared payload.
    private func appendPPPoETags(_ tags: UnsafeRawBufferPointer, declaredLength: Int, to output: inout TextOutput) {
        var offset = 0
        let end = min(declaredLength, tags.count)
        var type: UInt16 = 0xffff
        while type != 0 && offset < end {
            guard offset + 4 <= tags.count else { output.append(" [|pppoe]"); return }
            type = UInt16(tags[offset]) << 8 | UInt16(tags[offset + 1])
            let length = Int(tags[offset + 2]) << 8 | Int(tags[offset + 3])
            offset += 4
            output.append(" [")
            appendPPPoETagName(type, to: &output)
            if length > 0 {
                guard offset + length <= tags.count else { output.append(" [|pppoe]"); return }
                let value = UnsafeRawBufferPointer(rebasing: tags[offset..<(offset + length)])
                let shown = value.prefix(79)
                let printable = shown.reduce(0) { $0 + ($1 >= 0x20 && $1 < 0x7f ? 1 : 0) }
                if printable > shown.count - printable {
                    output.append(" \"")
                    for byte in shown { output.append(byte >= 0x20 && byte < 0x7f ? byte : UInt8(ascii: ".")) }
                    output.append("\"")
                } else {
                    output.append(" 0x")
                    for byte in value {
                        let digits: StaticString = "0123456789ABCDEF"
                        digits.withUTF8Buffer { output.append($0[Int(byte >> 4)]); output.append($0[Int(byte & 0xf)]) }
                    }
                }
            }
            output.append("]")
            offset += length
        }
    }

    private func appendPPPoETagName(_ type: UInt16, to output: inout TextOutput) {
        switch type {
        case 0x0000: output.append("EOL")
        case 0x0101: output.append("Service-Name")
        case 0x0102: output.append("AC-Name")
        case 0x0103: output.append("Host-Uniq")
        case 0x0104: output.append("AC-Cookie")
        case 0x0105: output.append("Vendor-Specific")
        case 0x0110: output.append("Relay-Session-ID")
        case 0x0120: output.append("PPP-Max-Payload")
        case 0x0201: output.append("Service-Name-Error")
        case 0x0202: output.append("AC-System-Error")
        case 0x0203: output.append("Generic-Error")
        default:
            output.append("TAG-0x")
            appendHex(UInt32(type), to: &output)
        }
    }

    /// `-e`: `, proto NAME (0xNNNN)`, tcpdump's name for a GRE or Geneve payload type.
    private func appendTunnelProtocol(_ type: UInt16, to output: inout TextOutput) {
        output.append(", proto ")
        switch type {
        case 0x0800: output.append("IPv4")
        case 0x86dd: output.append("IPv6")
        case 0x0806: output.append("ARP")
        case 0x6558: output.append("TEB")
        case 0x8847: output.append("MPLS unicast")
        case 0x8848: output.append("MPLS multicast")
        default: output.append("unknown")
        }
        output.append(" (0x")
        output.append(hexByte: UInt8(type >> 8))
        output.append(hexByte: UInt8(type & 0xff))
        output.append(")")
    }

    /// Lower-case hex without leading zeros, as printf's `%x`.
    func appendHex(_ value: UInt32, to output: inout TextOutput) {
        if value > 0xffff {
            output.append(hex: UInt16(value >> 16))
            let low = UInt16(value & 0xffff)
            output.append(hexByte: UInt8(low >> 8))
            output.append(hexByte: UInt8(low & 0xff))
        } else {
            output.append(hex: UInt16(value))
        }
    }
}

extension NetworkLayer {
    fileprivate var isOther: Bool {
        if case .other = self { return true }
        return false
    }

    /// The packet stopped at a PPPoE session carrying something other than IP.
    fileprivate var isOtherPPPoE: Bool {
        if case .other(0x8864) = self { return true }
        return false
    }
}
