import PacketDecoding

/// tcpdump's print-domain.c: `id flags [counts] TYPE? name. (length)` for queries,
/// `id flags a/n/r records (length)` for responses, ` [|domain]` where the capture ends. `-v` adds each record's
/// owner name and SOA fields, `-vv` the question of a response and every other section, `-vvv` TTLs.
extension PacketLineRenderer {
    static let dnsOpcodes: [StaticString] = [
        "", " inv_q", " stat", " op3", " notify", " update", " op6", " op7",
        " op8", " updateA", " updateD", " updateDA", " updateM", " updateMA", " zoneInit", " zoneRef",
    ]
    static let dnsResponseCodes: [StaticString] = [
        "", " FormErr", " ServFail", " NXDomain", " NotImp", " Refused", " YXDomain", " YXRRSet",
        " NXRRSet", " NotAuth", " NotZone", " Resp11", " Resp12", " Resp13", " Resp14", " NoChange",
        " BadVers", "Resp17", " Resp18", " Resp19", " Resp20", "Resp21", " Resp22", " BadCookie",
    ]

    static func isDNSPort(_ port: UInt16) -> Bool { port == 53 }

    /// Over TCP the message follows a two-byte length prefix (RFC 1035 section 4.2.2); `length` is the segment's.
    func appendDNSOverTCP(_ payload: UnsafeRawBufferPointer, length: Int, to output: inout TextOutput) {
        guard length >= 2 else {
            output.append(" [DNS over TCP: length ")
            output.append(decimal: length)
            output.append(" < 2] (invalid)")
            return
        }
        guard payload.count >= 2 else {
            output.append(" [|domain]")
            output.printerRanOutOfBytes = true  // print-domain.c reads the prefix without checking first
            return
        }
        let prefix = DNSMessage(bytes: payload, length: length).u16(at: 0)!
        guard Int(prefix) == length - 2 else {
            output.append(" [prefix length(")
            output.append(decimal: prefix)
            output.append(") != length(")
            output.append(decimal: length - 2)
            output.append(")] (invalid)")
            return
        }
        output.append(" ")
        appendDNS(DNSMessage(bytes: UnsafeRawBufferPointer(rebasing: payload[2...]), length: length - 2), to: &output)
    }

    func appendDNS(_ message: DNSMessage, to output: inout TextOutput) {
        guard message.length >= DNSMessage.headerLength else {
            output.append("domain [length ")
            output.append(decimal: message.length)
            output.append(" < 12] (invalid)")
            return
        }
        guard message.hasHeader else { output.append(" [|domain]"); return }
        if appendDNSSections(message, to: &output) {
            output.append(" (")
            output.append(decimal: message.length)
            output.append(")")
        } else {
            output.append(" [|domain]")
        }
    }

    /// Everything before the length; false where tcpdump gives up (`[|domain]`).
    private func appendDNSSections(_ message: DNSMessage, to output: inout TextOutput) -> Bool {
        let end = message.bytes.count
        var at = DNSMessage.headerLength
        output.append(decimal: message.id)
        output.append(Self.dnsOpcodes[Int(message.opcode)])
        if message.isResponse {
            let code = Int(message.responseCode)
            if code < Self.dnsResponseCodes.count {
                output.append(Self.dnsResponseCodes[code])
            } else {
                output.append(" Resp")
                output.append(decimal: code & 0xfff)
            }
            if message.authoritative { output.append("*") }
            if !message.recursionAvailable { output.append("-") }
            if message.truncated { output.append("|") }
            if message.authenticData { output.append("$") }
            if message.questionCount != 1 {
                output.append(" [")
                output.append(decimal: message.questionCount)
                output.append("q]")
            }
            for index in 0..<message.questionCount {
                if options.verbosity > 1 {
                    if index > 0 { output.append(",") }
                    output.append(" q:")
                    guard appendDNSQuestion(message, at: &at, to: &output) else { return false }
                } else {
                    guard let next = message.skipName(at: at) else { return false }
                    at = next + 4
                }
            }
            output.append(" ")
            output.append(decimal: message.answerCount)
            output.append("/")
            output.append(decimal: message.authorityCount)
            output.append("/")
            output.append(decimal: message.additionalCount)
            guard appendDNSRecords(message, count: message.answerCount, at: &at, to: &output) else { return false }
            return options.verbosity < 2 || appendDNSOtherSections(message, at: &at, to: &output)
        }
        output.append(message.recursionDesired ? "+" : "")
        if message.checkingDisabled { output.append("%") }
        if message.flags & 0x6cf != 0 {
            output.append(" [b2&3=0x")
            output.append(hex: message.flags)
            output.append("]")
        }
        func count(_ value: Int, _ suffix: StaticString) {
            output.append(" [")
            output.append(decimal: value)
            output.append(suffix)
        }
        if message.opcode == 1 {
            if message.questionCount != 0 { count(message.questionCount, "q]") }
            if message.answerCount != 1 { count(message.answerCount, "a]") }
        } else {
            if message.answerCount != 0 { count(message.answerCount, "a]") }
            if message.questionCount != 1 { count(message.questionCount, "q]") }
        }
        if message.authorityCount != 0 { count(message.authorityCount, "n]") }
        if message.additionalCount != 0 { count(message.additionalCount, "au]") }
        var remaining = message.questionCount
        var first = true
        while remaining > 0 && (first || at < end) {
            first = false
            guard appendDNSQuestion(message, at: &at, to: &output) else { return false }
            remaining -= 1
        }
        guard remaining == 0 else { return false }
        guard options.verbosity > 1 else { return true }
        return appendDNSRecords(message, count: message.answerCount, at: &at, to: &output)
            && appendDNSOtherSections(message, at: &at, to: &output)
    }

    /// ` TYPE? name.` (tcpdump's ns_qprint).
    private func appendDNSQuestion(_ message: DNSMessage, at offset: inout Int, to output: inout TextOutput) -> Bool {
        guard let question = message.question(at: offset) else { return false }
        output.append(" ")
        appendDNSType(question.type, to: &output)
        if question.qclass != 1 {
            output.append(" ")
            appendDNSClass(question.qclass, to: &output)
        }
        output.append("? ")
        guard appendDNSName(message, at: offset, to: &output) else { return false }
        offset = question.end
        return true
    }

    /// `count` records, comma-separated, stopping early where the capture ends; false where tcpdump gives up.
    private func appendDNSRecords(_ message: DNSMessage, count: Int, at offset: inout Int,
                                  to output: inout TextOutput) -> Bool {
        var remaining = count
        var first = true
        while remaining > 0 && (first || offset < message.bytes.count) {
            if !first { output.append(",") }
            first = false
            guard let next = appendDNSRecord(message, at: offset, to: &output) else { return false }
            offset = next
            remaining -= 1
        }
        return remaining == 0
    }

    /// -vv: ` ns:` and ` ar:` sections, each printed when records remain and bytes were captured.
    private func appendDNSOtherSections(_ message: DNSMessage, at offset: inout Int,
                                        to output: inout TextOutput) -> Bool {
        for (count, label) in [(message.authorityCount, " ns:" as StaticString), (message.additionalCount, " ar:")] {
            guard count > 0 else { continue }
            guard offset < message.bytes.count else { return false }
            output.append(label)
            guard appendDNSRecords(message, count: count, at: &offset, to: &output) else { return false }
        }
        return true
    }

    /// One answer as tcpdump's ns_rprint prints it without -v; returns where the next record starts, or nil
    /// when the capture ends inside it. A record whose fixed part was not captured ends the list (`end`).
    private func appendDNSRecord(_ message: DNSMessage, at offset: Int, to output: inout TextOutput) -> Int? {
        if options.verbosity > 0 {
            output.append(" ")
            guard appendDNSName(message, at: offset, to: &output) else { return nil }
        }
        guard let record = message.record(at: offset) else { return message.bytes.count }
        if record.rclass != 1 && record.type != 41 {
            output.append(" ")
            appendDNSClass(record.rclass, to: &output)
        }
        if options.verbosity > 2 && record.type != 41 {
            output.append(" [")
            appendRelativeTime(record.ttl, to: &output)
            output.append("]")
        }
        output.append(" ")
        appendDNSType(record.type, to: &output)
        guard record.dataEnd <= message.bytes.count, let data = message.data(of: record) else { return nil }
        switch data {
        case .address(let address):
            output.append(" ")
            output.append(address)
        case .name(let name):
            output.append(" ")
            guard appendDNSName(message, at: name, to: &output) else { return nil }
        case .mailExchange(let preference, let name):
            output.append(" ")
            guard appendDNSName(message, at: name, to: &output) else { return nil }
            output.append(" ")
            output.append(decimal: preference)
        case .service(let priority, let weight, let port, let name):
            output.append(" ")
            guard appendDNSName(message, at: name, to: &output) else { return nil }
            output.append(":")
            output.append(decimal: port)
            output.append(" ")
            output.append(decimal: priority)
            output.append(" ")
            output.append(decimal: weight)
        case .text(let strings):
            for string in strings {
                output.append(" \"")
                switch string {
                case .string(let text): appendPrintable(text, to: &output)
                case .cut(let text):
                    appendPrintable(text, to: &output)
                    return nil
                }
                output.append("\"")
            }
        case .options(let size, _, let dnssecOK):
            output.append(" UDPsize=")
            output.append(decimal: size)
            if dnssecOK { output.append(" DO") }
        case .startOfAuthority(let primary):
            guard options.verbosity > 0 else { break }
            output.append(" ")
            guard appendDNSName(message, at: primary, to: &output), let mailbox = message.skipName(at: primary) else { return nil }
            output.append(" ")
            guard appendDNSName(message, at: mailbox, to: &output), let numbers = message.skipName(at: mailbox),
                  numbers + 20 <= message.bytes.count else { return nil }
            for index in 0..<5 {
                output.append(" ")
                output.append(decimal: message.u32(at: numbers + 4 * index)!)
            }
        case .other:
            break
        }
        return record.dataEnd
    }

    /// tcpdump's unsigned_relts_print: `1d2h3m4s`, `0s`.
    func appendRelativeTime(_ seconds: UInt32, to output: inout TextOutput) {
        guard seconds > 0 else { output.append("0s"); return }
        var left = seconds
        for (unit, suffix) in [(UInt32(31_536_000), "y" as StaticString), (604_800, "w"), (86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")]
        where left >= unit {
            output.append(decimal: left / unit)
            output.append(suffix)
            left %= unit
        }
    }

    /// A name as tcpdump's fqdn_print prints it: labels and dots, `.` for the root; false when it cannot finish.
    func appendDNSName(_ message: DNSMessage, at offset: Int, to output: inout TextOutput) -> Bool {
        var printed = 0
        var labels = 0
        for element in message.name(at: offset) {
            switch element {
            case .label(let label):
                labels += 1
                if printed + label.count <= DNSMessage.maximumNameLength {
                    appendPrintable(label, to: &output)
                } else if printed < DNSMessage.maximumNameLength {
                    appendPrintable(UnsafeRawBufferPointer(rebasing: label[0..<(DNSMessage.maximumNameLength - printed)]), to: &output)
                }
                printed += label.count
                if printed <= DNSMessage.maximumNameLength { output.append(".") }
                printed += 1
            case .bitLabel(let bits, let bytes):
                labels += 1
                output.append("\\[x")
                var remaining = bits
                var index = 0
                while index < bytes.count && remaining > 7 {
                    output.append(hexByte: bytes[index])
                    remaining -= 8
                    index += 1
                }
                if remaining > 4, index < bytes.count {
                    output.append(hexByte: bytes[index] & UInt8(truncatingIfNeeded: 0xff << (8 - remaining)))
                } else if remaining > 0, index < bytes.count {
                    output.append(hex: UInt16((bytes[index] >> 4) & 0x0f & UInt8(truncatingIfNeeded: 0x0f << (4 - remaining))))
                }
                output.append("/")
                output.append(decimal: bits)
                output.append("].")
                printed += 1
            case .badPointer:
                output.append("<BAD PTR>")
                return false
            case .badLabelType:
                output.append("<BAD LABEL TYPE>")
                return false
            case .unknownExtendedLabel(let type):
                output.append("<ELT ")
                output.append(decimal: type)
                output.append(">")
                return false
            case .truncated:
                return false
            case .cutLabel(let captured):
                appendPrintable(captured, to: &output)
                return false
            }
        }
        if labels == 0 { output.append(".") }
        if printed > DNSMessage.maximumNameLength { output.append("<DOMAIN NAME TOO LONG>") }
        return true
    }

    /// tcpdump's fn_print_char: high bytes as `M-x`, control characters as `^X`.
    func appendPrintable(_ bytes: UnsafeRawBufferPointer, to output: inout TextOutput) {
        for c in bytes { appendPrintable(c, to: &output) }
    }

    func appendPrintable(_ byte: UInt8, to output: inout TextOutput) {
        var c = byte
        if c >= 0x80 {
            output.append("M-")
            c &= 0x7f
        }
        if c < 0x20 || c == 0x7f {
            output.append("^")
            c ^= 0x40
        }
        output.append(c)
    }

    func appendDNSClass(_ value: UInt16, to output: inout TextOutput) {
        switch value {
        case 1: output.append("IN")
        case 3: output.append("CHAOS")
        case 4: output.append("HS")
        case 255: output.append("ANY")
        default:
            output.append("(Class ")
            output.append(decimal: value)
            output.append(")")
        }
    }

    /// Type names as tcpdump 4.99.3 knows them (it prints SVCB and HTTPS as Type64 and Type65).
    func appendDNSType(_ value: UInt16, to output: inout TextOutput) {
        let name: StaticString
        switch value {
        case 1: name = "A"
        case 2: name = "NS"
        case 3: name = "MD"
        case 4: name = "MF"
        case 5: name = "CNAME"
        case 6: name = "SOA"
        case 7: name = "MB"
        case 8: name = "MG"
        case 9: name = "MR"
        case 10: name = "NULL"
        case 11: name = "WKS"
        case 12: name = "PTR"
        case 13: name = "HINFO"
        case 14: name = "MINFO"
        case 15: name = "MX"
        case 16: name = "TXT"
        case 17: name = "RP"
        case 18: name = "AFSDB"
        case 19: name = "X25"
        case 20: name = "ISDN"
        case 21: name = "RT"
        case 22: name = "NSAP"
        case 23: name = "NSAP_PTR"
        case 24: name = "SIG"
        case 25: name = "KEY"
        case 26: name = "PX"
        case 27: name = "GPOS"
        case 28: name = "AAAA"
        case 29: name = "LOC"
        case 30: name = "NXT"
        case 31: name = "EID"
        case 32: name = "NIMLOC"
        case 33: name = "SRV"
        case 34: name = "ATMA"
        case 35: name = "NAPTR"
        case 36: name = "KX"
        case 37: name = "CERT"
        case 38: name = "A6"
        case 39: name = "DNAME"
        case 40: name = "SINK"
        case 41: name = "OPT"
        case 42: name = "APL"
        case 43: name = "DS"
        case 44: name = "SSHFP"
        case 45: name = "IPSECKEY"
        case 46: name = "RRSIG"
        case 47: name = "NSEC"
        case 48: name = "DNSKEY"
        case 49: name = "DHCID"
        case 50: name = "NSEC3"
        case 51: name = "NSEC3PARAM"
        case 52: name = "TLSA"
        case 53: name = "SMIMEA"
        case 55: name = "HIP"
        case 56: name = "NINFO"
        case 57: name = "RKEY"
        case 58: name = "TALINK"
        case 59: name = "CDS"
        case 60: name = "CDNSKEY"
        case 61: name = "OPENPGPKEY"
        case 62: name = "CSYNC"
        case 63: name = "ZONEMD"
        case 99: name = "SPF"
        case 100: name = "UINFO"
        case 101: name = "UID"
        case 102: name = "GID"
        case 103: name = "UNSPEC"
        case 104: name = "NID"
        case 105: name = "L32"
        case 106: name = "L64"
        case 107: name = "LP"
        case 108: name = "EUI48"
        case 109: name = "EUI64"
        case 249: name = "TKEY"
        case 250: name = "TSIG"
        case 251: name = "IXFR"
        case 252: name = "AXFR"
        case 253: name = "MAILB"
        case 254: name = "MAILA"
        case 255: name = "ANY"
        case 256: name = "URI"
        case 257: name = "CAA"
        case 258: name = "AVC"
        case 259: name = "DOA"
        case 260: name = "AMTRELAY"
        case 32768: name = "TA"
        case 32769: name = "DLV"
        default:
            output.append("Type")
            output.append(decimal: value)
            return
        }
        output.append(name)
    }
}
