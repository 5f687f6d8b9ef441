import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

/// Renders packets as one line each, in the format of `tcpdump -n` (or `tcpdump -nq` when `quiet`).
///
/// Keeps tcpdump's per-conversation state so TCP sequence numbers print relative to the first seen, exactly as
/// tcpdump does without `-S`. That table grows by one entry per TCP conversation (not per packet).
public struct PacketLineRenderer {
    public struct Options: Sendable {
        /// `-q`: the short form (`tcp 269`, `UDP, length 40`).
        public var quiet = false
        /// `-t`: no timestamp.
        public var showTimestamp = true
        /// `-A`: the packet (from the network header) as ASCII after the line.
        public var ascii = false
        /// `-X`: hex and ASCII dump after the line.
        public var hexAndASCII = false
        /// Print timestamps in UTC rather than local time.
        public var utc = false
        public init() {}
    }

    public var options: Options
    /// Conversations remembered for relative sequence numbers (tcpdump's table has no limit).
    public static let maximumConversations = 1 << 16
    private var sequenceBases: [ConversationKey: SequenceBase] = [:]
    private var cachedSecond: Int64 = .min
    private var cachedClock: (hour: Int32, minute: Int32, second: Int32) = (0, 0, 0)
    private var interfaceNames: [UInt32: String] = [:]

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Appends the line (and any `-A`/`-X` dump) for `packet`, whose bytes are `frame`, to `output`.
    public mutating func render(_ packet: DecodedPacket, frame: UnsafeRawBufferPointer, to output: inout PacketOutput) {
        if options.showTimestamp {
            appendTime(packet.timestamp, to: &output)
            output.append(UInt8(ascii: " "))
        }
        if packet.link.kind == .linuxCooked2, let index = packet.link.interfaceIndex {
            appendInterfacePrefix(index: index, packetType: packet.link.packetType ?? 0, to: &output)
        }
        switch packet.network {
        case .ipv4(let header):
            renderIPv4(packet, header, frame: frame, to: &output)
        case .ipv6(let header):
            renderIPv6(packet, header, frame: frame, to: &output)
        case .arp(let arp):
            renderARP(arp, packet: packet, to: &output)
        case .other(let etherType):
            output.append("ethertype ")
            appendEtherTypeName(etherType, to: &output)
            output.append(", length ")
            output.append(decimal: packet.originalLength)
        case .none:
            if let error = packet.error, error.layer == .ipv4 || error.layer == .ipv6 {
                output.append(error.layer == .ipv4 ? "IP  [|ip]" : "IP6  [|ip6]")
            } else if packet.error != nil {
                // The link header itself was cut: tcpdump's marker names the link protocol.
                output.append(" [|")
                switch packet.linkType {
                case .nflog: output.append("nflog")
                case .linuxSLL: output.append("sll")
                case .linuxSLL2: output.append("sll2")
                case .null, .loop: output.append("null")
                case .ethernet: output.append("ether")
                default: output.append("raw")
                }
                output.append("]")
            } else {
                output.append("unknown packet, length ")
                output.append(decimal: packet.originalLength)
            }
        }
        if options.hexAndASCII || options.ascii {
            let start = min(packet.link.length, frame.count)
            let body = UnsafeRawBufferPointer(rebasing: frame[start...])
            if options.hexAndASCII { appendHexAndASCII(body, to: &output) } else { appendASCII(body, to: &output) }
            if packet.isTruncated {
                output.append("\n\t[truncated: ")
                output.append(decimal: packet.capturedLength)
                output.append(" of ")
                output.append(decimal: packet.originalLength)
                output.append(" bytes captured]")
            }
        }
        output.endLine()
    }

    // MARK: Time and link

    private mutating func appendTime(_ time: Timestamp, to output: inout PacketOutput) {
        if time.seconds != cachedSecond {
            cachedSecond = time.seconds
            var seconds = time_t(time.seconds)
            var parts = tm()
            if options.utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
            cachedClock = (parts.tm_hour, parts.tm_min, parts.tm_sec)
        }
        output.append(decimal: cachedClock.hour, width: 2)
        output.append(UInt8(ascii: ":"))
        output.append(decimal: cachedClock.minute, width: 2)
        output.append(UInt8(ascii: ":"))
        output.append(decimal: cachedClock.second, width: 2)
        output.append(UInt8(ascii: "."))
        output.append(decimal: max(time.nanoseconds, 0) / 1000, width: 6)
    }

    /// tcpdump prints the interface name and direction of Linux cooked v2 captures even without `-e`.
    private mutating func appendInterfacePrefix(index: UInt32, packetType: UInt16, to output: inout PacketOutput) {
        let name: String
        if let known = interfaceNames[index] {
            name = known
        } else {
            var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            if if_indextoname(index, &buffer) != nil {
                name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            } else {
                name = "?"
            }
            interfaceNames[index] = name
        }
        output.append(name)
        for _ in name.utf8.count..<max(name.utf8.count, 5) { output.append(UInt8(ascii: " ")) }
        output.append(UInt8(ascii: " "))
        let direction: StaticString
        switch packetType {
        case 0: direction = "In  "
        case 1: direction = "B   "
        case 2: direction = "M   "
        case 3: direction = "P   "
        case 4: direction = "Out "
        default: direction = "?   "
        }
        output.append(direction)
    }

    private func appendEtherTypeName(_ etherType: UInt16, to output: inout PacketOutput) {
        switch etherType {
        case 0x88cc: output.append("LLDP")
        case 0x8035: output.append("RARP")
        default:
            output.append("Unknown (0x")
            output.append(hexByte: UInt8(etherType >> 8))
            output.append(hexByte: UInt8(etherType & 0xff))
            output.append(")")
        }
    }

    private func renderARP(_ arp: ARPPacket, packet: DecodedPacket, to output: inout PacketOutput) {
        output.append("ARP, ")
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
        default:
            output.append("Unknown (")
            output.append(decimal: arp.operation)
            output.append(")")
        }
        output.append(", length ")
        output.append(decimal: packet.originalLength - packet.link.length)
    }

    // MARK: IP

    private mutating func renderIPv4(_ packet: DecodedPacket, _ header: IPv4Header, frame: UnsafeRawBufferPointer,
                                     to output: inout PacketOutput) {
        output.append("IP ")
        let wireLength = packet.originalLength - packet.link.length
        if header.totalLength > wireLength {
            output.append("[total length ")
            output.append(decimal: header.totalLength)
            output.append(" > length ")
            output.append(decimal: wireLength)
            output.append("] (invalid) ")
        }
        if header.totalLength < header.headerLength {
            output.append("bad-len ")
            output.append(decimal: header.totalLength)
            return
        }
        switch packet.transport {
        case .tcp(let segment):
            renderTCP(segment, withAddresses: true, to: &output)
        case .udp(let datagram):
            renderUDP(datagram, withAddresses: true, to: &output)
        case .icmp(let message):
            appendAddresses(header.source, header.destination, to: &output)
            renderICMP(message, to: &output)
        default:
            let segmentLength = min(header.totalLength, max(wireLength, header.headerLength)) - header.headerLength
            if packet.error?.layer == .tcp,
               renderCutTCP(frame, at: packet.link.length + header.headerLength, segmentLength: segmentLength,
                            source: header.source, destination: header.destination, withAddresses: true, to: &output) {
                return
            }
            if packet.error?.layer == .udp, frame.count - (packet.link.length + header.headerLength) >= 4 {
                let start = packet.link.length + header.headerLength
                appendEndpoints(Endpoint(address: header.source, port: UInt16(frame[start]) << 8 | UInt16(frame[start + 1])),
                                Endpoint(address: header.destination, port: UInt16(frame[start + 2]) << 8 | UInt16(frame[start + 3])),
                                withAddresses: true, to: &output)
                output.append(" [|udp]")
                return
            }
            appendAddresses(header.source, header.destination, to: &output)
            renderOther(packet, protocolNumber: header.protocolNumber,
                        length: header.totalLength - header.headerLength, to: &output)
        }
    }

    private mutating func renderIPv6(_ packet: DecodedPacket, _ header: IPv6Header, frame: UnsafeRawBufferPointer,
                                     to output: inout PacketOutput) {
        output.append("IP6 ")
        let direct = header.extensionCount == 0
        // tcpdump prints the addresses with the ports when TCP or UDP follows the fixed header directly.
        let portsCarryAddresses: Bool
        switch packet.transport {
        case .tcp, .udp: portsCarryAddresses = direct
        default: portsCarryAddresses = direct && header.protocolNumber == 6 && packet.error?.layer == .tcp
        }
        if !portsCarryAddresses && !(direct && Self.isUnknownUpperLayer(packet)) {
            appendAddresses(header.source, header.destination, to: &output)
        }
        for i in 0..<min(header.extensionCount, 4) {
            guard let ext = header.extension(at: i) else { break }
            switch ext.type {
            case 0: output.append("HBH ")
            case 60: output.append("DSTOPT ")
            case 51: output.append("AH ")
            case 43:
                output.append("RT6 (len=")
                output.append(decimal: ext.length / 8 - 1)
                output.append(", type=")
                output.append(decimal: ext.routingType)
                if ext.routingType == 0 { output.append(" [Deprecated]") }
                output.append(", segleft=")
                output.append(decimal: ext.segmentsLeft)
                output.append(") ")
            case 44:
                if let fragment = header.fragment {
                    output.append("frag (")
                    output.append(decimal: fragment.offset)
                    output.append("|")
                    output.append(decimal: max(header.payloadLength - header.extensionsLength, 0))
                    output.append(")")
                    // tcpdump does not look into non-first fragments.
                    if fragment.offset != 0 { return }
                    output.append(" ")
                }
            default: break
            }
        }
        let upperLength = header.payloadLength - header.extensionsLength
        switch packet.transport {
        case .tcp(let segment):
            renderTCP(segment, withAddresses: direct, to: &output)
        case .udp(let datagram):
            renderUDP(datagram, withAddresses: direct, to: &output)
        case .icmpv6(let message):
            renderICMPv6(message, to: &output)
        default:
            if packet.error?.layer == .tcp,
               renderCutTCP(frame, at: packet.link.length + 40 + header.extensionsLength, segmentLength: upperLength,
                            source: header.source, destination: header.destination, withAddresses: direct, to: &output) {
                return
            }
            if direct { appendAddresses(header.source, header.destination, to: &output) }
            renderOther(packet, protocolNumber: header.protocolNumber, length: upperLength, to: &output)
        }
    }

    /// Transport layers `renderOther` prints (it adds the addresses itself for IPv6 without extension headers).
    private static func isUnknownUpperLayer(_ packet: DecodedPacket) -> Bool {
        switch packet.transport {
        case .tcp, .udp, .icmp, .icmpv6: return false
        default: return !(packet.error?.layer == .tcp)
        }
    }

    /// A TCP header cut by the snap length, printed as far as it goes and ended with ` [|tcp]` as tcpdump does.
    /// Returns false when not even the ports were captured (the caller then prints a generic marker).
    private mutating func renderCutTCP(_ frame: UnsafeRawBufferPointer, at start: Int, segmentLength: Int,
                                       source: IPAddress, destination: IPAddress, withAddresses: Bool,
                                       to output: inout PacketOutput) -> Bool {
        let available = frame.count - start
        guard available >= 4 else { return false }
        func u16(_ at: Int) -> UInt16 { UInt16(frame[start + at]) << 8 | UInt16(frame[start + at + 1]) }
        func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) << 16 | UInt32(u16(at + 2)) }
        let from = Endpoint(address: source, port: u16(0))
        let to = Endpoint(address: destination, port: u16(2))
        guard available >= 20 else {
            appendEndpoints(from, to, withAddresses: withAddresses, to: &output)
            output.append(" [|tcp]")
            return true
        }
        let headerLength = Int(frame[start + 12] >> 4) * 4
        let optionsEnd = min(start + max(headerLength, 20), frame.count)
        let segment = TCPSegment(
            source: from, destination: to, sequenceNumber: u32(4), acknowledgmentNumber: u32(8),
            flags: TCPFlags(rawValue: frame[start + 13]), window: u16(14), urgentPointer: u16(18),
            headerLength: headerLength,
            options: UnsafeRawBufferPointer(rebasing: frame[(start + 20)..<optionsEnd]),
            payload: UnsafeRawBufferPointer(rebasing: frame[optionsEnd..<optionsEnd]),
            payloadLength: max(segmentLength - headerLength, 0))
        renderTCP(segment, withAddresses: withAddresses, to: &output)
        return true
    }

    private func appendAddresses(_ source: IPAddress, _ destination: IPAddress, to output: inout PacketOutput) {
        output.append(source)
        output.append(" > ")
        output.append(destination)
        output.append(": ")
    }

    private func appendEndpoints(_ source: Endpoint, _ destination: Endpoint, withAddresses: Bool,
                                 to output: inout PacketOutput) {
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

    private func renderOther(_ packet: DecodedPacket, protocolNumber: UInt8, length: Int, to output: inout PacketOutput) {
        if let error = packet.error {
            // tcpdump's spacing differs by protocol: "a > b: [|tcp]" but "a > b:  [|udp]".
            output.append(error.layer == .tcp ? "[|" : " [|")
            switch error.layer {
            case .icmpv6: output.append("icmp6")
            case .ipv6Extension: output.append("ip6")
            default: output.append(error.layer.rawValue)
            }
            output.append("]")
            return
        }
        // With -n tcpdump names upper-layer protocols it does not decode by number.
        output.append("ip-proto-")
        output.append(decimal: protocolNumber)
        if case .fragment = packet.transport { return }
        output.append(" ")
        output.append(decimal: max(length, 0))
    }

    // MARK: UDP and ICMP

    private func renderUDP(_ datagram: UDPDatagram, withAddresses: Bool, to output: inout PacketOutput) {
        appendEndpoints(datagram.source, datagram.destination, withAddresses: withAddresses, to: &output)
        output.append("UDP, length ")
        output.append(decimal: max(datagram.length - 8, 0))
    }

    private func renderICMP(_ message: ICMPMessage, to output: inout PacketOutput) {
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
            let quoted = message.body
            if quoted.count >= 20, quoted[0] >> 4 == 4 {
                let destination = IPAddress.v4(UInt32(quoted[16]) << 24 | UInt32(quoted[17]) << 16
                                                | UInt32(quoted[18]) << 8 | UInt32(quoted[19]))
                let quotedHeader = Int(quoted[0] & 0x0f) * 4
                let proto = quoted[9]
                if message.code == 3, quoted.count >= quotedHeader + 4, proto == 6 || proto == 17 {
                    output.append(destination)
                    output.append(proto == 6 ? " tcp port " : " udp port ")
                    output.append(decimal: UInt16(quoted[quotedHeader + 2]) << 8 | UInt16(quoted[quotedHeader + 3]))
                    output.append(" unreachable")
                } else {
                    output.append(destination)
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
    }

    private func renderICMPv6(_ message: ICMPMessage, to output: inout PacketOutput) {
        output.append("ICMP6, ")
        func target(_ output: inout PacketOutput) {
            let body = message.body
            guard body.count >= 16 else { return }
            var high: UInt64 = 0, low: UInt64 = 0
            for i in 0..<8 { high = high << 8 | UInt64(body[i]); low = low << 8 | UInt64(body[8 + i]) }
            output.append(IPAddress.v6(high: high, low: low))
        }
        switch message.type {
        case 128, 129:
            output.append(message.type == 128 ? "echo request" : "echo reply")
            output.append(", id ")
            output.append(decimal: message.identifier)
            output.append(", seq ")
            output.append(decimal: message.sequence)
        case 135:
            output.append("neighbor solicitation, who has ")
            target(&output)
        case 136:
            output.append("neighbor advertisement, tgt is ")
            target(&output)
        case 133: output.append("router solicitation")
        case 134: output.append("router advertisement")
        case 1: output.append("destination unreachable")
        case 2: output.append("packet too big")
        case 3: output.append("time exceeded in-transit")
        case 143: output.append("multicast listener report v2")
        default:
            output.append("type ")
            output.append(decimal: message.type)
        }
        output.append(", length ")
        output.append(decimal: message.length)
    }

    // MARK: TCP

    private struct ConversationKey: Hashable {
        var low: Endpoint
        var high: Endpoint
    }

    /// Initial sequence numbers of the conversation's two directions (`low` to `high`, and back).
    private struct SequenceBase {
        var fromLow: UInt32
        var fromHigh: UInt32
    }

    private static func isOrdered(_ a: Endpoint, _ b: Endpoint) -> Bool {
        switch (a.address, b.address) {
        case (.v4(let x), .v4(let y)): return x != y ? x < y : a.port <= b.port
        case (.v6(let xh, let xl), .v6(let yh, let yl)):
            return (xh, xl) != (yh, yl) ? (xh, xl) < (yh, yl) : a.port <= b.port
        case (.v4, .v6): return true
        case (.v6, .v4): return false
        }
    }

    private mutating func renderTCP(_ segment: TCPSegment, withAddresses: Bool, to output: inout PacketOutput) {
        appendEndpoints(segment.source, segment.destination, withAddresses: withAddresses, to: &output)
        let length = segment.payloadLength
        if options.quiet {
            output.append("tcp ")
            output.append(decimal: length)
            return
        }
        let flags = segment.flags
        output.append("Flags [")
        if flags.rawValue == 0 { output.append("none") }
        if flags.contains(.fin) { output.append("F") }
        if flags.contains(.syn) { output.append("S") }
        if flags.contains(.rst) { output.append("R") }
        if flags.contains(.psh) { output.append("P") }
        if flags.contains(.ack) { output.append(".") }
        if flags.contains(.urg) { output.append("U") }
        if flags.contains(.ece) { output.append("E") }
        if flags.contains(.cwr) { output.append("W") }
        output.append("]")

        var seq = segment.sequenceNumber
        var ack = segment.acknowledgmentNumber
        // Bases used to print SACK edges relative, as tcpdump does.
        var sackBase: UInt32 = 0
        if flags.contains(.ack) {
            let forward = Self.isOrdered(segment.source, segment.destination)
            let key = forward ? ConversationKey(low: segment.source, high: segment.destination)
                : ConversationKey(low: segment.destination, high: segment.source)
            if let base = sequenceBases[key], !flags.contains(.syn) {
                let (mine, theirs) = forward ? (base.fromLow, base.fromHigh) : (base.fromHigh, base.fromLow)
                seq &-= mine
                ack &-= theirs
                sackBase = theirs
            } else {
                let base = forward ? SequenceBase(fromLow: seq, fromHigh: ack &- 1)
                    : SequenceBase(fromLow: ack &- 1, fromHigh: seq)
                // Bound memory on huge captures: start afresh rather than grow without limit (old conversations
                // then print absolute numbers once, as if first seen).
                if sequenceBases.count >= Self.maximumConversations { sequenceBases.removeAll(keepingCapacity: true) }
                sequenceBases[key] = base
                sackBase = ack &- 1
            }
        }
        if length > 0 || flags.contains(.syn) || flags.contains(.fin) || flags.contains(.rst) {
            output.append(", seq ")
            output.append(decimal: seq)
            if length > 0 {
                output.append(":")
                output.append(decimal: seq &+ UInt32(truncatingIfNeeded: length))
            }
        }
        if flags.contains(.ack) {
            output.append(", ack ")
            output.append(decimal: ack)
        }
        output.append(", win ")
        output.append(decimal: segment.window)
        if flags.contains(.urg) {
            output.append(", urg ")
            output.append(decimal: segment.urgentPointer)
        }
        if segment.headerLength > 20 {
            output.append(", options [")
            if !appendTCPOptions(segment.options, declaredLength: segment.headerLength - 20, sackBase: sackBase,
                                 to: &output) { return }
            output.append("]")
        }
        output.append(", length ")
        output.append(decimal: length)
        if length > 0 && !flags.contains(.rst) && (Self.isHTTPPort(segment.source.port) || Self.isHTTPPort(segment.destination.port)) {
            appendHTTPSummary(segment.payload, length: length, to: &output)
        }
    }

    private static func isHTTPPort(_ port: UInt16) -> Bool { port == 80 || port == 8080 }

    /// Prints the options as tcpdump does; false when they are malformed (tcpdump then ends the line early).
    /// `options` holds the captured option bytes; `declaredLength` what the header says. When the snap length cut
    /// them, prints ` [|tcp]` where the bytes ran out and returns false (tcpdump then ends the line).
    private func appendTCPOptions(_ options: UnsafeRawBufferPointer, declaredLength: Int, sackBase: UInt32,
                                  to output: inout PacketOutput) -> Bool {
        var offset = 0
        var first = true
        while offset < declaredLength {
            if !first { output.append(",") }
            first = false
            guard offset < options.count else { output.append(" [|tcp]"); return false }
            let kind = options[offset]
            var length = 1
            if kind > 1 {
                guard offset + 1 < options.count else {
                    if offset + 1 < declaredLength { output.append(" [|tcp]") } else { output.append("[bad opt]]") }
                    return false
                }
                length = Int(options[offset + 1])
                guard length >= 2, offset + length <= declaredLength else { output.append("[bad opt]]"); return false }
                if offset + length > options.count {
                    // tcpdump names the option, then stops; after an earlier option it also prints ">".
                    appendOptionName(kind, to: &output)
                    if kind == 5 && (length - 2) % 8 == 0 {  // the block count comes before the first edge is read
                        output.append(" ")
                        output.append(decimal: (length - 2) / 8)
                        output.append(" ")
                    }
                    output.append(offset == 0 ? " [|tcp]" : " [|tcp]>")
                    return false
                }
            }
            let data = offset + 2
            let dataLength = length - 2
            @inline(__always) func word(_ at: Int) -> UInt32 {
                UInt32(options[at]) << 24 | UInt32(options[at + 1]) << 16 | UInt32(options[at + 2]) << 8 | UInt32(options[at + 3])
            }
            var printedLength = length
            switch kind {
            case 0: output.append("eol")
            case 1: output.append("nop")
            case 2:
                output.append("mss")
                if dataLength >= 2 {
                    output.append(" ")
                    output.append(decimal: UInt16(options[data]) << 8 | UInt16(options[data + 1]))
                    printedLength = 4
                }
            case 3:
                output.append("wscale")
                if dataLength >= 1 {
                    output.append(" ")
                    output.append(decimal: options[data])
                    printedLength = 3
                }
            case 4:
                output.append("sackOK")
                printedLength = 2
            case 5:
                output.append("sack")
                if dataLength % 8 != 0 {
                    output.append(" invalid sack")
                } else {
                    output.append(" ")
                    output.append(decimal: dataLength / 8)
                    output.append(" ")
                    var at = data
                    while at + 8 <= data + dataLength {
                        output.append("{")
                        output.append(decimal: word(at) &- sackBase)
                        output.append(":")
                        output.append(decimal: word(at + 4) &- sackBase)
                        output.append("}")
                        at += 8
                    }
                }
            case 8:
                output.append("TS")
                if dataLength >= 8 {
                    output.append(" val ")
                    output.append(decimal: word(data))
                    output.append(" ecr ")
                    output.append(decimal: word(data + 4))
                    printedLength = 10
                }
            case 34, 254:
                var cookieStart = data
                var cookieLength = dataLength
                if kind == 254 {
                    // RFC 6994 experimental option: a 16-bit magic says what it is; 0xf989 is TCP Fast Open.
                    guard dataLength >= 2 else { output.append("exp[bad opt]]"); return false }
                    let magic = UInt16(options[data]) << 8 | UInt16(options[data + 1])
                    output.append("exp-")
                    guard magic == 0xf989 else {
                        output.append(hexByte: options[data])
                        output.append(hexByte: options[data + 1])
                        break
                    }
                    cookieStart += 2
                    cookieLength -= 2
                }
                output.append("tfo")
                if cookieLength == 0 {
                    output.append(" cookiereq")
                } else if cookieLength % 2 != 0 || cookieLength < 4 || cookieLength > 16 {
                    output.append(" (invalid)")
                } else {
                    output.append(" cookie ")
                    for i in 0..<cookieLength { output.append(hexByte: options[cookieStart + i]) }
                }
            default:
                appendOptionName(kind, to: &output)
                if dataLength > 0 { for i in 0..<dataLength { output.append(hexByte: options[data + i]) } }
            }
            if printedLength != length {
                output.append("[len ")
                output.append(decimal: length)
                output.append("]")
            }
            offset += length
            if kind == 0 { break }
        }
        return true
    }

    private func appendOptionName(_ kind: UInt8, to output: inout PacketOutput) {
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

    private static let httpMethods: [StaticString] = [
        "GET", "PUT", "COPY", "HEAD", "LOCK", "MOVE", "POLL", "POST", "BCOPY", "BMOVE", "MKCOL", "TRACE", "LABEL",
        "MERGE", "DELETE", "SEARCH", "UNLOCK", "REPORT", "UPDATE", "NOTIFY", "BDELETE", "CONNECT", "OPTIONS",
        "CHECKIN", "PROPFIND", "CHECKOUT", "CCM_POST", "SUBSCRIBE", "PROPPATCH", "BPROPFIND", "BPROPPATCH",
        "UNCHECKOUT", "MKACTIVITY", "MKWORKSPACE", "UNSUBSCRIBE", "RPC_CONNECT", "VERSION-CONTROL", "BASELINE-CONTROL",
    ]

    @inline(__always) private static func isPrint(_ c: UInt8) -> Bool { c >= 0x20 && c < 0x7f }

    /// Finds the token at `start`: returns its range and the index after trailing blanks, or nil (tcpdump's
    /// fetch_token).
    private static func token(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int, length: Int) -> (Range<Int>, Int)? {
        var index = start
        while true {
            guard index < limit else {
                if limit < length { return nil }  // ran past the captured bytes
                break
            }
            let c = bytes[index]
            if c >= 0x80 { return nil }
            if c == 0x20 || c == 0x09 || c == 0x0d || c == 0x0a { break }
            if !isPrint(c) { return nil }
            if index - start + 2 > 129 { return nil }
            index += 1
        }
        guard index > start else { return nil }
        let range = start..<index
        while index < limit {
            let c = bytes[index]
            if c == 0x0d || c == 0x0a || !isPrint(c) || (c != 0x20 && c != 0x09) { break }
            index += 1
        }
        return (range, index)
    }

    /// tcpdump's one-line HTTP summary: `: HTTP: <request or status line>` or `: HTTP`.
    private func appendHTTPSummary(_ payload: UnsafeRawBufferPointer, length: Int, to output: inout PacketOutput) {
        output.append(": HTTP")
        let limit = payload.count
        var recognised = false
        if let (first, next) = Self.token(payload, from: 0, limit: limit, length: length) {
            let word = UnsafeRawBufferPointer(rebasing: payload[first])
            for method in Self.httpMethods where method.utf8CodeUnitCount == word.count {
                let matches = method.withUTF8Buffer { name in
                    zip(name, word).allSatisfy { a, b in a == (b >= 0x61 && b <= 0x7a ? b - 0x20 : b) }
                }
                if matches { recognised = true; break }
            }
            if let (second, _) = Self.token(payload, from: next, limit: limit, length: length), second.count == 3,
               payload[second].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                recognised = true
            }
        }
        guard recognised else { return }
        let lineEnd = payload.firstIndex { $0 == 0x0a || $0 == 0x0d }
        if limit < length && (lineEnd == nil || (payload[lineEnd!] == 0x0d && lineEnd! + 1 == limit)) {
            // The first line was cut by the snap length: tcpdump prints only the truncation marker.
            output.append(" [|http]")
            return
        }
        output.append(": ")
        var index = 0
        while index < limit {
            let c = payload[index]
            if c == 0x0a {
                output.append(raw: UnsafeRawBufferPointer(rebasing: payload[0..<index]))
                return
            }
            if c == 0x0d {
                guard index + 1 < limit, payload[index + 1] == 0x0a else {
                    if index + 1 >= length { return }
                    if index + 1 >= limit { output.append(" [|http]"); return }
                    return
                }
                output.append(raw: UnsafeRawBufferPointer(rebasing: payload[0..<index]))
                return
            }
            if !Self.isPrint(c) && c != 0x09 { return }
            index += 1
        }
        // Printable to the end of what was captured, without a line ending.
        output.append(raw: UnsafeRawBufferPointer(rebasing: payload[0..<limit]))
        output.append(" [|http]")
    }

    // MARK: Payload dumps

    private func appendASCII(_ bytes: UnsafeRawBufferPointer, to output: inout PacketOutput) {
        output.append(10)
        for c in bytes {
            if c == 0x0d { continue }
            if (c > 0x20 && c < 0x7f) || c == 0x09 || c == 0x20 || c == 0x0a { output.append(c) } else { output.append(UInt8(ascii: ".")) }
        }
    }

    private func appendHexAndASCII(_ bytes: UnsafeRawBufferPointer, to output: inout PacketOutput) {
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 16, bytes.count)
            output.append("\n\t0x")
            output.append(hexByte: UInt8(truncatingIfNeeded: offset >> 8))
            output.append(hexByte: UInt8(truncatingIfNeeded: offset))
            output.append(": ")
            var columns = 0
            var i = offset
            while i < end {
                output.append(" ")
                output.append(hexByte: bytes[i])
                columns += 3
                if i + 1 < end { output.append(hexByte: bytes[i + 1]); columns += 2 }
                i += 2
            }
            for _ in columns..<40 { output.append(" ") }
            output.append("  ")
            for j in offset..<end {
                let c = bytes[j]
                output.append(c > 0x20 && c < 0x7f ? c : UInt8(ascii: "."))
            }
            offset = end
        }
    }
}
