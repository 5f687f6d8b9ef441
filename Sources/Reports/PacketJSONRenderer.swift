import PacketDecoding

/// Renders each packet as one JSON object on its own line (NDJSON). Schema: docs/capture.md.
/// TCP sequence numbers are absolute (unlike the text lines, which are relative like tcpdump's).
public struct PacketJSONRenderer {
    public init() {}

    private static let flagNames: [(TCPFlags, StaticString)] = [
        (.fin, "FIN"), (.syn, "SYN"), (.rst, "RST"), (.psh, "PSH"), (.ack, "ACK"), (.urg, "URG"), (.ece, "ECE"), (.cwr, "CWR"),
    ]

    public func render(_ packet: DecodedPacket, index: Int, to output: inout TextOutput) {
        output.append("{\"index\":")
        output.append(decimal: index)
        output.append(",\"timestamp\":")
        output.append(seconds: packet.timestamp)
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
            output.strings(Self.flagNames.lazy.filter { segment.flags.contains($0.0) }.map(\.1))
            output.append("],\"seq\":")
            output.append(decimal: segment.sequenceNumber)
            output.append(",\"ack\":")
            output.append(decimal: segment.acknowledgmentNumber)
            output.append(",\"window\":")
            output.append(decimal: segment.window)
            output.append(",\"payload_length\":")
            output.append(decimal: segment.payloadLength)
            if segment.payloadLength > 2, segment.payload.count >= 2, segment.source.port == 53 || segment.destination.port == 53 {
                // DNS over TCP: a two-byte length prefix, then the message (RFC 1035 section 4.2.2).
                let prefix = DNSMessage(bytes: segment.payload, length: segment.payloadLength).u16(at: 0) ?? 0
                if Int(prefix) == segment.payloadLength - 2 {
                    appendDNS(DNSMessage(bytes: UnsafeRawBufferPointer(rebasing: segment.payload[2...]),
                                         length: segment.payloadLength - 2), to: &output)
                }
            }
        case .udp(let datagram):
            output.append(",\"transport\":\"udp\"")
            appendPorts(datagram.source.port, datagram.destination.port, to: &output)
            output.append(",\"payload_length\":")
            output.append(decimal: datagram.payloadLength)
            if datagram.source.port == 53 || datagram.destination.port == 53 {
                appendDNS(DNSMessage(bytes: datagram.payload, length: max(datagram.length - 8, 0)), to: &output)
            } else {
                appendUDPService(datagram, to: &output)  // DHCP, NTP: PacketServicesJSON.swift
            }
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
        case .none, .cutTCP, .cutUDP:
            output.append(",\"transport\":null")
        }
        appendEncapsulation(packet, to: &output)  // tunnels: PacketJSONEncapsulation.swift
        if let error = packet.error {
            output.append(",\"error\":")
            output.string(error.description)
        }
        output.append("}")
        output.endLine()
    }

    private func appendAddresses(_ source: IPAddress, _ destination: IPAddress, to output: inout TextOutput) {
        output.append(",\"src\":\"")
        output.append(source)
        output.append("\",\"dst\":\"")
        output.append(destination)
        output.append("\"")
    }

    private func appendPorts(_ source: UInt16, _ destination: UInt16, to output: inout TextOutput) {
        output.append(",\"src_port\":")
        output.append(decimal: source)
        output.append(",\"dst_port\":")
        output.append(decimal: destination)
    }
}
