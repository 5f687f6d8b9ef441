// What a sandbox's command sends its resolver, through the DNS forwarder's reader (Sources/Sandbox/DNSMessage.swift,
// compiled into this target: the Sandbox module needs Foundation and SystemSupport, not in the fuzz build). Input:
// 1 options byte (bits 0-1 pick the answer: NXDOMAIN, SERVFAIL or REFUSED), then one UDP payload or TCP message,
// copied into a buffer of exactly its size so AddressSanitizer sees any read past it. Checks what the forwarder
// relies on: a question lies inside the message, its name no longer than 255 wire bytes can spell (escapes counted),
// and the answer made from it reads back as an answer to the same id with the same question and the code asked for.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSMessages(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    input.withRestInExactBuffer { bytes in
        guard let question = try? DNSMessage.question(in: bytes) else { return }
        precondition(question.end > DNSMessage.headerLength && question.end <= bytes.count, "a question outside the message")
        precondition(question.name.utf8.count <= 4 * DNSMessage.maximumNameLength, "a name longer than 255 wire bytes allow")
        let code: DNSMessage.ResponseCode = switch options & 3 {
        case 0: .nameError
        case 1: .serverFailure
        default: .refused
        }
        let answer = DNSMessage.answer(to: bytes, question: question, code: code)
        answer.withUnsafeBytes { made in
            precondition(DNSMessage.isAnswer(made, to: question.id), "the answer is not one to the query's id")
            precondition(DNSMessage.responseCode(made) == UInt8(code.rawValue), "the answer's code is not the one asked for")
            // The question copied back: the same bytes after the header.
            precondition(made[DNSMessage.headerLength..<question.end].elementsEqual(bytes[DNSMessage.headerLength..<question.end]),
                         "the answer's question differs from the query's")
        }
    }
    return 0
}
