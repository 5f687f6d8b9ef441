/// The part of a DNS message (RFC 1035 §4.1) a forwarder that answers some queries itself needs: a query's header
/// and its one question, and an answer with no records made from them. Pure Swift with no imports, so the fuzz
/// target compiles it alone (Fuzz/Targets/dns-messages.swift).
///
/// Bounded by construction: every read is checked against the message's length first; a name is read in at most
/// 127 labels of at most 63 bytes and 255 bytes in all, and a compression pointer is refused (a question is a
/// query's first name: there is nothing before it to point at), so the walk over a name always ends.
public enum DNSMessage {
    public static let headerLength = 12
    /// RFC 1035 §2.3.4: a name's wire form, length bytes and the root's zero included.
    public static let maximumNameLength = 255
    public static let maximumLabelLength = 63
    /// The longest message over TCP (its two-byte length prefix) and the largest UDP payload accepted.
    public static let maximumLength = 65_535

    /// What an answer without records says (RFC 1035 §4.1.1 RCODE).
    public enum ResponseCode: UInt16, Sendable {
        case serverFailure = 2
        case nameError = 3
        case refused = 5
    }

    /// The query's question, or what is wrong with it and where.
    public static func question(in bytes: UnsafeRawBufferPointer) throws(DNSMessageError) -> DNSQuestion {
        func need(_ count: Int, at offset: Int, _ part: DNSMessageError.Part) throws(DNSMessageError) {
            guard offset + count <= bytes.count else {
                throw .truncated(part: part, offset: offset, needed: count, available: max(0, bytes.count - offset))
            }
        }
        func u16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]) }
        try need(headerLength, at: 0, .header)
        let flags = u16(2)
        guard flags & 0x8000 == 0 else { throw .notAQuery }
        let opcode = UInt8((flags >> 11) & 0xF)
        guard opcode == 0 else { throw .unsupportedOpcode(opcode) }
        let questions = u16(4)
        guard questions == 1 else { throw .questionCount(questions) }

        var name = ""
        var offset = headerLength
        while true {
            try need(1, at: offset, .name)
            let length = Int(bytes[offset])
            if length == 0 { offset += 1; break }
            guard length <= maximumLabelLength else { throw .labelTooLong(offset: offset, length: length) }
            guard offset + 1 + length - headerLength < maximumNameLength else { throw .nameTooLong(offset: offset) }
            try need(1 + length, at: offset, .name)
            if !name.isEmpty { name.append(".") }
            for index in offset + 1...offset + length { appendLowercased(bytes[index], to: &name) }
            offset += 1 + length
        }
        try need(4, at: offset, .question)
        let type = u16(offset), questionClass = u16(offset + 2)
        offset += 4
        // An OPT pseudo-record (EDNS, RFC 6891) right after the question: the answer carries one too.
        var edns = false
        if u16(10) >= 1, offset + 11 <= bytes.count, bytes[offset] == 0, u16(offset + 1) == 41 { edns = true }
        return DNSQuestion(id: u16(0), flags: flags, name: name, type: type, questionClass: questionClass,
                           end: offset, edns: edns)
    }

    /// Letters folded to lower case; bytes other than letters, digits, `-` and `_` written `\DDD` (as dig writes
    /// them), so a name with a dot or odd bytes inside a label never equals a plain name.
    static func appendLowercased(_ byte: UInt8, to name: inout String) {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): name.unicodeScalars.append(Unicode.Scalar(byte + 32))
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            name.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            name.append("\\")
            let digits = String(byte)
            name.append(String(repeating: "0", count: 3 - digits.count) + digits)
        }
    }

    /// An answer to `query` with no records and `code`: the query's id, opcode, RD and CD, with QR and RA set, its
    /// question copied, and an OPT record (payload size 1232, no options) when the query had one.
    public static func answer(to query: UnsafeRawBufferPointer, question: DNSQuestion, code: ResponseCode) -> [UInt8] {
        var answer: [UInt8] = []
        answer.reserveCapacity(question.end + 11)
        let flags = 0x8000 | 0x0080 | (question.flags & (0x7800 | 0x0100 | 0x0010)) | code.rawValue
        answer += [UInt8(question.id >> 8), UInt8(question.id & 0xFF), UInt8(flags >> 8), UInt8(flags & 0xFF),
                   0, 1, 0, 0, 0, 0, 0, question.edns ? 1 : 0]
        answer += query[headerLength..<question.end]
        if question.edns { answer += [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0] }
        return answer
    }

    /// Whether `bytes` is an answer (QR set) with `id`: what a forwarder relays from an upstream server.
    public static func isAnswer(_ bytes: UnsafeRawBufferPointer, to id: UInt16) -> Bool {
        bytes.count >= headerLength && bytes[2] & 0x80 != 0 && UInt16(bytes[0]) << 8 | UInt16(bytes[1]) == id
    }

    /// The response code of an answer (RCODE, low four bits of the flags), nil when shorter than a header.
    public static func responseCode(_ bytes: UnsafeRawBufferPointer) -> UInt8? {
        bytes.count >= headerLength ? bytes[3] & 0x0F : nil
    }
}

/// A query's one question.
public struct DNSQuestion: Equatable, Sendable {
    public var id: UInt16
    /// The header's flags as sent (opcode, RD, CD).
    public var flags: UInt16
    /// Lower case, labels joined by dots, without the root's final dot ("" for the root itself).
    public var name: String
    public var type: UInt16
    public var questionClass: UInt16
    /// Offset just past the question: header and question are what an answer copies.
    public var end: Int
    /// The query carries an OPT record (EDNS) right after its question.
    public var edns: Bool
}

/// Why a message is not a query this forwarder can answer itself (it forwards such a message unchanged).
public enum DNSMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Part: String, Sendable { case header, name, question = "question type and class" }
    case truncated(part: Part, offset: Int, needed: Int, available: Int)
    case notAQuery
    case unsupportedOpcode(UInt8)
    case questionCount(UInt16)
    case labelTooLong(offset: Int, length: Int)
    case nameTooLong(offset: Int)

    public var description: String {
        switch self {
        case .truncated(let part, let offset, let needed, let available):
            "DNS \(part.rawValue) at offset \(offset): needs \(needed) bytes, \(available) left"
        case .notAQuery: "DNS message is an answer (QR set), not a query"
        case .unsupportedOpcode(let opcode): "DNS opcode \(opcode) is not QUERY (0)"
        case .questionCount(let count): "DNS query has \(count) questions, not 1"
        case .labelTooLong(let offset, let length):
            "DNS name label at offset \(offset): length \(length) (a compression pointer or over 63 bytes)"
        case .nameTooLong(let offset): "DNS name at offset \(offset): longer than 255 bytes"
        }
    }
}
