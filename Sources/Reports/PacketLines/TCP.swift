import PacketDecoding

/// A TCP conversation, its two ends in a fixed order, for the relative-sequence table.
struct TCPConversationKey: Hashable {
    var low: Endpoint
    var high: Endpoint
}

/// Initial sequence numbers of the conversation's two directions (`low` to `high`, and back).
struct TCPSequenceBase {
    var fromLow: UInt32
    var fromHigh: UInt32
}

extension PacketLineRenderer {
    static func isOrdered(_ a: Endpoint, _ b: Endpoint) -> Bool {
        switch (a.address, b.address) {
        case (.v4(let x), .v4(let y)): return x != y ? x < y : a.port <= b.port
        case (.v6(let xh, let xl), .v6(let yh, let yl)):
            return (xh, xl) != (yh, yl) ? (xh, xl) < (yh, yl) : a.port <= b.port
        case (.v4, .v6): return true
        case (.v6, .v4): return false
        }
    }

    /// A TCP header cut by the snap length, printed as far as it goes and ended with ` [|tcp]` as tcpdump does.
    mutating func renderCutTCP(_ cut: CutTransportHeader, withAddresses: Bool, to output: inout TextOutput) {
        guard let segment = cut.fixedTCPHeader else {
            appendEndpoints(cut.source, cut.destination, withAddresses: withAddresses, to: &output)
            output.append(" [|tcp]")
            return
        }
        renderTCP(segment, withAddresses: withAddresses, to: &output)
    }

    /// tcpdump's print-tcp.c line: flags, relative seq/ack, window, options, length, then any HTTP summary.
    mutating func renderTCP(_ segment: TCPSegment, withAddresses: Bool, to output: inout TextOutput) {
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
        if options.verbosity > 0 { appendTCPChecksum(to: &output) }

        var seq = segment.sequenceNumber
        var ack = segment.acknowledgmentNumber
        // Bases used to print SACK edges relative, as tcpdump does.
        var sackBase: UInt32 = 0
        if flags.contains(.ack) && !options.absoluteSequenceNumbers {
            let forward = Self.isOrdered(segment.source, segment.destination)
            let key = forward ? TCPConversationKey(low: segment.source, high: segment.destination)
                : TCPConversationKey(low: segment.destination, high: segment.source)
            if let base = sequenceBases[key], !flags.contains(.syn) {
                let (mine, theirs) = forward ? (base.fromLow, base.fromHigh) : (base.fromHigh, base.fromLow)
                seq &-= mine
                ack &-= theirs
                sackBase = theirs
            } else {
                let base = forward ? TCPSequenceBase(fromLow: seq, fromHigh: ack &- 1)
                    : TCPSequenceBase(fromLow: ack &- 1, fromHigh: seq)
                // Bound memory on huge captures: start afresh rather than grow without limit (old conversations
                // then print absolute numbers once, as if first seen).
                if sequenceBases.count >= Self.maximumConversations { sequenceBases.removeAll(keepingCapacity: true) }
                sequenceBases[key] = base
                sackBase = ack &- 1
            }
        }
        if options.verbosity > 1 || length > 0 || flags.contains(.syn) || flags.contains(.fin) || flags.contains(.rst) {
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
            if !appendTCPOptions(segment.optionIterator, sackBase: sackBase, to: &output) { return }
            output.append("]")
        }
        output.append(", length ")
        output.append(decimal: length)
        if length > 0 && flags.contains(.rst) && options.verbosity > 0 {
            appendResetData(segment.payload, length: length, to: &output)
        } else if length > 0 && !flags.contains(.rst) && (Self.isHTTPPort(segment.source.port) || Self.isHTTPPort(segment.destination.port)) {
            if options.verbosity > 0 {
                appendVerboseHTTP(segment.payload, length: length, to: &output)
            } else {
                appendHTTPSummary(HTTPFirstLine(payload: segment.payload, length: length), to: &output)
            }
        } else if length > 0 && !flags.contains(.rst) && (Self.isDNSPort(segment.source.port) || Self.isDNSPort(segment.destination.port)) {
            appendDNSOverTCP(segment.payload, length: length, to: &output)
        }
    }

    /// print-tcp.c with -v: data on a RST (some stacks put a reason there), at most 30 bytes, as tcpdump's
    /// nd_printn shows bytes (`M-` for the high bit, `^` for control characters).
    func appendResetData(_ payload: UnsafeRawBufferPointer, length: Int, to output: inout TextOutput) {
        output.append(" [RST")
        if length > 30 { output.append("+") }
        output.append(" ")
        for var c in payload.prefix(min(length, 30)) {
            if c >= 0x80 {
                c &= 0x7f
                output.append("M-")
            }
            if c < 0x20 || c == 0x7f {
                c ^= 0x40
                output.append("^")
            }
            output.append(c)
        }
        output.append("]")
    }
}
