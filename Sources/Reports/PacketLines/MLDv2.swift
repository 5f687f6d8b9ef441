import PacketDecoding

extension PacketLineRenderer {
    /// -v: each group record of an MLDv2 report, as tcpdump's print-icmp6.c prints them: `[gaddr G to_in, 2
    /// source(s)]`, with -vv the sources themselves (`[gaddr G to_in { S1 S2 }]`); a count the message is too short
    /// for ends the line with tcpdump's `[invalid number of groups]` or `[invalid number of sources N]`.
    func appendMLDv2Records(_ message: ICMPMessage, to output: inout TextOutput) {
        let report = MLDv2Report(message)
        var offset = 0
        for _ in 0..<report.recordCount {
            guard report.length >= offset + 20 else {
                output.append(" [invalid number of groups]")
                return
            }
            guard let record = report.record(at: offset) else { return cutMLDv2(&output) }
            output.append(" [gaddr ")
            output.append(record.group)
            output.append(" ")
            switch record.type {
            case 1: output.append("is_in")
            case 2: output.append("is_ex")
            case 3: output.append("to_in")
            case 4: output.append("to_ex")
            case 5: output.append("allow")
            case 6: output.append("block")
            default:
                output.append(" [v2-report-#")
                output.append(decimal: record.type)
                output.append("]")
            }
            guard report.length >= record.end else {
                output.append(" [invalid number of sources ")
                output.append(decimal: record.sourceCount)
                output.append("]")
                return
            }
            if options.verbosity == 1 {
                output.append(", ")
                output.append(decimal: record.sourceCount)
                output.append(" source(s)")
            } else {
                output.append(" {")
                for index in 0..<record.sourceCount {
                    guard let source = report.source(at: record.sourcesOffset + index * 16) else { return cutMLDv2(&output) }
                    output.append(" ")
                    output.append(source)
                }
                output.append(" }")
            }
            output.append("]")
            offset = record.end
        }
    }

    /// The capture ended inside a record: tcpdump's read long-jumps.
    private func cutMLDv2(_ output: inout TextOutput) {
        output.append(" [|icmp6]")
        output.printerRanOutOfBytes = true
    }
}
