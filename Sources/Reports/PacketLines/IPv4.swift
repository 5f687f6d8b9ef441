import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-ip.c (without -v): `IP `, length complaints, then the upper layer's line.
    mutating func renderIPv4(_ packet: DecodedPacket, _ header: IPv4Header, to output: inout TextOutput) {
        if !options.linkHeader { output.append("IP ") }
        let wireLength = packet.originalLength - packet.link.length
        if header.totalLength > wireLength {
            output.append("[total length ")
            output.append(decimal: header.totalLength)
            output.append(" > length ")
            output.append(decimal: wireLength)
            output.append("] (invalid) ")
        }
        if header.totalLength < header.headerLength {
            output.append("bad-len ")
            output.append(decimal: header.totalLength)
            return
        }
        if options.verbosity > 0 { appendVerboseIPv4(header, to: &output) }
        switch packet.transport {
        case .tcp(let segment):
            renderTCP(segment, withAddresses: true, to: &output)
        case .cutTCP(let cut):
            renderCutTCP(cut, withAddresses: true, to: &output)
        case .udp(let datagram):
            renderUDP(datagram, withAddresses: true, overIPv6: false, to: &output)
        case .cutUDP(let cut):
            appendEndpoints(cut.source, cut.destination, withAddresses: true, to: &output)
            output.append(" [|udp]")
        case .icmp(let message):
            appendAddresses(header.source, header.destination, to: &output)
            renderICMP(message, to: &output)
        case .none, .icmpv6, .fragment, .other:
            appendAddresses(header.source, header.destination, to: &output)
            renderUndecodedUpperLayer(packet, protocolNumber: header.protocolNumber,
                                      length: header.totalLength - header.headerLength, to: &output)
        }
    }
}
