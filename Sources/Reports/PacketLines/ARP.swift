import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-arp.c for Ethernet/IPv4 ARP; `length` is the ARP packet's length on the wire.
    func renderARP(_ arp: ARPPacket, length: Int, to output: inout TextOutput) {
        if !options.linkHeader { output.append("ARP, ") }
        // The decoder reads Ethernet/IPv4 ARP only; -v names those (print-arp.c).
        if options.verbosity > 0 { output.append("Ethernet (len 6), IPv4 (len 4), ") }
        switch arp.operation {
        case 1:
            output.append("Request who-has ")
            output.append(arp.targetAddress)
            if arp.targetHardware.rawValue != 0 {
                output.append(" (")
                output.append(arp.targetHardware)
                output.append(")")
            }
            output.append(" tell ")
            output.append(arp.senderAddress)
        case 2:
            output.append("Reply ")
            output.append(arp.senderAddress)
            output.append(" is-at ")
            output.append(arp.senderHardware)
        case 3:
            output.append("Reverse Request who-is ")
            output.append(arp.targetHardware)
            output.append(" tell ")
            output.append(arp.senderHardware)
        case 4:
            output.append("Reverse Reply ")
            output.append(arp.targetHardware)
            output.append(" at ")
            output.append(arp.targetAddress)
        default:
            output.append("Unknown (")
            output.append(decimal: arp.operation)
            output.append(")")
        }
        output.append(", length ")
        output.append(decimal: length)
    }
}
