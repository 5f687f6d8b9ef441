#if canImport(Glibc)
import Glibc
#endif
import PacketDecoding

/// tcpdump's print-ntp.c: `NTPv4, Client, length 48` (version and mode from the first byte), and with -v the
/// leap indicator, stratum, poll, precision, root delay and dispersion, reference id, the four timestamps with
/// their UTC dates and the originator's differences; control messages' header fields. ` [|ntp]` where the capture
/// ends (where print-ntp.c reads a field without checking first, the line is ended as by a long jump: -x dumps
/// the whole frame), ` (invalid)` for a message shorter than its fixed part.
extension PacketLineRenderer {
    func appendNTP(_ message: NTPMessage, length: Int, to output: inout TextOutput) {
        guard let version = message.version, let mode = message.mode else {
            output.append(" [|ntp]")
            output.printerRanOutOfBytes = true
            return
        }
        output.append("NTPv")
        output.append(decimal: version)
        output.append(", ")
        output.append(NTPMessage.modeNames[Int(mode)])
        output.append(", length ")
        output.append(decimal: length)
        guard options.verbosity > 0 else { return }
        output.append("\n\tLeap indicator: ")
        let leap = message.u8(at: 0)! & 0xc0  // tcpdump prints the masked bits, not the 0-3 value
        output.append(leap == 0x40 ? "+1s" : leap == 0x80 ? "-1s" : leap == 0xc0 ? "clock unsynchronized" : "")
        output.append(" (")
        output.append(decimal: leap)
        output.append(")")
        let complete: Bool
        switch mode {
        case 0...5: complete = appendNTPTimeFields(message, length: length, to: &output)
        case 6: complete = appendNTPControlFields(message, length: length, to: &output)
        default: complete = true
        }
        if !complete { output.append(" [|ntp]") }
    }

    /// False when the capture ended first.
    private func appendNTPTimeFields(_ message: NTPMessage, length: Int, to output: inout TextOutput) -> Bool {
        guard length >= NTPMessage.timeMessageLength else {
            output.append(" (invalid)")
            return message.bytes.count >= length
        }
        guard let stratum = message.stratum else { output.printerRanOutOfBytes = true; return false }
        output.append(", Stratum ")
        output.append(decimal: stratum)
        output.append(stratum == 0 ? " (unspecified)" : stratum == 1 ? " (primary reference)"
                      : stratum <= 15 ? " (secondary reference)" : " (reserved)")
        guard let poll = message.poll else { output.printerRanOutOfBytes = true; return false }
        output.append(", poll ")
        output.append(decimal: poll)
        if poll > -32 && poll < 32 {
            output.append(poll >= 0 ? " (" : " (1/")
            output.append(decimal: UInt32(1) << UInt32(abs(Int(poll))))
            output.append("s)")
        }
        guard let precision = message.precision else { output.printerRanOutOfBytes = true; return false }
        output.append(", precision ")
        output.append(decimal: precision)
        guard let delay = message.word(at: 4) else { return false }
        output.append("\n\tRoot Delay: ")
        appendShortFixedPoint(delay, to: &output)
        guard let dispersion = message.word(at: 8) else { return false }
        output.append(", Root dispersion: ")
        appendShortFixedPoint(dispersion, to: &output)
        guard let reference = message.word(at: 12) else { return false }
        output.append(", Reference-ID: ")
        switch stratum {
        case 0: output.append("(unspec)")
        case 1:
            for shift in stride(from: 24, through: 0, by: -8) { appendPrintable(UInt8(truncatingIfNeeded: reference >> UInt32(shift)), to: &output) }
        case 62, 63:
            output.append(IPAddress.v4(reference))
            output.append(stratum == 62 ? " INFO_QUERY" : " INFO_REPLY")
            return true
        default:
            output.append("0x")
            appendHex(reference, digits: 8, to: &output)
        }
        let labels: [StaticString] = ["\n\t  Reference Timestamp:  ", "\n\t  Originator Timestamp: ",
                                      "\n\t  Receive Timestamp:    ", "\n\t  Transmit Timestamp:   "]
        for (index, label) in labels.enumerated() {
            guard let time = message.timestamp(at: 16 + 8 * index) else { return false }
            output.append(label)
            appendNTPTime(time, to: &output)
        }
        let origin = message.timestamp(at: 24)!
        output.append("\n\t    Originator - Receive Timestamp:  ")
        appendNTPDelta(from: origin, to: message.timestamp(at: 32)!, to: &output)
        output.append("\n\t    Originator - Transmit Timestamp: ")
        appendNTPDelta(from: origin, to: message.timestamp(at: 40)!, to: &output)
        // A key id, then a 128- or 160-bit digest (RFC 5905 section 7.3); other lengths are counted.
        let extra = length - NTPMessage.timeMessageLength
        if extra == 4 || extra == 20 || extra == 24 {
            guard let key = message.word(at: 48) else { output.printerRanOutOfBytes = true; return false }
            output.append("\n\tKey id: ")
            output.append(decimal: key)
            if extra > 4 {
                let words = (extra - 4) / 4
                guard message.bytes.count >= 52 + 4 * words else { return false }
                output.append("\n\tAuthentication: ")
                for index in 0..<words { appendHex(message.word(at: 52 + 4 * index)!, digits: 8, to: &output) }
            }
        } else if extra > 0 {
            output.append("\n\t(")
            output.append(decimal: extra)
            output.append(" more bytes after the header)")
        }
        return true
    }

    /// Mode 6 (RFC 1305 appendix B): response, error and more bits, opcode, then the 16-bit header fields.
    private func appendNTPControlFields(_ message: NTPMessage, length: Int, to output: inout TextOutput) -> Bool {
        let headerLength = 12
        guard length >= headerLength else {
            output.append(" (invalid)")
            return message.bytes.count >= length
        }
        guard let control = message.u8(at: 1) else { output.printerRanOutOfBytes = true; return false }
        output.append(control & 0x80 != 0 ? ", Response" : ", Request")
        output.append(control & 0x40 != 0 ? ", Error" : ", OK")
        output.append(control & 0x20 != 0 ? ", More" : ", Last")
        output.append(", OpCode=")
        output.append(decimal: control & 0x1f)
        output.append("\n")
        let fields: [(StaticString, Int)] = [("\tSequence=", 2), (", Status=", 4), (", Assoc.=", 6), (", Offset=", 8),
                                             (", Count=", 10)]
        var count = 0
        for (label, offset) in fields {
            guard let value = message.u16(at: offset) else { output.printerRanOutOfBytes = true; return false }
            output.append(label)
            if offset == 4 && value != 0 {  // printf's %#hx
                output.append("0x")
                output.append(hex: value)
            } else {
                output.append(decimal: value)
            }
            count = Int(value)
        }
        guard headerLength + count <= length else {
            output.append(" (invalid)")
            return message.bytes.count >= length
        }
        if count != 0 {
            guard message.bytes.count >= headerLength + count else { return false }
            output.append("\n\tTO-BE-DONE: data not interpreted")
        }
        return true
    }

    /// 16.16 fixed point as tcpdump's p_sfix: the integer part, then the fraction in millionths.
    private func appendShortFixedPoint(_ word: UInt32, to output: inout TextOutput) {
        output.append(decimal: word >> 16)
        output.append(".")
        output.append(decimal: Int(Double(word & 0xffff) / 65536.0 * 1_000_000.0), width: 6)
    }

    /// 32.32 fixed point seconds since 1900 as tcpdump's p_ntp_time: `seconds.nanoseconds`, and the UTC date
    /// unless the seconds are zero.
    private func appendNTPTime(_ time: UInt64, to output: inout TextOutput) {
        let seconds = UInt32(truncatingIfNeeded: time >> 32)
        appendSecondsAndFraction(seconds, UInt32(truncatingIfNeeded: time), to: &output)
        guard seconds != 0 else { return }
        var unix = time_t(Int64(seconds) - 2_208_988_800)  // 1900 to 1970
        var parts = tm()
        guard gmtime_r(&unix, &parts) != nil else { output.append(" (unrepresentable)"); return }
        output.append(" (")
        output.append(decimal: Int(parts.tm_year) + 1900, width: 4)
        for (separator, value) in [("-", parts.tm_mon + 1), ("-", parts.tm_mday), ("T", parts.tm_hour),
                                   (":", parts.tm_min), (":", parts.tm_sec)] as [(StaticString, Int32)] {
            output.append(separator)
            output.append(decimal: value, width: 2)
        }
        output.append("Z)")
    }

    /// tcpdump's p_ntp_delta: `time - origin` with a sign, or `time` itself when the origin is zero.
    private func appendNTPDelta(from origin: UInt64, to time: UInt64, to output: inout TextOutput) {
        guard origin != 0 else { appendNTPTime(time, to: &output); return }
        let negative = time <= origin && !(time >> 32 == origin >> 32 && UInt32(truncatingIfNeeded: time) > UInt32(truncatingIfNeeded: origin))
        let difference = negative ? origin &- time : time &- origin
        output.append(negative ? "-" : "+")
        appendSecondsAndFraction(UInt32(truncatingIfNeeded: difference >> 32), UInt32(truncatingIfNeeded: difference), to: &output)
    }

    private func appendSecondsAndFraction(_ seconds: UInt32, _ fraction: UInt32, to output: inout TextOutput) {
        output.append(decimal: seconds)
        output.append(".")
        output.append(decimal: UInt32(Double(fraction) / 4_294_967_296.0 * 1_000_000_000.0), width: 9)
    }
}
