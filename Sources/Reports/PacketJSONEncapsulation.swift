import PacketDecoding

/// The `encapsulation` array of a tunnelled packet's JSON object: one object per outer layer, outermost first.
/// The packet's own `network`/`transport` fields describe the innermost packet. Schema: README and docs/capture.md.
extension PacketJSONRenderer {
    func appendEncapsulation(_ packet: DecodedPacket, to output: inout TextOutput) {
        let layers = packet.encapsulation
        guard !layers.isEmpty else { return }
        output.append(",\"encapsulation\":[")
        for index in layers.indices {
            if index > 0 { output.append(",") }
            switch layers[index] {
            case .ipv4(let header):
                output.append("{\"type\":\"ipv4\"")
                appendField("src", address: header.source, to: &output)
                appendField("dst", address: header.destination, to: &output)
                appendField("ip_protocol", header.protocolNumber, to: &output)
                appendField("ttl", header.timeToLive, to: &output)
            case .ipv6(let header):
                output.append("{\"type\":\"ipv6\"")
                appendField("src", address: header.source, to: &output)
                appendField("dst", address: header.destination, to: &output)
                appendField("ip_protocol", header.protocolNumber, to: &output)
                appendField("ttl", header.hopLimit, to: &output)
            case .udp(let header):
                output.append("{\"type\":\"udp\"")
                appendField("src_port", header.sourcePort, to: &output)
                appendField("dst_port", header.destinationPort, to: &output)
            case .gre(let header):
                output.append("{\"type\":\"gre\"")
                appendField("version", header.version, to: &output)
                appendField("protocol", header.protocolType, to: &output)
                if let key = header.key { appendField("key", key, to: &output) }
                if let sequence = header.sequence { appendField("seq", sequence, to: &output) }
                if let acknowledgment = header.acknowledgment { appendField("ack", acknowledgment, to: &output) }
            case .erspan(let header):
                output.append("{\"type\":\"erspan\"")
                appendField("erspan_type", header.type, to: &output)
                if header.type > 1 {
                    appendField("session", header.sessionID, to: &output)
                    appendField("vlan", header.vlan, to: &output)
                }
                if header.type == 3 {
                    appendField("hardware_id", header.hardwareID, to: &output)
                    output.append(header.egress ? ",\"direction\":\"egress\"" : ",\"direction\":\"ingress\"")
                }
            case .vxlan(let header):
                output.append("{\"type\":\"vxlan\"")
                appendField("vni", header.networkIdentifier, to: &output)
                appendField("flags", header.flags, to: &output)
            case .geneve(let header):
                output.append("{\"type\":\"geneve\"")
                appendField("vni", header.networkIdentifier, to: &output)
                appendField("protocol", header.protocolType, to: &output)
                appendField("options_length", header.optionsLength, to: &output)
            case .mpls(let label):
                output.append("{\"type\":\"mpls\"")
                appendField("label", label.label, to: &output)
                appendField("tc", label.trafficClass, to: &output)
                output.append(label.bottomOfStack ? ",\"bottom_of_stack\":true" : ",\"bottom_of_stack\":false")
                appendField("ttl", label.timeToLive, to: &output)
            case .pppoe(let header):
                output.append(header.isDiscovery ? "{\"type\":\"pppoe-discovery\"" : "{\"type\":\"pppoe\"")
                appendField("code", header.code, to: &output)
                appendField("session", header.sessionID, to: &output)
                if !header.isDiscovery { appendField("ppp_protocol", header.pppProtocol, to: &output) }
            case .ethernet(let header):
                output.append("{\"type\":\"ethernet\",\"src_mac\":\"")
                output.append(header.source)
                output.append("\",\"dst_mac\":\"")
                output.append(header.destination)
                output.append("\"")
                appendField("ether_type", header.etherType, to: &output)
                if header.vlanTagCount > 0 { appendField("vlan_tags", header.vlanTagCount, to: &output) }
            }
            output.append("}")
        }
        output.append("]")
    }

    private func appendField<T: BinaryInteger>(_ name: StaticString, _ value: T, to output: inout TextOutput) {
        output.append(",\"")
        output.append(name)
        output.append("\":")
        output.append(decimal: value)
    }

    private func appendField(_ name: StaticString, address: IPAddress, to output: inout TextOutput) {
        output.append(",\"")
        output.append(name)
        output.append("\":\"")
        output.append(address)
        output.append("\"")
    }
}
