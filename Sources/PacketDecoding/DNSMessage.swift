/// A DNS message (RFC 1035 section 4) as captured: a bounds-checked view that decodes the header, walks names
/// (compression pointers must point backwards, so every walk ends) and reads resource records. Nothing is
/// allocated. Borrows the packet's memory (not `Sendable`).
///
/// `bytes` are the captured bytes of the message; `length` is how long the message was on the wire (UDP payload
/// length, or the TCP length prefix). Reads past the captured bytes return nil: the caller marks the message
/// truncated, as tcpdump does with `[|domain]`.
public struct DNSMessage {
    public let bytes: UnsafeRawBufferPointer
    public let length: Int

    public static let headerLength = 12
    /// The longest name RFC 1035 allows (tcpdump's MAXCDNAME); longer names are marked, not printed whole.
    public static let maximumNameLength = 255

    public init(bytes: UnsafeRawBufferPointer, length: Int) {
        self.bytes = bytes
        self.length = length
    }

    /// True when the 12-byte header was captured.
    public var hasHeader: Bool { bytes.count >= Self.headerLength }
    public var id: UInt16 { bytes.u16(0) }
    public var flags: UInt16 { bytes.u16(2) }
    public var questionCount: Int { Int(bytes.u16(4)) }
    public var answerCount: Int { Int(bytes.u16(6)) }
    public var authorityCount: Int { Int(bytes.u16(8)) }
    public var additionalCount: Int { Int(bytes.u16(10)) }

    public var isResponse: Bool { flags & 0x8000 != 0 }
    public var opcode: UInt8 { UInt8((flags >> 11) & 0xf) }
    public var authoritative: Bool { flags & 0x0400 != 0 }
    public var truncated: Bool { flags & 0x0200 != 0 }
    public var recursionDesired: Bool { flags & 0x0100 != 0 }
    public var recursionAvailable: Bool { flags & 0x0080 != 0 }
    public var authenticData: Bool { flags & 0x0020 != 0 }
    public var checkingDisabled: Bool { flags & 0x0010 != 0 }
    /// The header's 4-bit response code.
    public var headerResponseCode: UInt16 { flags & 0xf }

    // MARK: Bounds-checked reads

    @inline(__always) func has(_ offset: Int, _ count: Int) -> Bool { offset >= 0 && offset + count <= bytes.count }
    public func u8(at offset: Int) -> UInt8? { has(offset, 1) ? bytes[offset] : nil }
    public func u16(at offset: Int) -> UInt16? { has(offset, 2) ? bytes.u16(offset) : nil }
    public func u32(at offset: Int) -> UInt32? { has(offset, 4) ? bytes.u32(offset) : nil }

    // MARK: Names

    /// The offset after the name at `offset` (tcpdump's ns_nskip): a pointer ends a name after its two bytes.
    /// nil when the captured bytes end inside it or a label type is reserved.
    public func skipName(at offset: Int) -> Int? {
        var at = offset
        guard var byte = u8(at: at) else { return nil }
        at += 1
        while byte != 0 {
            switch byte & 0xc0 {
            case 0xc0: return at + 1
            case 0x40:
                guard byte & 0x3f == 0x01, let bits = u8(at: at) else { return nil }  // only bit labels are known
                at += 1 + ((bits == 0 ? 256 : Int(bits)) + 7) / 8
            case 0x80: return nil
            default: at += Int(byte)
            }
            guard let next = u8(at: at) else { return nil }
            byte = next
            at += 1
        }
        return at
    }

    /// Walks the name at `offset` label by label, following compression pointers.
    public func name(at offset: Int) -> DNSNameReader { DNSNameReader(message: self, start: offset) }

    // MARK: Records

    /// The question at `offset`: its type and class (the name is at `offset`), and where the next item starts.
    public func question(at offset: Int) -> DNSQuestion? {
        guard let end = skipName(at: offset), let type = u16(at: end), let qclass = u16(at: end + 2) else { return nil }
        return DNSQuestion(nameOffset: offset, type: type, qclass: qclass, end: end + 4)
    }

    /// The fixed part of the resource record at `offset`; nil when its name or 10 fixed bytes were not captured.
    public func record(at offset: Int) -> DNSRecord? {
        guard let fixed = skipName(at: offset), has(fixed, 10) else { return nil }
        return DNSRecord(nameOffset: offset, type: bytes.u16(fixed), rclass: bytes.u16(fixed + 2),
                         ttl: bytes.u32(fixed + 4), dataOffset: fixed + 10, dataLength: Int(bytes.u16(fixed + 8)))
    }

    /// The record data decoded by type, for the types tcpdump prints; nil when it runs past the captured bytes.
    public func data(of record: DNSRecord) -> DNSRecordData? {
        let at = record.dataOffset
        guard record.dataEnd <= bytes.count else { return nil }
        switch record.type {
        case 1:
            guard let a = u32(at: at) else { return nil }
            return .address(.v4(a))
        case 28:
            guard has(at, 16) else { return nil }
            return .address(.v6(high: bytes.u64(at), low: bytes.u64(at + 8)))
        case 2, 5, 12, 39:
            return .name(at)
        case 15:
            guard let preference = u16(at: at) else { return nil }
            return .mailExchange(preference: preference, nameOffset: at + 2)
        case 33:
            guard has(at, 6) else { return nil }
            return .service(priority: bytes.u16(at), weight: bytes.u16(at + 2), port: bytes.u16(at + 4), nameOffset: at + 6)
        case 16:
            return .text(DNSCharacterStrings(bytes: bytes, start: at, end: record.dataEnd))
        case 6:
            return .startOfAuthority(nameOffset: at)
        case 41:
            return .options(udpPayloadSize: record.rclass, extendedResponseCode: UInt8(record.ttl >> 24),
                            dnssecOK: record.ttl & 0x8000 != 0)
        default:
            return .other
        }
    }

    /// tcpdump's response code: the header's four bits, extended by an OPT record's upper eight (RFC 6891),
    /// found by walking every section. Stops quietly where the captured bytes end.
    public var responseCode: UInt16 {
        let code = headerResponseCode
        guard hasHeader else { return code }
        var at = Self.headerLength
        for _ in 0..<questionCount {
            guard let end = skipName(at: at) else { return code }
            at = end + 4
            if at >= bytes.count { return code }
        }
        for _ in 0..<(answerCount + authorityCount) {
            guard let end = skipName(at: at), let dataLength = u16(at: end + 8) else { return code }
            at = end + 10 + Int(dataLength)
            if at >= bytes.count { return code }
        }
        for _ in 0..<additionalCount {
            guard let end = skipName(at: at), let type = u16(at: end) else { return code }
            if type == 41 {
                guard let extended = u8(at: end + 4) else { return code }
                return code | UInt16(extended) << 4
            }
            guard let dataLength = u16(at: end + 8) else { return code }
            at = end + 10 + Int(dataLength)
            if at >= bytes.count { return code }
        }
        return code
    }
}

public struct DNSQuestion: Sendable, Hashable {
    public var nameOffset: Int
    public var type: UInt16
    public var qclass: UInt16
    /// Offset of the next question or record.
    public var end: Int
}

public struct DNSRecord: Sendable, Hashable {
    public var nameOffset: Int
    public var type: UInt16
    public var rclass: UInt16
    public var ttl: UInt32
    public var dataOffset: Int
    public var dataLength: Int
    public var dataEnd: Int { dataOffset + dataLength }
}

/// Record data for the types the printers show. Name offsets are read with `DNSMessage.name(at:)`.
public enum DNSRecordData {
    case address(IPAddress)
    /// NS, CNAME, PTR, DNAME.
    case name(Int)
    case mailExchange(preference: UInt16, nameOffset: Int)
    case service(priority: UInt16, weight: UInt16, port: UInt16, nameOffset: Int)
    case text(DNSCharacterStrings)
    case startOfAuthority(nameOffset: Int)
    /// The EDNS OPT pseudo-record (RFC 6891).
    case options(udpPayloadSize: UInt16, extendedResponseCode: UInt8, dnssecOK: Bool)
    case other
}

/// The <character-string>s of a TXT record: each a length byte and that many bytes.
public struct DNSCharacterStrings: IteratorProtocol, Sequence {
    public enum Element {
        case string(UnsafeRawBufferPointer)
        /// The string runs past the captured bytes; `captured` holds what there is.
        case cut(captured: UnsafeRawBufferPointer)
    }

    private let bytes: UnsafeRawBufferPointer
    private var at: Int
    private let end: Int
    private var done = false

    init(bytes: UnsafeRawBufferPointer, start: Int, end: Int) {
        self.bytes = bytes
        self.at = start
        self.end = end
    }

    public mutating func next() -> Element? {
        guard !done, at < end else { return nil }
        guard at < bytes.count else { done = true; return .cut(captured: bytes.slice(bytes.count, bytes.count)) }
        let count = Int(bytes[at])
        let start = at + 1
        at = start + count
        if at > bytes.count {
            done = true
            return .cut(captured: bytes.slice(start, bytes.count))
        }
        return .string(bytes.slice(start, at))
    }
}

/// Walks one name, label by label, following compression pointers. Each pointer must point before the previous
/// position (as BIND requires), so the walk always ends: at most one step per byte of the message.
public struct DNSNameReader: IteratorProtocol, Sequence {
    public enum Element {
        case label(UnsafeRawBufferPointer)
        /// An EDNS bit-string label (RFC 2673): the bit count and its bytes.
        case bitLabel(bits: Int, bytes: UnsafeRawBufferPointer)
        /// A compression pointer that does not point backwards (tcpdump's `<BAD PTR>`).
        case badPointer
        /// Label type 0x80 (tcpdump's `<BAD LABEL TYPE>`).
        case badLabelType
        /// An extended label type other than bit strings (tcpdump's `<ELT n>`).
        case unknownExtendedLabel(UInt8)
        /// The captured bytes end inside the name.
        case truncated
        /// The captured bytes end inside this label; `captured` holds what there is of it.
        case cutLabel(captured: UnsafeRawBufferPointer)
    }

    private let message: DNSMessage
    private var at: Int
    private var lowestPointerTarget: Int
    private var done = false
    /// Where the name ends in the record it started in (after the first pointer, or after the root label).
    public private(set) var end: Int?

    init(message: DNSMessage, start: Int) {
        self.message = message
        self.at = start
        self.lowestPointerTarget = start
    }

    public mutating func next() -> Element? {
        guard !done else { return nil }
        while true {
            guard let byte = message.u8(at: at) else { done = true; return .truncated }
            switch byte & 0xc0 {
            case 0xc0:
                guard let low = message.u8(at: at + 1) else { done = true; return .truncated }
                if end == nil { end = at + 2 }
                let target = Int(byte & 0x3f) << 8 | Int(low)
                guard target < lowestPointerTarget else { done = true; return .badPointer }
                lowestPointerTarget = target
                at = target
                continue
            case 0x80:
                done = true
                return .badLabelType
            case 0x40:
                let type = byte & 0x3f
                guard type == 0x01 else { done = true; return .unknownExtendedLabel(type) }
                guard let count = message.u8(at: at + 1) else { done = true; return .truncated }
                let bits = count == 0 ? 256 : Int(count)
                let length = (bits + 7) / 8
                guard message.has(at + 2, length) else { done = true; return .truncated }
                let label = message.bytes.slice(at + 2, at + 2 + length)
                at += 2 + length
                return .bitLabel(bits: bits, bytes: label)
            default:
                if byte == 0 {
                    if end == nil { end = at + 1 }
                    done = true
                    return nil
                }
                let length = Int(byte)
                guard message.has(at + 1, length) else {
                    done = true
                    return .cutLabel(captured: message.bytes.slice(Swift.min(at + 1, message.bytes.count)))
                }
                let label = message.bytes.slice(at + 1, at + 1 + length)
                at += 1 + length
                return .label(label)
            }
        }
    }
}
