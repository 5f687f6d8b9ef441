/// An Ethernet configuration-testing ("loopback", EtherType 0x9000) message, as tcpdump's print-loopback.c reads
/// it: a little-endian skip count, then at that offset the function (1 reply, 2 forward data) and its fields.
public struct EthernetLoopbackMessage: Sendable, Hashable {
    public var skipCount: UInt16
    /// Nil when the message is too short to hold a function after the skipped bytes.
    public var function: UInt16?
    /// Reply: the receipt number.
    public var receiptNumber: UInt16?
    /// Forward data: where to send the message next.
    public var forwardingAddress: MACAddress?
    /// Bytes after the fields above, by the frame's length.
    public var dataLength: Int?
    /// The fields ran past the message's length (tcpdump prints " (invalid)").
    public var invalid = false
    /// The snap length cut the message before its fields or data ended (tcpdump prints " [|loopback]").
    public var cut = false

    /// `payload` holds the captured bytes after the Ethernet header; `length` is the message's length on the wire.
    public init?(payload: UnsafeRawBufferPointer, length: Int) {
        func littleEndian16(_ offset: Int) -> UInt16? {
            guard offset + 2 <= payload.count else { return nil }
            return UInt16(payload[offset]) | UInt16(payload[offset + 1]) << 8
        }
        guard length >= 2, let skip = littleEndian16(0) else { return nil }
        skipCount = skip
        var offset = 2, remaining = length - 2
        guard Int(skip) <= remaining else { invalid = true; return }
        offset += Int(skip); remaining -= Int(skip)
        guard remaining >= 2 else { invalid = true; return }
        guard let function = littleEndian16(offset) else { cut = true; return }
        self.function = function
        offset += 2; remaining -= 2
        switch function {
        case 1:
            guard remaining >= 2 else { invalid = true; return }
            guard let receipt = littleEndian16(offset) else { cut = true; return }
            receiptNumber = receipt
            offset += 2
            dataLength = remaining - 2
        case 2:
            guard remaining >= 6 else { invalid = true; return }
            guard offset + 6 <= payload.count else { cut = true; return }
            var mac: UInt64 = 0
            for i in 0..<6 { mac = mac << 8 | UInt64(payload[offset + i]) }
            forwardingAddress = MACAddress(rawValue: mac)
            offset += 6
            dataLength = remaining - 6
        default:
            break
        }
        // tcpdump checks that the rest of the message was captured.
        if offset + (dataLength ?? remaining) > payload.count { cut = true }
    }
}
