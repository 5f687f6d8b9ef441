import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-chdlc.c: `SLARP (length: 18), keepalive: mineseen=0x000004d2, yourseen=0x0000162e,
    /// reliability=0xffff, link uptime=1d1h1m1s`. `payload` is the captured message: an unknown code's fields, and
    /// with -vv the bytes after the code (after the uptime, for a keepalive that has one), are dumped in hex.
    mutating func renderSLARP(_ message: SLARPMessage, payload: UnsafeRawBufferPointer, to output: inout TextOutput) {
        output.append("SLARP (length: ")
        output.append(decimal: message.length)
        output.append("), ")
        guard let code = message.code else {
            output.append(" [|chdlc_slarp]")
            return
        }
        switch code {
        case 0:
            output.append("request")
        case 1:
            output.append("reply ")
            output.append(IPAddress.v4(message.first))
            output.append("/")
            output.append(IPAddress.v4(message.second))
        case 2:
            output.append("keepalive: mineseen=0x")
            appendHex32(message.first, to: &output)
            output.append(", yourseen=0x")
            appendHex32(message.second, to: &output)
            output.append(", reliability=0x")
            output.append(hexByte: UInt8(message.reliability >> 8))
            output.append(hexByte: UInt8(message.reliability & 0xff))
            if message.uptimeCut {
                output.append(" [|chdlc_slarp]")
                output.printerRanOutOfBytes = true
                return
            }
            if let milliseconds = message.uptimeMilliseconds {
                var seconds = milliseconds / 1000
                let days = seconds / 86400
                seconds -= days * 86400
                output.append(", link uptime=")
                output.append(decimal: days)
                output.append("d")
                output.append(decimal: seconds / 3600)
                output.append("h")
                output.append(decimal: seconds % 3600 / 60)
                output.append("m")
                output.append(decimal: seconds % 60)
                output.append("s")
            }
        default:
            output.append("0x")  // printf's %02x: two digits at least
            if code <= 0xff {
                output.append(hexByte: UInt8(code))
            } else if code <= 0xffff {
                output.append(hex: UInt16(code))
            } else {
                output.append(hex: UInt16(code >> 16))
                output.append(hexByte: UInt8(truncatingIfNeeded: code >> 8))
                output.append(hexByte: UInt8(truncatingIfNeeded: code))
            }
            output.append(" unknown")
            if options.verbosity <= 1 { appendSLARPData(payload, from: 4, message: message, to: &output) }
        }
        if message.length > SLARPMessage.lengthWithUptime && options.verbosity > 0 {
            output.append(", (trailing junk: ")
            output.append(decimal: message.length - SLARPMessage.lengthWithUptime)
            output.append(" bytes)")
        }
        if options.verbosity > 1 {
            appendSLARPData(payload, from: message.uptimeMilliseconds == nil ? 4 : SLARPMessage.lengthWithUptime,
                            message: message, to: &output)
        }
    }

    /// tcpdump's print_unknown_data after the SLARP code: as many of the message's bytes as were captured.
    private func appendSLARPData(_ payload: UnsafeRawBufferPointer, from start: Int, message: SLARPMessage,
                                 to output: inout TextOutput) {
        let end = min(payload.count, start + message.length - 4)
        guard start < end else { return }
        appendHex(UnsafeRawBufferPointer(rebasing: payload[start..<end]), to: &output)
    }

    private func appendHex32(_ value: UInt32, to output: inout TextOutput) {
        for shift in stride(from: 24, through: 0, by: -8) {
            output.append(hexByte: UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }
}
