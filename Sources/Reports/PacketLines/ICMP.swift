import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-icmp.c (the messages it prints without -v).
    func renderICMP(_ message: ICMPMessage, to output: inout TextOutput) {
        output.append("ICMP ")
        switch message.type {
        case 0, 8:
            output.append(message.type == 8 ? "echo request" : "echo reply")
            output.append(", id ")
            output.append(decimal: message.identifier)
            output.append(", seq ")
            output.append(decimal: message.sequence)
        case 3:
            // The quoted datagram says which destination and port were unreachable.
            if let quote = message.quote {
                output.append(quote.destination)
                if message.code == 3, quote.protocolNumber == 6 || quote.protocolNumber == 17,
                   let port = quote.destinationPort {
                    output.append(quote.protocolNumber == 6 ? " tcp port " : " udp port ")
                    output.append(decimal: port)
                    output.append(" unreachable")
                } else {
                    switch message.code {
                    case 0: output.append(" net unreachable")
                    case 1: output.append(" host unreachable")
                    case 2: output.append(" protocol unreachable")
                    case 3: output.append(" port unreachable")
                    case 4: output.append(" unreachable - need to frag")
                    default:
                        output.append(" unreachable code ")
                        output.append(decimal: message.code)
                    }
                }
            } else {
                output.append("destination unreachable")
            }
        case 11:
            output.append(message.code == 0 ? "time exceeded in-transit" : "ip reassembly time exceeded")
        case 5: output.append("redirect")
        case 13: output.append("time stamp request")
        case 14: output.append("time stamp reply")
        default:
            output.append("type-#")
            output.append(decimal: message.type)
        }
        output.append(", length ")
        output.append(decimal: message.length)
        if options.verbosity > 0, case .incorrect(let stored, let expected)? = checksums.transport {
            output.append(" (wrong icmp cksum ")
            output.append(hex: stored)
            output.append(" (->")
            output.append(hex: expected)
            output.append(")!)")
        }
    }
}
