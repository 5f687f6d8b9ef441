import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-ip6.c (without -v): `IP6 `, the extension headers it names, then the upper layer's line.
    /// tcpdump prints the addresses with the ports when TCP or UDP follows the fixed header directly; after
    /// extension headers the addresses come first and the ports stand alone.
    mutating func renderIPv6(_ packet: DecodedPacket, _ header: IPv6Header, frame: UnsafeRawBufferPointer,
                             to output: inout TextOutput) {
        if !options.linkHeader { output.append("IP6 ") }
        if options.verbosity > 0 { appendVerboseIPv6(header, to: &output) }
        let direct = header.extensionCount == 0
        if !direct { appendAddresses(header.source, header.destination, to: &output) }
        for i in 0..<min(header.extensionCount, 4) {
            guard let ext = header.extension(at: i) else { break }
            switch ext.type {
            case 0, 60:
                output.append(ext.type == 0 ? "HBH " : "DSTOPT ")
                if options.verbosity > 0 {
                    appendExtensionOptions(IPv6ExtensionOptions(frame: frame, packet: packet, extensionAt: i), to: &output)
                }
            case 51: output.append("AH ")
            case 43:
                output.append("RT6 (len=")
                output.append(decimal: ext.length / 8 - 1)
                output.append(", type=")
                output.append(decimal: ext.routingType)
                if ext.routingType == 0 { output.append(" [Deprecated]") }
                output.append(", segleft=")
                output.append(decimal: ext.segmentsLeft)
                if ext.routingType == 0 || ext.routingType == 2 {
                    let routing = IPv6RoutingAddresses(frame: frame, packet: packet, extensionAt: i)
                    if let reserved = routing.reserved, reserved != 0 || options.verbosity > 0 {
                        output.append(", rsv=0x")
                        appendHex(reserved, to: &output)
                    }
                    for index in 0..<routing.declaredCount {
                        guard let address = routing.address(at: index) else { break }
                        output.append(", [")
                        output.append(decimal: index)
                        output.append("]")
                        output.append(address)
                    }
                }
                output.append(") ")
            case 44:
                if let fragment = header.fragment {
                    output.append("frag (")
                    if options.verbosity > 0 {
                        output.append("0x")
                        appendHex(fragment.identification, digits: 8, to: &output)
                        output.append(":")
                    }
                    output.append(decimal: fragment.offset)
                    output.append("|")
                    output.append(decimal: max(header.payloadLength - header.extensionsLength, 0))
                    output.append(")")
                    // tcpdump does not look into non-first fragments.
                    if fragment.offset != 0 { return }
                    output.append(" ")
                }
            default: break
            }
        }
        switch packet.transport {
        case .tcp(let segment):
            renderTCP(segment, withAddresses: direct, to: &output)
        case .cutTCP(let cut):
            renderCutTCP(cut, withAddresses: direct, to: &output)
        case .udp(let datagram):
            renderUDP(datagram, withAddresses: direct, overIPv6: true, to: &output)
        case .cutUDP(let cut):
            appendEndpoints(cut.source, cut.destination, withAddresses: direct, to: &output)
            output.append(" [|udp]")
        case .icmpv6(let message):
            if direct { appendAddresses(header.source, header.destination, to: &output) }
            renderICMPv6(message, to: &output)
        case .none where packet.error?.layer == .icmpv6 && packet.error!.offset < frame.count:
            if direct { appendAddresses(header.source, header.destination, to: &output) }
            renderCutICMPv6(type: frame[packet.error!.offset], length: header.payloadLength - header.extensionsLength,
                            to: &output)
        case .none, .icmp, .fragment, .other:
            if direct { appendAddresses(header.source, header.destination, to: &output) }
            renderUndecodedUpperLayer(packet, protocolNumber: header.protocolNumber,
                                      length: header.payloadLength - header.extensionsLength, to: &output)
        }
    }

    /// print-ip6opts.c with -v: `(padn)`, `(rtalert: 0x0000) `, then a space.
    private func appendExtensionOptions(_ list: IPv6ExtensionOptions, to output: inout TextOutput) {
        for option in list {
            switch option {
            case .pad1: output.append("(pad1)")
            case .padN: output.append("(padn)")
            case .routerAlert(let value):
                output.append("(rtalert: 0x")
                appendHex4(value, to: &output)
                output.append(") ")
            case .invalidLength(let type, let length):
                output.append(type == 5 ? "(rtalert: invalid len " : "(invalid len ")
                output.append(decimal: length)
                output.append(")")
            case .other(let type, let length):
                output.append("(opt_type 0x")
                output.append(hexByte: type)
                output.append(": len=")
                output.append(decimal: length)
                output.append(")")
            case .cut(let type):
                output.append(type == 1 ? "(padn: trunc)" : type == 5 ? "(rtalert: trunc)" : "(type ")
                if type != 1 && type != 5 {
                    output.append(decimal: type)
                    output.append(": trunc)")
                }
            }
        }
        output.append(" ")
    }
}
