import TLSWire

/// One packet's header inside a UDP datagram (RFC 9000 section 17), read up to its protected packet number. Ranges
/// are offsets into the datagram; nothing is copied. A datagram may hold several long-header packets (coalesced,
/// section 12.2), each ending where its Length field says; a short-header packet takes the rest.
struct PacketHeader {
    enum Kind: Equatable {
        case long(LongPacketType)
        case short
        /// Version 0: the server lists the versions it speaks (section 17.2.1).
        case versionNegotiation
        /// A long header of a version we cannot read: the rest of the datagram is skipped.
        case unknownVersion
    }

    var kind: Kind
    var start: Int
    var version: UInt32
    var dcid: Range<Int>
    var scid: Range<Int>
    /// An Initial's token, or a Retry's (which runs to the integrity tag).
    var token: Range<Int>
    /// Where the protected packet number begins (for Retry and version negotiation: the end).
    var packetNumberOffset: Int
    /// Where this packet ends: the next coalesced packet starts here.
    var end: Int

    /// A Version Negotiation packet's list (its versions after the connection IDs, the first 64), in `datagram`.
    func offeredVersions(in datagram: UnsafeRawBufferPointer) -> [UInt32] {
        var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: datagram[scid.upperBound...]))
        var versions: [UInt32] = []
        while let version = cursor.u32(), versions.count < 64 { versions.append(version) }
        return versions
    }

    /// The packet starting at `start`, or nil when its header is cut short or does not parse. A short header's
    /// Destination Connection ID has no length on the wire: `shortDCIDLength` is the one the connection uses.
    static func read(_ datagram: UnsafeRawBufferPointer, at start: Int, shortDCIDLength: Int) -> PacketHeader? {
        guard start < datagram.count else { return nil }
        var cursor = ByteCursor(datagram)
        cursor.offset = start
        guard let first = cursor.u8() else { return nil }
        if first & 0x80 == 0 {
            guard first & 0x40 != 0, cursor.remaining >= shortDCIDLength else { return nil }
            let dcid = cursor.offset..<(cursor.offset + shortDCIDLength)
            let pn = dcid.upperBound
            return PacketHeader(kind: .short, start: start, version: 0, dcid: dcid, scid: pn..<pn, token: pn..<pn,
                                packetNumberOffset: pn, end: datagram.count)
        }
        guard let version = cursor.u32(), let dcid = cursor.lengthPrefixedRange(), let scid = cursor.lengthPrefixedRange()
        else { return nil }
        let end = datagram.count
        if version == 0 {
            return PacketHeader(kind: .versionNegotiation, start: start, version: 0, dcid: dcid, scid: scid,
                                token: end..<end, packetNumberOffset: end, end: end)
        }
        guard let known = QUICVersion(version) else {
            return PacketHeader(kind: .unknownVersion, start: start, version: version, dcid: dcid, scid: scid,
                                token: end..<end, packetNumberOffset: end, end: end)
        }
        // v1 and v2 limit connection IDs to 20 bytes and set the fixed bit (RFC 9000 section 17.2).
        guard dcid.count <= 20, scid.count <= 20, first & 0x40 != 0 else { return nil }
        let type = known.longPacketType((first >> 4) & 0x3)
        var token = cursor.offset..<cursor.offset
        switch type {
        case .retry:
            // Retry token, then a 16-byte integrity tag, to the end of the datagram.
            guard cursor.remaining >= 16 else { return nil }
            return PacketHeader(kind: .long(.retry), start: start, version: version, dcid: dcid, scid: scid,
                                token: cursor.offset..<(end - 16), packetNumberOffset: end, end: end)
        case .initial:
            guard let length = cursor.varintLength(), cursor.skip(length) else { return nil }
            token = (cursor.offset - length)..<cursor.offset
        case .zeroRTT, .handshake:
            break
        }
        guard let length = cursor.varintLength(), cursor.remaining >= length else { return nil }
        return PacketHeader(kind: .long(type), start: start, version: version, dcid: dcid, scid: scid, token: token,
                            packetNumberOffset: cursor.offset, end: cursor.offset + length)
    }
}

extension ByteCursor {
    /// A connection ID with a one-byte length before it, as the offsets it spans.
    fileprivate mutating func lengthPrefixedRange() -> Range<Int>? {
        guard let length = u8(), skip(Int(length)) else { return nil }
        return (offset - Int(length))..<offset
    }
}

/// A packet number from its truncated form and the largest one received in its space (RFC 9000 appendix A.3).
func decodePacketNumber(largest: UInt64?, truncated: UInt64, bits: Int) -> UInt64 {
    let expected = largest.map { $0 &+ 1 } ?? 0
    let window: UInt64 = 1 << UInt64(bits), half = window / 2, mask = window - 1
    let candidate = (expected & ~mask) | truncated
    if candidate &+ half <= expected && candidate < (1 << 62) - window { return candidate + window }
    if candidate > expected &+ half && candidate >= window { return candidate - window }
    return candidate
}
