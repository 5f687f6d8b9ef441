import PacketDecoding

/// tcpdump's `-v` additions that several printers share: the IPv4 and IPv6 header fields, checksum verdicts,
/// and the names tcpdump gives IP protocol numbers (netdissect's ipproto_values).
extension PacketLineRenderer {
    /// print-ip.c with -v: `(tos 0x0, ttl 64, id 1, offset 0, flags [DF], proto TCP (6), length 60)` and a
    /// line break, after which the upper layer's line follows indented.
    func appendVerboseIPv4(_ header: IPv4Header, to output: inout TextOutput) {
        output.append("(tos 0x")
        output.append(hex: UInt16(header.typeOfService))
        switch header.typeOfService & 0x03 {
        case 1: output.append(",ECT(1)")
        case 2: output.append(",ECT(0)")
        case 3: output.append(",CE")
        default: break
        }
        if header.timeToLive >= 1 {
            output.append(", ttl ")
            output.append(decimal: header.timeToLive)
        }
        output.append(", id ")
        output.append(decimal: header.identification)
        output.append(", offset ")
        output.append(decimal: header.fragmentOffset)
        output.append(", flags [")
        appendFlagNames([(header.moreFragments, "+"), (header.dontFragment, "DF"), (header.reservedFlag, "rsvd")], to: &output)
        output.append("], proto ")
        appendIPProtocolName(header.protocolNumber, to: &output)
        output.append(" (")
        output.append(decimal: header.protocolNumber)
        output.append("), length ")
        output.append(decimal: header.totalLength)
        if case .incorrect(let stored, let expected) = checksums.ipv4Header {
            output.append(", bad cksum ")
            output.append(hex: stored)
            output.append(" (->")
            output.append(hex: expected)
            output.append(")!")
        }
        output.append(")\n    ")
    }

    /// print-ip6.c with -v: `(flowlabel 0x12345, hlim 64, next-header TCP (6) payload length: 40) `.
    func appendVerboseIPv6(_ header: IPv6Header, to output: inout TextOutput) {
        output.append("(")
        if header.trafficClass != 0 {
            output.append("class 0x")
            output.append(hexByte: header.trafficClass)
            output.append(", ")
        }
        if header.flowLabel != 0 {
            output.append("flowlabel 0x")
            appendHex(header.flowLabel, digits: 5, to: &output)
            output.append(", ")
        }
        output.append("hlim ")
        output.append(decimal: header.hopLimit)
        // The fixed header's own next-header field: the first extension header, or the upper layer.
        let next = header.extension(at: 0)?.type ?? header.protocolNumber
        output.append(", next-header ")
        appendIPProtocolName(next, to: &output)
        output.append(" (")
        output.append(decimal: next)
        output.append(") payload length: ")
        output.append(decimal: header.payloadLength)
        output.append(") ")
    }

    /// print-tcp.c's `, cksum 0x1234 (correct)` or `(incorrect -> 0x5678)`, where the whole segment was captured.
    func appendTCPChecksum(to output: inout TextOutput) {
        switch checksums.transport {
        case .correct(let stored)?:
            output.append(", cksum 0x")
            appendHex4(stored, to: &output)
            output.append(" (correct)")
        case .incorrect(let stored, let expected)?:
            output.append(", cksum 0x")
            appendHex4(stored, to: &output)
            output.append(" (incorrect -> 0x")
            appendHex4(expected, to: &output)
            output.append(")")
        case nil:
            break
        }
    }

    /// print-udp.c and print-icmp6.c's verdict before the message: `[udp sum ok] `, `[bad udp cksum 0x1 -> 0x2!] `,
    /// `[no cksum] ` (`protocolName` is `udp` or `icmp6`).
    func appendBracketedChecksum(_ protocolName: StaticString, to output: inout TextOutput) {
        if checksums.udpChecksumAbsent {
            output.append("[no cksum] ")
            return
        }
        switch checksums.transport {
        case .correct?:
            output.append("[")
            output.append(protocolName)
            output.append(" sum ok] ")
        case .incorrect(let stored, let expected)?:
            output.append("[bad ")
            output.append(protocolName)
            output.append(" cksum 0x")
            appendHex4(stored, to: &output)
            output.append(" -> 0x")
            appendHex4(expected, to: &output)
            output.append("!] ")
        case nil:
            break
        }
    }

    func appendHex4(_ value: UInt16, to output: inout TextOutput) {
        appendHex(UInt32(value), digits: 4, to: &output)
    }

    /// Lower-case hex, zero-padded to `digits` (printf's `%0Nx`).
    func appendHex(_ value: UInt32, digits: Int, to output: inout TextOutput) {
        for shift in stride(from: 4 * (digits - 1), through: 0, by: -4) {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt32(shift)) & 0xf
            output.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
        }
    }

    /// tcpdump's bittok2str: the names of the set flags, comma-separated, or `none`.
    func appendFlagNames(_ flags: [(Bool, StaticString)], to output: inout TextOutput) {
        var any = false
        for (set, name) in flags where set {
            if any { output.append(", ") }
            output.append(name)
            any = true
        }
        if !any { output.append("none") }
    }

    func appendIPProtocolName(_ number: UInt8, to output: inout TextOutput) {
        switch number {
        case 0: output.append("Options")
        case 1: output.append("ICMP")
        case 2: output.append("IGMP")
        case 4: output.append("IPIP")
        case 6: output.append("TCP")
        case 8: output.append("EGP")
        case 9: output.append("IGRP")
        case 17: output.append("UDP")
        case 33: output.append("DCCP")
        case 41: output.append("IPv6")
        case 43: output.append("Routing")
        case 44: output.append("Fragment")
        case 46: output.append("RSVP")
        case 47: output.append("GRE")
        case 50: output.append("ESP")
        case 51: output.append("AH")
        case 55: output.append("Mobile IP")
        case 58: output.append("ICMPv6")
        case 62: output.append("Mobile IP (old)")
        case 88: output.append("EIGRP")
        case 89: output.append("OSPF")
        case 103: output.append("PIM")
        case 108: output.append("Compressed IP")
        case 112: output.append("VRRP")
        case 113: output.append("PGM")
        case 132: output.append("SCTP")
        case 135: output.append("Mobility")
        case 143: output.append("Ethernet")
        default: output.append("unknown")
        }
    }
}
