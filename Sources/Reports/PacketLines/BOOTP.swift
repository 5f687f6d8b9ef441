import PacketDecoding

/// tcpdump's print-bootp.c. The summary line: `BOOTP/DHCP, Request from MAC, length N` (the client's Ethernet
/// address on requests) or `BOOTP/DHCP, Reply, length N`. With -v: the header fields that are set (hops, xid,
/// secs, flags, the four addresses, the client's hardware address, server name and boot file), then the vendor
/// area: RFC 1048 options one per line with tcpdump's names and value formats, or CMU's fixed fields.
/// ` [|bootp]` wherever the capture ends first.
extension PacketLineRenderer {
    func appendBOOTP(_ message: BOOTPMessage, length: Int, to output: inout TextOutput) {
        do throws(BOOTPCut) {
            try appendBOOTPSummary(message, length: length, to: &output)
            if options.verbosity > 0 { try appendBOOTPFields(message, to: &output) }
        } catch {
            output.append(" [|bootp]")
            output.printerRanOutOfBytes = error.ranOutOfBytes
        }
    }

    private func appendBOOTPSummary(_ message: BOOTPMessage, length: Int, to output: inout TextOutput) throws(BOOTPCut) {
        let operation = try message.byte(0)
        output.append("BOOTP/DHCP, ")
        switch operation {
        case BOOTPMessage.request: output.append("Request")
        case BOOTPMessage.reply: output.append("Reply")
        default:
            output.append("unknown (0x")
            output.append(hexByte: operation)
            output.append(")")
        }
        let hardwareType = try message.byte(1), hardwareLength = try message.byte(2)
        if hardwareType == 1 && hardwareLength == 6 && operation == BOOTPMessage.request {
            let client = try message.ethernet(28)
            output.append(" from ")
            output.append(client)
        }
        output.append(", length ")
        output.append(decimal: length)
    }

    private func appendBOOTPFields(_ message: BOOTPMessage, to output: inout TextOutput) throws(BOOTPCut) {
        guard message.u16(at: 8) != nil else { throw BOOTPCut(ranOutOfBytes: false) }
        let hardwareType = try message.byte(1), hardwareLength = try message.byte(2)
        let ethernet = hardwareType == 1 && hardwareLength == 6
        if hardwareType != 1 { appendField(", htype ", decimal: hardwareType, to: &output) }
        if !ethernet { appendField(", hlen ", decimal: hardwareLength, to: &output) }
        let hops = try message.byte(3)
        if hops != 0 { appendField(", hops ", decimal: hops, to: &output) }
        let transaction = try message.word(4)
        if transaction != 0 {
            output.append(", xid 0x")
            appendHex(transaction, to: &output)
        }
        let seconds = try message.short(8)
        if seconds != 0 { appendField(", secs ", decimal: seconds, to: &output) }
        let flags = try message.short(10)
        output.append(flags & 0x8000 != 0 ? ", Flags [Broadcast]" : ", Flags [none]")
        if options.verbosity > 1 {
            output.append(" (0x")
            appendHex4(flags, to: &output)
            output.append(")")
        }
        let addresses: [(Int, StaticString)] = [(12, "Client-IP"), (16, "Your-IP"), (20, "Server-IP"), (24, "Gateway-IP")]
        for (offset, label) in addresses {
            let address = try message.word(offset)
            guard address != 0 else { continue }
            output.append("\n\t  ")
            output.append(label)
            output.append(" ")
            output.append(IPAddress.v4(address))
        }
        if ethernet {
            let client = try message.ethernet(28)
            output.append("\n\t  Client-Ethernet-Address ")
            output.append(client)
        }
        try appendBOOTPName(message, label: "sname", offset: 44, size: 64, to: &output)
        try appendBOOTPName(message, label: "file", offset: 108, size: 128, to: &output)
        guard let vendor = message.u32(at: BOOTPMessage.cookieOffset) else { throw BOOTPCut(ranOutOfBytes: false) }
        if vendor == BOOTPMessage.magicCookie {
            try appendRFC1048Options(message, to: &output)
        } else if vendor == 0x434d_5500 {  // "CMU\0"
            try appendCMUVendorArea(message, to: &output)
        } else if vendor != 0 {
            output.append("\n\t  Vendor-#0x")
            appendHex(vendor, to: &output)
        }
    }

    private func appendField<T: BinaryInteger>(_ label: StaticString, decimal value: T, to output: inout TextOutput) {
        output.append(label)
        output.append(decimal: value)
    }

    /// `sname` and `file`: shown when their first byte is set, up to the NUL; a field with no NUL inside it (or
    /// cut by the capture) ends the message as truncated, as tcpdump's nd_printztn does.
    private func appendBOOTPName(_ message: BOOTPMessage, label: StaticString, offset: Int, size: Int,
                                 to output: inout TextOutput) throws(BOOTPCut) {
        guard try message.byte(offset) != 0 else { return }
        output.append("\n\t  ")
        output.append(label)
        output.append(" \"")
        for index in offset..<min(offset + size, message.bytes.count) {
            let c = message.bytes[index]
            if c == 0 {
                output.append("\"")
                return
            }
            appendPrintable(c, to: &output)
        }
        output.append("\"")
        throw BOOTPCut(ranOutOfBytes: false)
    }

    private func appendRFC1048Options(_ message: BOOTPMessage, to output: inout TextOutput) throws(BOOTPCut) {
        output.append("\n\t  Vendor-rfc1048 Extensions\n\t    Magic Cookie 0x")
        appendHex(BOOTPMessage.magicCookie, digits: 8, to: &output)
        let bytes = message.bytes
        let verbosity = options.verbosity
        var at = BOOTPMessage.cookieOffset + 4
        while at < bytes.count {
            let code = bytes[at]
            at += 1
            if code == 0 && verbosity < 3 { continue }
            if code == 255 && verbosity < 3 { return }
            let option = DHCPOption.named[Int(code)]
            var length = 0
            if code != 0 && code != 255 {
                length = Int(try message.byte(at))
                at += 1
            }
            output.append("\n\t    ")
            output.append(option.name)
            output.append(" (")
            output.append(decimal: code)
            output.append("), length ")
            output.append(decimal: length)
            if length > 0 { output.append(": ") }
            if code == 0 {
                var pads = 1
                while at < bytes.count && bytes[at] == 0 { at += 1; pads += 1 }
                if pads > 1 { appendField(", occurs ", decimal: pads, to: &output) }
            }
            guard at + length <= bytes.count else { throw BOOTPCut(ranOutOfBytes: false) }
            let value = UnsafeRawBufferPointer(rebasing: bytes[at..<at + length])
            at += length
            let unread = appendDHCPOptionValue(code: code, format: option.format, value, to: &output)
            if unread > 0 { appendField("\n\t  trailing data length ", decimal: unread, to: &output) }
        }
    }

    /// Prints one option's value in its format; returns how many bytes at its end the format left unread.
    private func appendDHCPOptionValue(code: UInt8, format: DHCPOption.Format, _ value: UnsafeRawBufferPointer,
                                       to output: inout TextOutput) -> Int {
        let length = value.count
        if code == 53 && length == 1 {
            let type = Int(value[0])
            if type < DHCPOption.messageTypes.count, let name = DHCPOption.messageTypes[type] {
                output.append(name)
            } else {
                appendField("Unknown (", decimal: type, to: &output)
                output.append(")")
            }
            return 0
        }
        if code == 55 {
            for (index, requested) in value.enumerated() {
                output.append(index % 4 == 0 ? "\n\t      " : ", ")
                output.append(DHCPOption.named[Int(requested)].name)
                appendField(" (", decimal: requested, to: &output)
                output.append(")")
            }
            return 0
        }
        var format = format
        if format == .unknown { format = length & 1 != 0 ? .bytes : length & 2 != 0 ? .shorts : .unsignedWords }
        switch format {
        case .text:
            appendQuoted(value, to: &output)
            return 0
        case .addresses, .unsignedWords, .signedWords:
            for index in 0..<length / 4 {
                if index > 0 { output.append(",") }
                let word = value.loadBigEndianWord(4 * index)
                switch format {
                case .addresses: output.append(IPAddress.v4(word))
                case .signedWords: output.append(decimal: Int32(bitPattern: word))
                default: output.append(decimal: word)
                }
            }
            return length % 4
        case .addressPairs:
            for index in 0..<length / 8 {
                if index > 0 { output.append(",") }
                output.append("(")
                output.append(IPAddress.v4(value.loadBigEndianWord(8 * index)))
                output.append(":")
                output.append(IPAddress.v4(value.loadBigEndianWord(8 * index + 4)))
                output.append(")")
            }
            return length % 8
        case .shorts:
            for index in 0..<length / 2 {
                if index > 0 { output.append(",") }
                output.append(decimal: UInt16(value[2 * index]) << 8 | UInt16(value[2 * index + 1]))
            }
            return length % 2
        case .booleans:
            for (index, byte) in value.enumerated() {
                if index > 0 { output.append(",") }
                switch byte {
                case 0: output.append("N")
                case 1: output.append("Y")
                default: appendField("", decimal: byte, to: &output); output.append("?")
                }
            }
            return 0
        case .bytes, .unknown:
            for (index, byte) in value.enumerated() {
                if index > 0 { output.append(".") }
                output.append(decimal: byte)
            }
            return 0
        case .special:
            return appendSpecialDHCPOption(code: code, value, to: &output)
        }
    }

    private func appendSpecialDHCPOption(code: UInt8, _ value: UnsafeRawBufferPointer, to output: inout TextOutput) -> Int {
        let length = value.count
        switch code {
        case 46, 52:  // NetBIOS node type, option overload
            guard length >= 1 else { output.append("[ERROR: length < 1 bytes]"); return 0 }
            let names: [UInt8: StaticString] = code == 46
                ? [1: "b-node", 2: "p-node", 4: "m-node", 8: "h-node"] : [1: "file", 2: "sname", 3: "file+sname"]
            if let name = names[value[0]] { output.append(name) } else { appendField("#", decimal: value[0], to: &output) }
            return length - 1
        case 81:  // client FQDN (RFC 4702): flags, two RCODEs, the name
            guard length >= 3 else { output.append("[ERROR: length < 3 bytes]"); return 0 }
            let flags = value[0]
            if flags & 0xf0 != 0 {
                output.append("[ERROR: MBZ nibble 0x")
                appendHex(UInt32(flags >> 4), to: &output)
                output.append(" != 0] ")
            }
            if flags & 0x0f != 0 {
                output.append("[")
                for (bit, letter) in [(UInt8(1), "S"), (2, "O"), (4, "E"), (8, "N")] as [(UInt8, StaticString)] where flags & bit != 0 {
                    output.append(letter)
                }
                output.append("] ")
            }
            if value[1] != 0 || value[2] != 0 {
                output.append(decimal: value[1])
                appendField("/", decimal: value[2], to: &output)
                output.append(" ")
            }
            appendQuoted(UnsafeRawBufferPointer(rebasing: value[3...]), to: &output)
            return 0
        case 61:  // client identifier: type 0 is text, others a hardware type and address
            guard length >= 1 else { output.append("[ERROR: length < 1 bytes]"); return 0 }
            let rest = UnsafeRawBufferPointer(rebasing: value[1...])
            if value[0] == 0 {
                appendQuoted(rest, to: &output)
                return 0
            }
            let hardware: [UInt8: StaticString] = [1: "ether", 6: "ieee802", 7: "arcnet", 15: "frelay", 23: "strip", 24: "ieee1394"]
            if let name = hardware[value[0]] { output.append(name) } else { appendField("hardware-type ", decimal: value[0], to: &output); output.append(",") }
            output.append(" ")
            for (index, byte) in rest.enumerated() {
                if index > 0 { output.append(":") }
                output.append(hexByte: byte)
            }
            return 0
        case 82:  // relay agent information (RFC 3046): sub-options
            var at = 0
            while length - at >= 2 {
                let suboption = value[at], sublength = Int(value[at + 1])
                at += 2
                output.append("\n\t      ")
                switch suboption {
                case 1: output.append("Circuit-ID")
                case 2: output.append("Remote-ID")
                case 6: output.append("Subscriber-ID")
                default: output.append("Unknown")
                }
                appendField(" SubOption ", decimal: suboption, to: &output)
                appendField(", length ", decimal: sublength, to: &output)
                guard sublength <= length - at else {
                    output.append(": length goes past end of option")
                    return 0
                }
                output.append(": ")
                let data = UnsafeRawBufferPointer(rebasing: value[at..<at + sublength])
                if [1, 2, 6].contains(suboption) { appendPrintable(data, to: &output) } else { appendHex(data, indent: "\n\t\t", to: &output) }
                at += sublength
            }
            return length - at
        case 121, 249:  // classless static routes (RFC 3442): width, significant octets, router
            guard length >= 5 else { output.append("[ERROR: length < 5 bytes]"); return 0 }
            var at = 0
            while at < length {
                if at > 0 { output.append(",") }
                let width = Int(value[at])
                at += 1
                guard width <= 32 else {
                    appendField("[ERROR: Mask width (", decimal: width, to: &output)
                    output.append(") > 32]")
                    return 0
                }
                let significant = (width + 7) / 8
                guard length - at >= significant + 4 else {
                    appendField("[ERROR: Remaining length (", decimal: length - at, to: &output)
                    appendField(") < ", decimal: significant + 4, to: &output)
                    output.append(" bytes]")
                    return 0
                }
                output.append("(")
                if width == 0 {
                    output.append("default")
                } else {
                    for octet in 0..<4 {
                        if octet > 0 { output.append(".") }
                        output.append(decimal: octet < significant ? value[at + octet] : 0)
                    }
                    appendField("/", decimal: width, to: &output)
                }
                at += significant
                output.append(":")
                output.append(IPAddress.v4(value.loadBigEndianWord(at)))
                output.append(")")
                at += 4
            }
            return 0
        case 77:  // user class (RFC 3004): counted instances
            guard length >= 2 else { output.append("[ERROR: length < 2 bytes]"); return 0 }
            var at = 0, instance = 1
            while at < length {
                let sublength = Int(value[at])
                at += 1
                appendField("\n\t      instance#", decimal: instance, to: &output)
                output.append(": ")
                guard sublength > 0 else { output.append("[ERROR: suboption length must be non-zero]"); return 0 }
                guard sublength <= length - at else { output.append("[ERROR: invalid option]"); return 0 }
                appendQuoted(UnsafeRawBufferPointer(rebasing: value[at..<at + sublength]), to: &output)
                appendField(", length ", decimal: sublength, to: &output)
                at += sublength
                instance += 1
            }
            return 0
        default:
            return 0
        }
    }

    /// CMU's vendor area: flags, then each address that is set (default gateway first, as tcpdump prints them).
    private func appendCMUVendorArea(_ message: BOOTPMessage, to output: inout TextOutput) throws(BOOTPCut) {
        let base = BOOTPMessage.cookieOffset
        output.append(" vend-cmu")
        guard let flags = message.u8(at: base + 4), message.u32(at: base + 4) != nil else {
            throw BOOTPCut(ranOutOfBytes: false)
        }
        if flags & ~1 != 0 {
            output.append(" F:0x")
            appendHex(UInt32(flags), to: &output)
        }
        let fields: [(Int, StaticString)] = [(12, "DG"), (8, flags & 1 != 0 ? "SM" : "SM*"), (16, "NS1"), (20, "NS2"),
                                             (24, "IEN1"), (28, "IEN2"), (32, "TS1"), (36, "TS2")]
        for (offset, label) in fields {
            guard let address = message.u32(at: base + offset) else { throw BOOTPCut(ranOutOfBytes: false) }
            guard address != 0 else { continue }
            output.append(" ")
            output.append(label)
            output.append(":")
            output.append(IPAddress.v4(address))
        }
    }

    private func appendQuoted(_ bytes: UnsafeRawBufferPointer, to output: inout TextOutput) {
        output.append("\"")
        appendPrintable(bytes, to: &output)
        output.append("\"")
    }
}

/// The capture ended inside the message. `ranOutOfBytes`: where print-bootp.c reads a field past the captured
/// bytes (a long jump out of the printer); false where it checks a length first and ends the line itself.
struct BOOTPCut: Error {
    var ranOutOfBytes = true
}

extension BOOTPMessage {
    fileprivate func byte(_ offset: Int) throws(BOOTPCut) -> UInt8 {
        guard let value = u8(at: offset) else { throw BOOTPCut() }
        return value
    }
    fileprivate func short(_ offset: Int) throws(BOOTPCut) -> UInt16 {
        guard let value = u16(at: offset) else { throw BOOTPCut() }
        return value
    }
    fileprivate func word(_ offset: Int) throws(BOOTPCut) -> UInt32 {
        guard let value = u32(at: offset) else { throw BOOTPCut() }
        return value
    }
    fileprivate func ethernet(_ offset: Int) throws(BOOTPCut) -> MACAddress {
        guard let value = ethernetAddress(at: offset) else { throw BOOTPCut() }
        return value
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func loadBigEndianWord(_ offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

/// The DHCP and BOOTP options tcpdump names (RFC 1048, 1497, 2132 and later), with the format it prints each in.
enum DHCPOption {
    enum Format {
        case text, addresses, addressPairs, unsignedWords, signedWords, shorts, bytes, booleans, special, unknown
    }

    /// Indexed by option code; codes tcpdump does not name are `Unknown`, printed by their length.
    static let named: [(name: String, format: Format)] = {
        var table = Array(repeating: (name: "Unknown", format: Format.unknown), count: 256)
        let known: [(UInt8, String, Format)] = [
            (0, "PAD", .bytes), (1, "Subnet-Mask", .addresses), (2, "Time-Zone", .signedWords),
            (3, "Default-Gateway", .addresses), (4, "Time-Server", .addresses), (5, "IEN-Name-Server", .addresses),
            (6, "Domain-Name-Server", .addresses), (7, "LOG", .addresses), (8, "CS", .addresses),
            (9, "LPR-Server", .addresses), (10, "IM", .addresses), (11, "RL", .addresses), (12, "Hostname", .text),
            (13, "BS", .shorts), (14, "DP", .text), (15, "Domain-Name", .text), (16, "SS", .addresses),
            (17, "RP", .text), (18, "EP", .text), (19, "IPF", .booleans), (20, "SRT", .booleans),
            (21, "PF", .addressPairs), (22, "RSZ", .shorts), (23, "TTL", .bytes), (24, "MTU-Timeout", .unsignedWords),
            (25, "MTU-Table", .shorts), (26, "MTU", .shorts), (27, "LSN", .booleans), (28, "BR", .addresses),
            (29, "MD", .booleans), (30, "MS", .booleans), (31, "Router-Discovery", .booleans), (32, "RSA", .addresses),
            (33, "Static-Route", .addressPairs), (34, "UT", .booleans), (35, "AT", .unsignedWords), (36, "IE", .booleans),
            (37, "TT", .bytes), (38, "KI", .unsignedWords), (39, "KG", .booleans), (40, "YD", .text),
            (41, "YS", .addresses), (42, "NTP", .addresses), (43, "Vendor-Option", .bytes),
            (44, "Netbios-Name-Server", .addresses), (45, "WDD", .addresses), (46, "Netbios-Node", .special),
            (47, "Netbios-Scope", .text), (48, "XFS", .addresses), (49, "XDM", .addresses),
            (50, "Requested-IP", .addresses), (51, "Lease-Time", .unsignedWords), (52, "OO", .special),
            (53, "DHCP-Message", .bytes), (54, "Server-ID", .addresses), (55, "Parameter-Request", .bytes),
            (56, "MSG", .text), (57, "MSZ", .shorts), (58, "RN", .unsignedWords), (59, "RB", .unsignedWords),
            (60, "Vendor-Class", .text), (61, "Client-ID", .special), (64, "N+D", .shorts), (65, "N+S", .addresses),
            (66, "TFTP", .text), (67, "BF", .text), (68, "MH", .addresses), (69, "SMTP", .addresses),
            (70, "POP3", .addresses), (71, "NNTP", .addresses), (72, "WWW", .addresses), (73, "FG", .addresses),
            (74, "IRC", .addresses), (75, "STS", .addresses), (76, "STDA", .addresses), (77, "User-Class", .special),
            (78, "SLP-DA", .bytes), (79, "SLP-SCOPE", .bytes), (80, "SLP-NA", .text), (81, "FQDN", .special),
            (82, "Agent-Information", .special), (83, "ARMT", .bytes), (88, "TZSTR", .text), (89, "FQDNS", .bytes),
            (90, "AUTH", .bytes), (91, "Last-Transaction-Time", .signedWords), (92, "Associated-IP", .addresses),
            (93, "ARCH", .shorts), (94, "NDI", .bytes), (95, "LDAP", .text), (97, "GUID", .bytes), (98, "UAP", .text),
            (100, "POSIX-TZ", .text), (101, "TZ-Name", .text), (112, "NI", .addresses), (113, "NITAG", .text),
            (114, "URL", .text), (116, "NOAUTO", .booleans), (117, "NSSEARCH", .shorts), (118, "SUBNET", .addresses),
            (121, "Classless-Static-Route", .special), (150, "TFTP-Server-Address", .addresses),
            (161, "MUD-URL", .text), (249, "Classless-Static-Route-Microsoft", .special), (255, "END", .bytes),
        ]
        for (code, name, format) in known { table[Int(code)] = (name, format) }
        return table
    }()

    /// RFC 2132 and RFC 4388 message types (option 53) as tcpdump names them.
    static let messageTypes: [StaticString?] = [
        nil, "Discover", "Offer", "Request", "Decline", "ACK", "NACK", "Release", "Inform", nil,
        "LeaseQuery", "LeaseUnassigned", "LeaseUnknown", "LeaseActive",
    ]
}
