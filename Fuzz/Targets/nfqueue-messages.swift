// What the kernel sends the user-space engine on its netfilter queue socket, through the engine's reader
// (Sources/LinkConditioner/Engine/NetfilterQueueMessages.swift, compiled into this target: LinkConditioner's
// dependencies are not in the fuzz build). Input: 1 options byte (bit 0: read as the answer to a configuration
// request, else as packet messages), then the received bytes, copied into a buffer of exactly their size so
// AddressSanitizer sees any read past what was received. Checks what the engine relies on: each packet's payload
// is a copy of bytes inside the message, and no more packets come out than 20-byte messages fit.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNetfilterQueueMessages(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    // Exactly the received size, so a read past it is AddressSanitizer's to report.
    input.withRestInExactBuffer { bytes in
        if options & 1 != 0 {
            _ = NetfilterQueueMessages.acknowledgement(bytes)
            return
        }
        var packets: [NetfilterQueueMessages.QueuedPacket] = []
        NetfilterQueueMessages.parsePackets(bytes, into: &packets)
        precondition(packets.count <= bytes.count / NetfilterQueueMessages.packetHeaderLength, "more packets than messages fit")
        for packet in packets { precondition(packet.payload.count <= bytes.count, "a payload larger than what was received") }
    }
    return 0
}
