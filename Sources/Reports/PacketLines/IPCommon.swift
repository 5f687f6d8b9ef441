import PacketDecoding

/// Pieces every IP-family line shares: `a > b: ` and `a.port > b.port: `, and the line for an upper layer that
/// was not decoded.
extension PacketLineRenderer {
    func appendAddresses(_ source: IPAddress, _ destination: IPAddress, to output: inout TextOutput) {
        output.append(source)
        output.append(" > ")
        output.append(destination)
        output.append(": ")
    }

    func appendEndpoints(_ source: Endpoint, _ destination: Endpoint, withAddresses: Bool,
                         to output: inout TextOutput) {
        if withAddresses {
            output.append(source.address)
            output.append(UInt8(ascii: "."))
            output.append(decimal: source.port)
            output.append(" > ")
            output.append(destination.address)
            output.append(UInt8(ascii: "."))
            output.append(decimal: destination.port)
        } else {
            output.append(decimal: source.port)
            output.append(" > ")
            output.append(decimal: destination.port)
        }
        output.append(": ")
    }

    /// A cut or unknown upper layer: tcpdump's `[|proto]` marker, or `ip-proto-N LENGTH` (with -n it names
    /// protocols it does not decode by number).
    func renderUndecodedUpperLayer(_ packet: DecodedPacket, protocolNumber: UInt8, length: Int,
                                   to output: inout TextOutput) {
        if let error = packet.error {
            // tcpdump's spacing differs by protocol: "a > b: [|tcp]" but "a > b:  [|udp]".
            output.append(error.layer == .tcp ? "[|" : " [|")
            switch error.layer {
            case .icmpv6: output.append("icmp6")
            case .ipv6Extension:  // named by the extension header that was cut, as tcpdump's printers do
                var cutType: UInt8 = 0xff
                if case .ipv6(let header) = packet.network { cutType = header.protocolNumber }
                switch cutType {  // their printers read the first field without checking first: a long jump
                case 0: output.append("hbhopt"); output.printerRanOutOfBytes = true
                case 60: output.append("dstopt"); output.printerRanOutOfBytes = true
                case 44: output.append("frag6"); output.printerRanOutOfBytes = true
                case 51: output.append("ah"); output.printerRanOutOfBytes = true
                default: output.append("ip6")
                }
            default: output.append(error.layer.rawValue)
            }
            output.append("]")
            // print-icmp.c and print-icmp6.c read the type without checking first: a long jump.
            if error.layer == .icmp || error.layer == .icmpv6 { output.printerRanOutOfBytes = true }
            return
        }
        output.append("ip-proto-")
        output.append(decimal: protocolNumber)
        if case .fragment = packet.transport { return }
        output.append(" ")
        output.append(decimal: max(length, 0))
    }
}
