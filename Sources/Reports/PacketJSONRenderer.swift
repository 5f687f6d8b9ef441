import PacketDecoding

/// Renders each packet as one JSON object on its own line (NDJSON). Schema: docs/capture.md.
/// TCP sequence numbers are absolute (unlike the text lines, which are relative like tcpdump's).
public struct PacketJSONRenderer {
    public init() {}

    private static let flagNames: [(TCPFlags, StaticString)] = [
        (.fin, "FIN"), (.syn, "SYN"), (.rst, "RST"), (.psh, "PSH"), (.ack, "ACK"), (.urg, "URG"), (.ece, "ECE"), (.cwr, "CWR"),
    ]

    public func render(_ packet: DecodedPacket, index: Int, to output: inout PacketOutput) {
        output.append("{\"index\":")
        output.append(decimal: index)
        output.append(",\"timestamp\":")
        output.append(decimal: packet.timestamp.seconds)
        output.append(".")
        output.append(decimal: max(packet.timestamp.nanoseconds, 0), width: 9)
        output.append(",\"captured_length\":")
        output.append(decimal: packet.capturedLength)
        output.append(",\"original_length\":")
        output.append(decimal: packet.originalLength)
        output.append(",\"truncated\":")
        output.append(packet.isTruncated ? "true" : "false")
        output.append(",\"link_type\":\"")
        output.append(packet.linkType.name)
        output.append("\"")
        if packet.link.vlanTagCount > 0 {
            output.append(",\"vlan\":[")
            output.append(decimal: packet.link.vlanIDs.0)
            if packet.link.vlanTagCount > 1 {
                output.append(",")
                output.append(decimal: packet.link.vlanIDs.1)
            }
            output.append("]")
        }
        if let index = packet.link.interfaceIndex {
            output.append(",\"interface_index\":")
            output.append(decimal: index)
        }
        switch packet.network {
        case .ipv4(let header):
            output.append(",\"network\":\"ipv4\"")
            appendAddresses(header.source, header.destination, to: &output)
            output.append(",\"ip_protocol\":")
            output.append(decimal: header.protocolNumber)
            output.append(",\"ttl\":")
            output.append(decimal: header.timeToLive)
            output.append(",\"fragment\":")
            output.append(header.isFragment ? "true" : "false")
        case .ipv6(let header):
            output.append(",\"network\":\"ipv6\"")
            appendAddresses(header.source, header.destination, to: &output)
            output.append(",\"ip_protocol\":")
            output.append(decimal: header.protocolNumber)
            output.append(",\"ttl\":")
            output.append(decimal: header.hopLimit)
            output.append(",\"fragment\":")
            output.append(header.fragment != nil ? "true" : "false")
        case .arp(let arp):
            output.append(",\"network\":\"arp\"")
            appendAddresses(arp.senderAddress, arp.targetAddress, to: &output)
            output.append(",\"arp_operation\":")
            output.append(decimal: arp.operation)
        case .other(let etherType):
            output.append(",\"network\":\"other\",\"ether_type\":")
            output.append(decimal: etherType)
        case .none:
            output.append(",\"network\":null")
        }
        switch packet.transport {
        case .tcp(let segment):
            output.append(",\"transport\":\"tcp\"")
            appendPorts(segment.source.port, segment.destination.port, to: &output)
            output.append(",\"tcp_flags\":[")
            var first = true
            for (flag, name) in Self.flagNames where segment.flags.contains(flag) {
                if !first { output.append(",") }
                first = false
                output.append("\"")
                output.append(name)
                output.append("\"")
            }
            output.append("],\"seq\":")
            output.append(decimal: segment.sequenceNumber)
            output.append(",\"ack\":")
            output.append(decimal: segment.acknowledgmentNumber)
            output.append(",\"window\":")
            output.append(decimal: segment.window)
            output.append(",\"payload_length\":")
            output.append(decimal: segment.payloadLength)
        case .udp(let datagram):
            output.append(",\"transport\":\"udp\"")
            appendPorts(datagram.source.port, datagram.destination.port, to: &output)
            output.append(",\"payload_length\":")
            output.append(decimal: datagram.payloadLength)
        case .icmp(let message), .icmpv6(let message):
            if case .icmp = packet.transport { output.append(",\"transport\":\"icmp\"") } else { output.append(",\"transport\":\"icmpv6\"") }
            output.append(",\"icmp_type\":")
            output.append(decimal: message.type)
            output.append(",\"icmp_code\":")
            output.append(decimal: message.code)
            output.append(",\"payload_length\":")
            output.append(decimal: max(message.length - 8, 0))
        case .fragment:
            output.append(",\"transport\":\"fragment\"")
        case .other:
            output.append(",\"transport\":\"other\"")
        case .none:
            output.append(",\"transport\":null")
        }
        if let error = packet.error {
            output.append(",\"error\":\"")
            appendEscaped(error.description, to: &output)
            output.append("\"")
        }
        output.append("}")
        output.endLine()
    }

    private func appendAddresses(_ source: IPAddress, _ destination: IPAddress, to output: inout PacketOutput) {
        output.append(",\"src\":\"")
        output.append(source)
        output.append("\",\"dst\":\"")
        output.append(destination)
        output.append("\"")
    }

    private func appendPorts(_ source: UInt16, _ destination: UInt16, to output: inout PacketOutput) {
        output.append(",\"src_port\":")
        output.append(decimal: source)
        output.append(",\"dst_port\":")
        output.append(decimal: destination)
    }

    private func appendEscaped(_ text: String, to output: inout PacketOutput) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append("\\\"")
            case UInt8(ascii: "\\"): output.append("\\\\")
            case 0..<0x20:
                output.append("\\u00")
                output.append(hexByte: byte)
            default: output.append(byte)
            }
        }
    }
}
