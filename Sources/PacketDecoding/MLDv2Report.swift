/// An MLDv2 listener report (ICMPv6 type 143, RFC 3810 section 5.2): after the 8-byte ICMPv6 header, group records
/// of a type, an auxiliary data length, a source count, the group address and the sources. Read as tcpdump's
/// mldv2_report_print reads it, so the lines agree: a record starts right after the previous record's sources
/// (tcpdump does not step over auxiliary data, which RFC 3810 hosts never send).
public struct MLDv2Report {
    public struct GroupRecord {
        public var type: UInt8
        public var sourceCount: Int
        public var group: IPAddress
        /// Where the record's sources start, as an offset into the message's body (after the ICMPv6 header).
        public var sourcesOffset: Int
        /// Where the next record would start.
        public var end: Int { sourcesOffset + sourceCount * 16 }
    }

    /// The header's count of group records (the low 16 bits of the word after the checksum).
    public let recordCount: Int
    /// The message's length on the wire, after the ICMPv6 header.
    public let length: Int
    private let body: UnsafeRawBufferPointer

    public init(_ message: ICMPMessage) {
        recordCount = Int(message.sequence)
        length = message.length - 8
        body = message.body
    }

    /// The record at `offset` in the body: nil when its fixed 20 bytes were not captured (the caller checks the
    /// wire length first).
    public func record(at offset: Int) -> GroupRecord? {
        guard offset >= 0, offset + 20 <= body.count else { return nil }
        return GroupRecord(type: body[offset], sourceCount: Int(body.u16(offset + 2)),
                           group: .v6(high: body.u64(offset + 4), low: body.u64(offset + 12)), sourcesOffset: offset + 20)
    }

    /// The source address at `offset` in the body, when captured.
    public func source(at offset: Int) -> IPAddress? {
        guard offset >= 0, offset + 16 <= body.count else { return nil }
        return .v6(high: body.u64(offset), low: body.u64(offset + 8))
    }
}
