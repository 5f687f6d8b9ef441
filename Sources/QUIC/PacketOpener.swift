/// Takes a packet's protection off (RFC 9001 section 5.4, then 5.3): the header first, which shows the packet
/// number's length and the key phase, then the payload with the keys the caller chose from them. The header is
/// unmasked in a copy (packet bytes are borrowed and read-only) and the payload opened into a buffer; both are
/// reused from packet to packet, so nothing is allocated per packet once they have grown.
struct PacketOpener {
    /// The unprotected header of the last packet: the AEAD's associated data.
    private(set) var header: [UInt8] = []
    /// The last packet's frames.
    var plaintext: [UInt8] = []

    struct Unprotected {
        var firstByte: UInt8
        var truncatedPacketNumber: UInt64
        var packetNumberBits: Int
        /// Short headers: the key phase bit (RFC 9001 section 6).
        var keyPhase: Bool { firstByte & 0x04 != 0 }
    }

    /// Removes header protection; nil when the packet is too short to hold a sample or libcrypto refuses.
    mutating func unprotect(_ datagram: UnsafeRawBufferPointer, _ packet: PacketHeader,
                            with protection: HeaderProtection) -> Unprotected? {
        let pnOffset = packet.packetNumberOffset
        let sampleStart = pnOffset + 4
        guard sampleStart + HeaderProtection.sampleLength <= packet.end else { return nil }
        var mask: (UInt64, UInt64) = (0, 0)
        guard protection.mask(sample: UnsafeRawBufferPointer(rebasing: datagram[sampleStart..<(sampleStart + 16)]),
                              into: &mask) else { return nil }
        return withUnsafeBytes(of: mask) { mask -> Unprotected in
            let isLong = datagram[packet.start] & 0x80 != 0
            let first = datagram[packet.start] ^ (mask[0] & (isLong ? 0x0f : 0x1f))
            let length = Int(first & 0x03) + 1
            header.removeAll(keepingCapacity: true)
            header.append(contentsOf: UnsafeRawBufferPointer(rebasing: datagram[packet.start..<pnOffset]))
            header[0] = first
            var truncated: UInt64 = 0
            for index in 0..<length {
                let byte = datagram[pnOffset + index] ^ mask[1 + index]
                header.append(byte)
                truncated = truncated << 8 | UInt64(byte)
            }
            return Unprotected(firstByte: first, truncatedPacketNumber: truncated, packetNumberBits: length * 8)
        }
    }

    /// Opens the payload of the packet `unprotect` last read into `plaintext`; false when the tag does not verify.
    mutating func open(_ datagram: UnsafeRawBufferPointer, _ packet: PacketHeader, packetNumber: UInt64,
                       with protection: PacketProtection) -> Bool {
        let payloadStart = packet.start + header.count
        guard payloadStart <= packet.end else { return false }
        return header.withUnsafeBytes { header in
            protection.open(header: header, packetNumber: packetNumber,
                            payload: UnsafeRawBufferPointer(rebasing: datagram[payloadStart..<packet.end]),
                            into: &plaintext)
        }
    }
}
