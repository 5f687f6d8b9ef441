import PacketDecoding

/// `--json`: a `dns` object on packets to or from port 53 (schema in docs/capture.md). Records the capture cut
/// are left out and `"cut": true` says so; names longer than 255 characters or with bad pointers end early the
/// same way.
extension PacketJSONRenderer {
    private static let responseCodeNames: [StaticString] = [
        "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET",
        "NOTAUTH", "NOTZONE",
    ]

    func appendDNS(_ message: DNSMessage, to output: inout TextOutput) {
        guard message.hasHeader, message.length >= DNSMessage.headerLength else {
            output.append(",\"dns\":{\"malformed\":true}")
            return
        }
        output.append(",\"dns\":{\"id\":")
        output.append(decimal: message.id)
        output.append(",\"response\":")
        output.append(message.isResponse ? "true" : "false")
        output.append(",\"opcode\":")
        output.append(decimal: message.opcode)
        let code = Int(message.responseCode)
        output.append(",\"rcode\":")
        output.append(decimal: code)
        if code < Self.responseCodeNames.count {
            output.append(",\"rcode_name\":\"")
            output.append(Self.responseCodeNames[code])
            output.append("\"")
        }
        output.append(",\"flags\":[")
        let flags: [(Bool, StaticString)] = [(message.authoritative, "aa"), (message.truncated, "tc"),
                                             (message.recursionDesired, "rd"), (message.recursionAvailable, "ra"),
                                             (message.authenticData, "ad"), (message.checkingDisabled, "cd")]
        output.strings(flags.lazy.filter(\.0).map(\.1))
        output.append("],\"counts\":[")
        output.append(decimal: message.questionCount)
        output.append(",")
        output.append(decimal: message.answerCount)
        output.append(",")
        output.append(decimal: message.authorityCount)
        output.append(",")
        output.append(decimal: message.additionalCount)
        output.append("],\"questions\":[")
        var at = DNSMessage.headerLength
        var cut = false
        for index in 0..<message.questionCount {
            guard let question = message.question(at: at) else { cut = true; break }
            if index > 0 { output.append(",") }
            output.append("{\"name\":")
            if !appendName(message, at: at, to: &output) { cut = true }
            output.append(",\"type\":")
            appendType(question.type, to: &output)
            output.append("}")
            at = question.end
        }
        output.append("]")
        // Answers, authority and additional records; the OPT pseudo-record becomes `edns`.
        var edns: (size: UInt16, dnssecOK: Bool)?
        for (section, count) in [("answers", message.answerCount), ("authority", message.authorityCount),
                                 ("additional", message.additionalCount)] as [(StaticString, Int)] {
            output.append(",\"")
            output.append(section)
            output.append("\":[")
            var written = 0
            for _ in 0..<count where !cut {
                guard let record = message.record(at: at), record.dataEnd <= message.bytes.count,
                      let data = message.data(of: record) else { cut = true; break }
                at = record.dataEnd
                if case .options(let size, _, let dnssecOK) = data {
                    edns = (size, dnssecOK)
                    continue
                }
                if written > 0 { output.append(",") }
                written += 1
                output.append("{\"name\":")
                if !appendName(message, at: record.nameOffset, to: &output) { cut = true }
                output.append(",\"type\":")
                appendType(record.type, to: &output)
                output.append(",\"ttl\":")
                output.append(decimal: record.ttl)
                switch data {
                case .address(let address):
                    output.append(",\"data\":\"")
                    output.append(address)
                    output.append("\"")
                case .name(let name):
                    output.append(",\"data\":")
                    if !appendName(message, at: name, to: &output) { cut = true }
                case .mailExchange(let preference, let name):
                    output.append(",\"preference\":")
                    output.append(decimal: preference)
                    output.append(",\"data\":")
                    if !appendName(message, at: name, to: &output) { cut = true }
                case .service(let priority, let weight, let port, let name):
                    output.append(",\"priority\":")
                    output.append(decimal: priority)
                    output.append(",\"weight\":")
                    output.append(decimal: weight)
                    output.append(",\"port\":")
                    output.append(decimal: port)
                    output.append(",\"data\":")
                    if !appendName(message, at: name, to: &output) { cut = true }
                case .text(let strings):
                    output.append(",\"data\":[")
                    var firstString = true
                    for string in strings {
                        if !firstString { output.append(",") }
                        firstString = false
                        switch string {
                        case .string(let text): appendString(text, to: &output)
                        case .cut(let text):
                            appendString(text, to: &output)
                            cut = true
                        }
                    }
                    output.append("]")
                case .startOfAuthority(let name):
                    output.append(",\"data\":")
                    if !appendName(message, at: name, to: &output) { cut = true }
                case .options, .other:
                    break
                }
                output.append("}")
            }
            output.append("]")
        }
        if let edns {
            output.append(",\"edns\":{\"udp_size\":")
            output.append(decimal: edns.size)
            output.append(",\"dnssec_ok\":")
            output.append(edns.dnssecOK ? "true" : "false")
            output.append("}")
        }
        output.append(",\"cut\":")
        output.append(cut || message.bytes.count < message.length ? "true" : "false")
        output.append("}")
    }

    /// A name as a JSON string (`www.example.com.`, `.` for the root); false when it could not be read whole.
    private func appendName(_ message: DNSMessage, at offset: Int, to output: inout TextOutput) -> Bool {
        output.append("\"")
        var labels = 0
        var complete = true
        for element in message.name(at: offset) {
            switch element {
            case .label(let label):
                labels += 1
                output.appendJSONEscaped(label, bytesAboveASCII: true)
                output.append(".")
            case .cutLabel(let part):
                output.appendJSONEscaped(part, bytesAboveASCII: true)
                complete = false
            case .bitLabel:
                labels += 1
                output.append("\\\\[bits].")
            default:
                complete = false
            }
        }
        if labels == 0 && complete { output.append(".") }
        output.append("\"")
        return complete
    }

    private func appendString(_ bytes: UnsafeRawBufferPointer, to output: inout TextOutput) {
        output.append("\"")
        output.appendJSONEscaped(bytes, bytesAboveASCII: true)
        output.append("\"")
    }

    private func appendType(_ type: UInt16, to output: inout TextOutput) {
        output.append("\"")
        switch type {
        case 64: output.append("SVCB")
        case 65: output.append("HTTPS")
        default: PacketLineRenderer().appendDNSType(type, to: &output)
        }
        output.append("\"")
    }
}
