import PacketDecoding

/// Renders packets as one line each, in the format of `tcpdump -n` (or `tcpdump -nq` when `quiet`).
///
/// Like tcpdump's print-*.c files, each protocol's printer lives in its own file in this folder and consumes the
/// fields `PacketDecoder` decoded; none of them reads packet bytes (the `-A`/`-X` dumps print the raw frame).
/// Keeps tcpdump's per-conversation state so TCP sequence numbers print relative to the first seen, exactly as
/// tcpdump does without `-S`. That table grows by one entry per TCP conversation (not per packet).
public struct PacketLineRenderer {
    /// How each line starts: tcpdump's `-t` family.
    public enum TimestampStyle: Sendable, Hashable {
        /// `HH:MM:SS.ffffff` (no flag).
        case clock
        /// `-t`: none.
        case none
        /// `-tt`: seconds since the epoch.
        case epoch
        /// `-ttt`: time since the previous packet.
        case sincePrevious
        /// `-tttt`: date and clock.
        case dateAndClock
        /// `-ttttt`: time since the first packet.
        case sinceFirst

        /// The style for `count` `-t` flags, as tcpdump counts them.
        public init(tFlagCount count: Int) {
            switch count {
            case 0: self = .clock
            case 1: self = .none
            case 2: self = .epoch
            case 3: self = .sincePrevious
            case 4: self = .dateAndClock
            default: self = .sinceFirst
            }
        }
    }

    /// What follows each line: tcpdump's `-x`/`-X`/`-A` (from the network header) and doubled forms (from the
    /// link header).
    public enum PayloadDump: Sendable, Hashable {
        case none
        case hex(includingLinkHeader: Bool)
        case hexAndASCII(includingLinkHeader: Bool)
        case ascii(includingLinkHeader: Bool)

        var includesLinkHeader: Bool {
            switch self {
            case .none: false
            case .hex(let whole), .hexAndASCII(let whole), .ascii(let whole): whole
            }
        }
    }

    public struct Options: Sendable {
        /// `-q`: the short form (`tcp 269`, `UDP, length 40`).
        public var quiet = false
        public var timestamps = TimestampStyle.clock
        /// `--time-stamp-precision nano`: nine fraction digits instead of six.
        public var nanosecondTimestamps = false
        public var dump = PayloadDump.none
        /// `-e`: the link-level header on each line.
        public var linkHeader = false
        /// `-S`: absolute TCP sequence numbers.
        public var absoluteSequenceNumbers = false
        /// `-#`: the packet's number before the line.
        public var numbered = false
        /// Print timestamps in UTC rather than local time.
        public var utc = false
        /// `-v`, `-vv`, `-vvv`: IP header fields, checksum verdicts, HTTP header lines, more of DNS.
        public var verbosity = 0

        /// `-t`: no timestamp (kept for callers that only switch it off).
        public var showTimestamp: Bool {
            get { timestamps != .none }
            set { timestamps = newValue ? (timestamps == .none ? .clock : timestamps) : .none }
        }
        /// `-A`: the packet (from the network header) as ASCII after the line.
        public var ascii: Bool {
            get { if case .ascii = dump { true } else { false } }
            set { dump = newValue ? .ascii(includingLinkHeader: false) : .none }
        }
        /// `-X`: hex and ASCII dump after the line.
        public var hexAndASCII: Bool {
            get { if case .hexAndASCII = dump { true } else { false } }
            set { dump = newValue ? .hexAndASCII(includingLinkHeader: false) : .none }
        }
        public init() {}
    }

    public var options: Options
    /// Conversations remembered for relative sequence numbers (tcpdump's table has no limit).
    public static let maximumConversations = 1 << 16
    var sequenceBases: [TCPConversationKey: TCPSequenceBase] = [:]
    var clock = ClockCache()
    var interfaceNames: [UInt32: String] = [:]
    /// Interface names remembered at once for cooked-v2 prefixes; past this the cache starts over.
    static let maxCachedInterfaceNames = 256
    /// Packets rendered so far (`-#` numbers lines from 1).
    var packetNumber = 0
    /// Times `-ttt` and `-ttttt` count from.
    var previousTimestamp: Timestamp?
    var firstTimestamp: Timestamp?
    /// The current packet's checksum verdicts, worked out only with `-v`.
    var checksums = PacketChecksums()

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Appends the line (and any `-A`/`-X` dump) for `packet`, whose bytes are `frame`, to `output`.
    public mutating func render(_ packet: DecodedPacket, frame: UnsafeRawBufferPointer, to output: inout TextOutput) {
        packetNumber += 1
        output.printerRanOutOfBytes = false
        if options.verbosity > 0 { checksums = PacketChecksums(frame: frame, packet: packet) }
        if options.numbered {
            var width = 1
            var n = packetNumber
            while n >= 10 { n /= 10; width += 1 }
            for _ in width..<max(width, 5) { output.append(UInt8(ascii: " ")) }
            output.append(decimal: packetNumber)
            output.append("  ")
        }
        if options.timestamps != .none {
            appendTime(packet.timestamp, to: &output)
            output.append(UInt8(ascii: " "))
        }
        if packet.link.kind == .linuxCooked2, let index = packet.link.interfaceIndex {
            appendInterfacePrefix(index: index, packetType: packet.link.packetType ?? 0, to: &output)
        }
        if options.linkHeader {
            appendLinkHeader(packet, to: &output)
        }
        let cutNFLOGPayload = Self.nflogPayloadWasCut(packet, frame: frame)
        if cutNFLOGPayload {
            output.append(" [|nflog]")
        } else if packet.encapsulation.isEmpty {
            renderNetwork(packet, frame: frame, to: &output)
        } else if let inner = appendEncapsulation(of: packet, to: &output) {  // tunnels: TunnelLines.swift
            renderNetwork(inner, frame: frame, to: &output)
        }
        if options.dump != .none {
            let start = dumpStart(frame, packet: packet, cutNFLOGPayload: cutNFLOGPayload,
                                  printerRanOutOfBytes: output.printerRanOutOfBytes)
            let dumped = UnsafeRawBufferPointer(rebasing: frame[start...])
            // tcpdump dumps only when bytes are left after the link header (-A would print a bare line break).
            switch dumped.isEmpty ? .none : options.dump {
            case .none: break
            case .hex: appendHex(dumped, to: &output)
            case .hexAndASCII: appendHexAndASCII(dumped, to: &output)
            case .ascii: appendASCII(dumped, to: &output)
            }
        }
        output.endLine()
    }

    /// Where a dump starts: at the frame's first byte for -xx, -XX, -AA, or after a printer ran out of captured
    /// bytes (tcpdump's long jump); otherwise after what tcpdump counts as the link header: the whole decoded
    /// link header, every captured byte of a cut Ethernet or VLAN header, an NFLOG header up to the TLV that was
    /// cut. (Cut SLL, SLL2 and null headers long-jump: renderUndecodedNetwork sets printerRanOutOfBytes.)
    private func dumpStart(_ frame: UnsafeRawBufferPointer, packet: DecodedPacket, cutNFLOGPayload: Bool,
                           printerRanOutOfBytes: Bool) -> Int {
        if options.dump.includesLinkHeader || printerRanOutOfBytes { return 0 }
        if cutNFLOGPayload { return packet.link.length - 4 }
        if let error = packet.error, error.layer == .link || error.layer == .vlan {
            return packet.linkType == .nflog && error.offset > 0 ? min(error.offset, frame.count) : frame.count
        }
        // print-ppp.c counts PPP_HDRLEN (4 bytes) as the link header whatever the frame's header is: a two-byte
        // protocol field alone starts the dump two bytes into the IP header, as tcpdump prints it.
        if packet.link.kind == .ppp { return min(4, frame.count) }
        return min(packet.link.length, frame.count)
    }

    /// NFLOG: tcpdump prints the packet only when its whole payload TLV was captured, else ` [|nflog]`.
    private static func nflogPayloadWasCut(_ packet: DecodedPacket, frame: UnsafeRawBufferPointer) -> Bool {
        guard packet.link.kind == .nflog, packet.link.length >= 8, packet.link.length <= frame.count else { return false }
        let start = packet.link.length - 4
        let size = (Int(frame.load(fromByteOffset: start, as: UInt16.self).littleEndian) + 3) & ~3
        return frame.count - start < size
    }

    /// The line from the network layer on (tcpdump's ethertype dispatch). `frame` is the captured frame, read
    /// only through PacketDecoding's views (IPv6 option lists with -v).
    mutating func renderNetwork(_ packet: DecodedPacket, frame: UnsafeRawBufferPointer, to output: inout TextOutput) {
        switch packet.network {
        case .ipv4(let header):
            renderIPv4(packet, header, to: &output)
        case .ipv6(let header):
            renderIPv6(packet, header, frame: frame, to: &output)
        case .arp(let arp):
            renderARP(arp, length: packet.originalLength - packet.link.length, to: &output)
        case .other(0x9000) where packet.link.kind == .ethernet:
            let start = min(packet.link.length, frame.count)
            let message = EthernetLoopbackMessage(payload: UnsafeRawBufferPointer(rebasing: frame[start...]),
                                                  length: packet.originalLength - packet.link.length)
            renderLoopback(message, to: &output)
        case .other where packet.link.kind == .ciscoHDLC && packet.link.linkEtherType == 0x8035:
            let start = min(packet.link.length, frame.count)
            renderSLARP(SLARPMessage(payload: UnsafeRawBufferPointer(rebasing: frame[start...]),
                                     length: packet.originalLength - packet.link.length),
                        payload: UnsafeRawBufferPointer(rebasing: frame[start...]), to: &output)
        case .other where packet.link.kind == .ciscoHDLC:
            // print-chdlc.c names a type it has no printer for, unless -e already printed it.
            if options.linkHeader { return }
            output.append("unknown CHDLC protocol (0x")
            output.append(hexByte: UInt8(packet.link.linkEtherType >> 8))
            output.append(hexByte: UInt8(packet.link.linkEtherType & 0xff))
            output.append(")")
        case .other where packet.link.kind == .rawIP:
            // print-ip.c dispatches on the version nibble and names any other.
            output.append("unknown ip ")
            output.append(decimal: packet.link.rawIPVersion)
        case .other(let etherType):
            output.append("ethertype ")
            appendEtherTypeName(etherType, to: &output)
            output.append(", length ")
            output.append(decimal: packet.originalLength)
        case .none:
            renderUndecodedNetwork(packet, frame: frame, to: &output)
        }
    }

    /// No network layer: a cut IP header, a cut link header (tcpdump's marker names the link protocol), or nothing.
    private func renderUndecodedNetwork(_ packet: DecodedPacket, frame: UnsafeRawBufferPointer,
                                        to output: inout TextOutput) {
        if let error = packet.error, error.layer == .ipv4 || error.layer == .ipv6 {
            // tcpdump reads the IPv4 version before anything (a long jump when not even that was captured), then
            // prints "IP " (not with -e) and checks the header; it checks the IPv6 header before "IP6 ".
            if error.layer == .ipv6 {
                output.append(" [|ip6]")
            } else if frame.count <= packet.link.length {
                output.append(" [|ip]")
                output.printerRanOutOfBytes = true
            } else {
                output.append(options.linkHeader ? " [|ip]" : "IP  [|ip]")
            }
        } else if packet.error?.layer == .arp {
            output.append(" [|arp]")
            output.printerRanOutOfBytes = true  // print-arp.c's checks long-jump
        } else if packet.error != nil {
            output.append(" [|")
            switch packet.linkType {
            case .nflog: output.append("nflog")
            case .ppp: output.append("ppp")
            case .ciscoHDLC:
                // print-chdlc.c refuses a frame shorter than its header on the wire before reading it; a frame the
                // snap length cut is read, and the read long-jumps.
                output.append("chdlc")
                output.printerRanOutOfBytes = packet.originalLength >= 4
            case .linuxSLL: output.append("sll"); output.printerRanOutOfBytes = true
            case .linuxSLL2: output.append("sll2"); output.printerRanOutOfBytes = true
            case .null, .loop: output.append("null"); output.printerRanOutOfBytes = true
            case .ethernet:
                output.append(packet.error?.layer == .vlan ? "vlan" : "ether")  // a cut 802.1Q/802.1ad tag
            default: output.append("raw")
            }
            output.append("]")
        } else {
            output.append("unknown packet, length ")
            output.append(decimal: packet.originalLength)
        }
    }
}
