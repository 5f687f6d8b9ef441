import FlowReassembly
import PacketDecoding

/// How `--follow` shows a connection's bytes; the three forms of `tshark -z follow,tcp,FORMAT,...`.
public enum FollowFormat: String, Sendable, CaseIterable {
    /// Each chunk's length, then its bytes with unprintable ones as `.` (CR and LF kept).
    case ascii
    /// A hex dump per chunk, offsets counting each direction's bytes.
    case hex
    /// Each chunk as one line of hex digits.
    case raw
}

/// The reassembled bytes of one TCP connection, written as `tshark -q -z follow,tcp,FORMAT,...` writes them: one
/// chunk per delivery, the second node's chunks indented by a tab. A hole is a chunk of its own whose bytes are the
/// text `[N bytes missing in capture file]` and a NUL byte, exactly as tshark 4 marks it.
///
/// A `StreamConsumer` fed by the one reassembler (FlowReassembly) with only the followed connection's segments.
/// Output goes out as the bytes arrive, so a long connection never sits in memory.
public struct FollowStreamWriter: StreamConsumer {
    public let format: FollowFormat
    /// Node 0: the sender of the connection's first packet (tshark's choice); node 1 is the other end.
    public let node0: Endpoint
    public let node1: Endpoint
    public private(set) var output: TextOutput
    /// Bytes delivered and missing, per node.
    public private(set) var bytes: (Int, Int) = (0, 0)
    public private(set) var missing: (Int, Int) = (0, 0)
    /// Whether the reassembler's client is node 1 (it picked the other end as the client, e.g. no SYN was seen).
    private var clientIsNode1 = false
    private var offsets: (Int, Int) = (0, 0)

    public init(format: FollowFormat, node0: Endpoint, node1: Endpoint, output: TextOutput) {
        self.format = format
        self.node0 = node0
        self.node1 = node1
        self.output = output
    }

    /// The banner before the chunks; `filter` is the text of tshark's `Filter:` line.
    public mutating func writeHeader(filter: String) {
        output.append("\n===================================================================\n")
        output.append("Follow: tcp,\(format.rawValue)\n")
        output.append("Filter: \(filter)\n")
        output.append("Node 0: \(node0.description)\n")
        output.append("Node 1: \(node1.description)\n")
    }

    public mutating func writeFooter() {
        output.append("===================================================================\n")
        _ = output.flush()
    }

    /// tshark's `Filter:` line for a stream index.
    public static func filter(index: Int) -> String { "tcp.stream eq \(index)" }

    /// tshark's `Filter:` line for an address pair (as given: first, then second).
    public static func filter(_ x: Endpoint, _ y: Endpoint) -> String {
        let ip = x.address.isIPv6 ? "ipv6" : "ip"
        func side(_ s: Endpoint, _ d: Endpoint) -> String {
            "((\(ip).src eq \(s.address) and tcp.srcport eq \(s.port)) and (\(ip).dst eq \(d.address) and tcp.dstport eq \(d.port)))"
        }
        return side(x, y) + " or " + side(y, x)
    }

    private func isNode1(_ direction: StreamDirection) -> Bool {
        (direction == .serverToClient) != clientIsNode1
    }

    public mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        clientIsNode1 = client == node1
    }

    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ data: UnsafeRawBufferPointer,
                                    at time: Timestamp, acknowledged: Int?) {
        guard !data.isEmpty else { return }
        let second = isNode1(direction)
        if second { bytes.1 += data.count } else { bytes.0 += data.count }
        writeChunk(data, second: second)
    }

    private mutating func writeChunk(_ data: UnsafeRawBufferPointer, second: Bool) {
        switch format {
        case .ascii:
            if second { output.append(UInt8(ascii: "\t")) }
            output.append(decimal: data.count)
            output.append(UInt8(ascii: "\n"))
            for byte in data {
                output.append(byte == 0x0d || byte == 0x0a || (byte >= 0x20 && byte < 0x7f) ? byte : UInt8(ascii: "."))
            }
            output.append(UInt8(ascii: "\n"))
        case .hex:
            var offset = second ? offsets.1 : offsets.0
            hexDump(data, offset: &offset, indent: second)
            if second { offsets.1 = offset } else { offsets.0 = offset }
        case .raw:
            if second { output.append(UInt8(ascii: "\t")) }
            for byte in data { output.append(hexByte: byte) }
            output.append(UInt8(ascii: "\n"))
        }
        output.flushIfFull()
    }

    /// tshark's follow hex dump: 8 hex digits of offset (upper case), 16 bytes in two groups of 8, then the
    /// printable characters with a space after the eighth.
    private mutating func hexDump(_ data: UnsafeRawBufferPointer, offset: inout Int, indent: Bool) {
        var start = 0
        while start < data.count {
            let end = min(start + 16, data.count)
            if indent { output.append(UInt8(ascii: "\t")) }
            let digits = String(UInt32(truncatingIfNeeded: offset), radix: 16, uppercase: true)
            output.append(String(repeating: "0", count: max(0, 8 - digits.count)) + digits)
            output.append("  ")
            for i in 0..<16 {
                if start + i < end {
                    output.append(hexByte: data[start + i])
                    output.append(UInt8(ascii: " "))
                } else {
                    output.append("   ")
                }
                if i == 7 { output.append(UInt8(ascii: " ")) }
            }
            output.append(UInt8(ascii: " "))
            for i in start..<end {
                let byte = data[i]
                output.append(byte >= 0x20 && byte < 0x7f ? byte : UInt8(ascii: "."))
                if i - start == 7 { output.append(UInt8(ascii: " ")) }
            }
            // tshark drops one trailing space: the one after the eighth byte, or a space byte that ends the line.
            if output.last == UInt8(ascii: " ") { output.removeLast() }
            output.append(UInt8(ascii: "\n"))
            offset += 16
            start = end
        }
        // tshark advances by whole lines; the next chunk of this direction starts where these bytes end.
        offset -= (16 - (data.count % 16)) % 16
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        let second = isNode1(direction)
        if second { missing.1 += length } else { missing.0 += length }
        // tshark's marker is the C string with its terminating NUL (printed as '.' in ascii and hex).
        let marker = Array("[\(length) bytes missing in capture file]".utf8) + [0]
        marker.withUnsafeBytes { writeChunk($0, second: second) }
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {}
    public mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {}
    public mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {}
}
