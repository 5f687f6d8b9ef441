import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-icmp6.c (the messages it prints without -v).
    func renderICMPv6(_ message: ICMPMessage, to output: inout TextOutput) {
        if options.verbosity > 0 { appendBracketedChecksum("icmp6", to: &output) }
        output.append("ICMP6, ")
        switch message.type {
        case 128, 129:
            output.append(message.type == 128 ? "echo request" : "echo reply")
            output.append(", id ")
            output.append(decimal: message.identifier)
            output.append(", seq ")
            output.append(decimal: message.sequence)
        case 135, 136:
            output.append(message.type == 135 ? "neighbor solicitation" : "neighbor advertisement")
            if options.verbosity > 0 {
                output.append(", length ")
                output.append(decimal: message.length)
            }
            guard let target = message.target else {  // tcpdump reads the target without checking first
                output.append(" [|icmp6]")
                output.printerRanOutOfBytes = true
                return
            }
            output.append(message.type == 135 ? ", who has " : ", tgt is ")
            output.append(target)
            if options.verbosity > 0 {
                if message.type == 136 { appendAdvertisementFlags(message.restOfHeader, to: &output) }
                if appendNeighborDiscoveryOptions(message, to: &output) { output.append(" [|icmp6]") }
                return
            }
        case 133:
            output.append("router solicitation")
            if options.verbosity > 0 {  // print-icmp6.c: the length, then the options
                output.append(", length ")
                output.append(decimal: message.length)
                if appendNeighborDiscoveryOptions(message, to: &output) { output.append(" [|icmp6]") }
                return
            }
        case 134: output.append("router advertisement")
        case 1: output.append("destination unreachable")
        case 2: output.append("packet too big")
        case 3: output.append("time exceeded in-transit")
        case 143:
            output.append("multicast listener report v2, ")
            output.append(decimal: message.sequence)  // the number of group records
            output.append(" group record(s)")
            if options.verbosity > 0 {  // the records instead of the length
                appendMLDv2Records(message, to: &output)
                return
            }
        default:
            output.append("type ")
            output.append(decimal: message.type)
        }
        if options.verbosity > 0 && (message.type == 128 || message.type == 129) { return }
        output.append(", length ")
        output.append(decimal: message.length)
    }

    /// A message whose fixed 8 bytes were not all captured: tcpdump names its type (and with -v gives the length
    /// of neighbour discovery messages), then runs out of bytes.
    func renderCutICMPv6(type: UInt8, length: Int, to output: inout TextOutput) {
        output.printerRanOutOfBytes = true
        let names: [UInt8: StaticString] = [128: "echo request", 129: "echo reply", 133: "router solicitation",
                                            134: "router advertisement", 135: "neighbor solicitation",
                                            136: "neighbor advertisement"]
        guard let name = names[type] else { output.append(" [|icmp6]"); return }
        output.append("ICMP6, ")
        output.append(name)
        if options.verbosity > 0 && type >= 133 {
            output.append(", length ")
            output.append(decimal: length)
        }
        output.append(" [|icmp6]")
    }

    /// -v: `, Flags [router, solicited, override]` of a neighbour advertisement.
    private func appendAdvertisementFlags(_ word: UInt32, to output: inout TextOutput) {
        output.append(", Flags [")
        appendFlagNames([(word & 0x8000_0000 != 0, "router"), (word & 0x4000_0000 != 0, "solicited"),
                         (word & 0x2000_0000 != 0, "override")], to: &output)
        output.append("]")
    }

    /// -v: each option of a neighbour message on its own line; link-layer addresses as tcpdump prints them, the
    /// rest by name and length. Returns whether the options were cut.
    private func appendNeighborDiscoveryOptions(_ message: ICMPMessage, to output: inout TextOutput) -> Bool {
        var walk = NeighborDiscoveryOptions(of: message)
        while let option = walk.next() {
            output.append("\n\t  ")
            switch option.type {
            case 1: output.append("source link-address")
            case 2: output.append("destination link-address")
            case 3: output.append("prefix info")
            case 4: output.append("redirected header")
            case 5: output.append("mtu")
            default: output.append("unknown")
            }
            output.append(" option (")
            output.append(decimal: option.type)
            output.append("), length ")
            output.append(decimal: Int(option.units) * 8)
            output.append(" (")
            output.append(decimal: option.units)
            output.append("): ")
            if option.type == 1 || option.type == 2 {
                for (index, byte) in option.data.enumerated() {
                    if index > 0 { output.append(":") }
                    output.append(hexByte: byte)
                }
            }
            // -vv: the option's bytes in hex as well (print_unknown_data).
            if options.verbosity > 1 {
                for lineStart in stride(from: 0, to: option.data.count, by: 16) {
                    output.append("\n\t    0x")
                    appendHex4(UInt16(lineStart), to: &output)
                    output.append(": ")
                    let line = option.data[lineStart..<min(lineStart + 16, option.data.count)]
                    for (index, byte) in line.enumerated() {
                        if index % 2 == 0 { output.append(" ") }
                        output.append(hexByte: byte)
                    }
                }
            }
        }
        return walk.cut
    }
}
