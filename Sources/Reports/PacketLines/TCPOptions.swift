import PacketDecoding

extension PacketLineRenderer {
    /// Prints the options as tcpdump does. Returns false when the list was cut by the snap length (` [|tcp]`) or
    /// malformed (`[bad opt]`): tcpdump then ends the line there.
    func appendTCPOptions(_ options: TCPOptionIterator, sackBase: UInt32, to output: inout TextOutput) -> Bool {
        var first = true
        for option in options {
            if !first { output.append(",") }
            first = false
            var printedLength = option.length
            switch option.value {
            case .cutBeforeKind, .cutBeforeLength:
                output.append(" [|tcp]")
                output.printerRanOutOfBytes = true
                return false
            case .badLength:
                output.append("[bad opt]]")
                return false
            case .cut:
                // tcpdump names the option, then stops; after an earlier option it also prints ">".
                appendOptionName(option.kind, to: &output)
                if option.kind == 5 && (option.length - 2) % 8 == 0 {  // the block count comes before the first edge
                    output.append(" ")
                    output.append(decimal: (option.length - 2) / 8)
                    output.append(" ")
                }
                output.append(option.offset == 0 ? " [|tcp]" : " [|tcp]>")
                return false
            case .endOfList: output.append("eol")
            case .noOperation: output.append("nop")
            case .maximumSegmentSize(let mss):
                output.append("mss")
                if let mss {
                    output.append(" ")
                    output.append(decimal: mss)
                    printedLength = 4
                }
            case .windowScale(let shift):
                output.append("wscale")
                if let shift {
                    output.append(" ")
                    output.append(decimal: shift)
                    printedLength = 3
                }
            case .sackPermitted:
                output.append("sackOK")
                printedLength = 2
            case .invalidSACK:
                output.append("sack invalid sack")
            case .sack(let blocks):
                output.append("sack ")
                output.append(decimal: blocks.count)
                output.append(" ")
                for i in 0..<blocks.count {
                    output.append("{")
                    output.append(decimal: blocks[i].left &- sackBase)
                    output.append(":")
                    output.append(decimal: blocks[i].right &- sackBase)
                    output.append("}")
                }
            case .timestamp(let value, let echoReply):
                output.append("TS val ")
                output.append(decimal: value)
                output.append(" ecr ")
                output.append(decimal: echoReply)
                printedLength = 10
            case .shortTimestamp:
                output.append("TS")
            case .experimentalWithoutMagic:
                output.append("exp[bad opt]]")
                return false
            case .experimental(let magic):
                output.append("exp-")
                output.append(hexByte: UInt8(magic >> 8))
                output.append(hexByte: UInt8(magic & 0xff))
            case .fastOpen(let cookie, let experimental):
                output.append(experimental ? "exp-tfo" : "tfo")
                if cookie.isEmpty {
                    output.append(" cookiereq")
                } else if cookie.count % 2 != 0 || cookie.count < 4 || cookie.count > 16 {
                    output.append(" (invalid)")
                } else {
                    output.append(" cookie ")
                    for byte in cookie { output.append(hexByte: byte) }
                }
            case .other(let data):
                appendOptionName(option.kind, to: &output)
                for byte in data { output.append(hexByte: byte) }
            }
            if printedLength != option.length {
                output.append("[len ")
                output.append(decimal: option.length)
                output.append("]")
            }
        }
        return true
    }

    func appendOptionName(_ kind: UInt8, to output: inout TextOutput) {
        switch kind {
        case 0: output.append("eol")
        case 1: output.append("nop")
        case 2: output.append("mss")
        case 3: output.append("wscale")
        case 4: output.append("sackOK")
        case 5: output.append("sack")
        case 6: output.append("echo")
        case 7: output.append("echoreply")
        case 8: output.append("TS")
        case 11: output.append("cc")
        case 12: output.append("ccnew")
        case 13: output.append("")
        case 19: output.append("md5")
        case 20: output.append("scps")
        case 28: output.append("uto")
        case 29: output.append("tcp-ao")
        case 30: output.append("mptcp")
        case 34: output.append("tfo")
        case 254: output.append("exp")
        default:
            output.append("unknown-")
            output.append(decimal: kind)
        }
    }
}
