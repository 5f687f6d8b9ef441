/// What the kernel sends on a netfilter queue socket, read from received bytes: packet messages
/// (`NFQNL_MSG_PACKET`) and the answers to configuration requests (`NLMSG_ERROR`). Pure and self-contained (no
/// imports), so the fuzz target `nfqueue-messages` compiles this file alone. Every length field is checked against
/// the bytes received before it is followed; a message or attribute that does not fit ends the reading there.
enum NetfilterQueueMessages {
    /// A packet waiting in the kernel for its verdict.
    struct QueuedPacket: Equatable {
        var queue: UInt16
        var id: UInt32
        /// The packet's bytes (from its IP header on), on queues bound with `copyPackets`; empty otherwise.
        var payload: [UInt8] = []
    }

    static let subsystemQueue: UInt16 = 3
    static let messagePacket: UInt16 = 0
    static let netlinkError: UInt16 = 2
    /// nlmsghdr (16 bytes) + nfgenmsg (4).
    static let packetHeaderLength = 20

    /// Appends each packet message in `bytes` to `packets`; other messages are skipped.
    static func parsePackets(_ bytes: UnsafeRawBufferPointer, into packets: inout [QueuedPacket]) {
        let count = bytes.count
        var offset = 0
        while offset + packetHeaderLength <= count {
            let length = Int(load32(bytes, offset))
            guard length >= packetHeaderLength, length <= count - offset else { return }
            if load16(bytes, offset + 4) == (subsystemQueue << 8) | messagePacket {
                let queue = UInt16(bytes[offset + 18]) << 8 | UInt16(bytes[offset + 19])
                var attribute = offset + packetHeaderLength
                var packet: QueuedPacket?
                var payload: [UInt8] = []
                while attribute + 4 <= offset + length {
                    let attributeLength = Int(load16(bytes, attribute))
                    guard attributeLength >= 4, attribute + attributeLength <= offset + length else { break }
                    let kind = load16(bytes, attribute + 2) & 0x3fff
                    if kind == 1, attributeLength >= 11 { // NFQA_PACKET_HDR: packet id, hw protocol, hook
                        packet = QueuedPacket(queue: queue, id: loadBigEndian32(bytes, attribute + 4))
                    } else if kind == 10 { // NFQA_PAYLOAD
                        payload = Array(bytes[(attribute + 4)..<(attribute + attributeLength)])
                    }
                    attribute += (attributeLength + 3) & ~3
                }
                if var packet {
                    packet.payload = payload
                    packets.append(packet)
                }
            }
            offset += (length + 3) & ~3
        }
    }

    /// The answer to a configuration request in `bytes`: the error code of its `NLMSG_ERROR` (0: acknowledged,
    /// else a negative errno); nil when `bytes` hold none.
    static func acknowledgement(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        let count = bytes.count
        var offset = 0
        while offset + 16 <= count {
            let length = Int(load32(bytes, offset))
            guard length >= 16, length <= count - offset else { return nil }
            if load16(bytes, offset + 4) == netlinkError {
                // struct nlmsgerr: the code, then the request's header. One too short to hold the code is no answer
                // (found by the nfqueue-messages fuzz target: the code was read from past the message).
                return length >= 20 ? Int32(bitPattern: load32(bytes, offset + 16)) : nil
            }
            offset += (length + 3) & ~3
        }
        return nil
    }

    // Netlink headers are in host order (little-endian here); netfilter payloads in network order.
    static func load16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }
    static func load32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
    static func loadBigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
