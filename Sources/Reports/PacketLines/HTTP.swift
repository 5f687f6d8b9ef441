import PacketDecoding

extension PacketLineRenderer {
    static func isHTTPPort(_ port: UInt16) -> Bool { port == 80 || port == 8080 }

    /// tcpdump's one-line HTTP summary after a TCP line: `: HTTP: <request or status line>` or `: HTTP`.
    func appendHTTPSummary(_ firstLine: HTTPFirstLine, to output: inout TextOutput) {
        output.append(": HTTP")
        switch firstLine {
        case .unrecognised:
            return
        case .cutFirstLine:
            output.append(" [|http]")
            output.printerRanOutOfBytes = true
        case .line(let text, let cut):
            output.append(": ")
            output.append(raw: text)
            if cut { output.append(" [|http]") }
        }
    }

    /// tcpdump -v: `: HTTP, length: N` and, for a request or response, every text line after a tab.
    func appendVerboseHTTP(_ payload: UnsafeRawBufferPointer, length: Int, to output: inout TextOutput) {
        output.append(": HTTP")
        if case .unrecognised = HTTPFirstLine(payload: payload, length: length) { return }
        output.append(", length: ")
        output.append(decimal: length)
        let end = HTTPFirstLine.forEachVerboseLine(payload: payload, length: length) { line in
            output.append("\n\t")
            output.append(raw: line)
        }
        if end != .stopped { output.append(" [|http]") }
        if end == .captureEndedMidLine { output.printerRanOutOfBytes = true }
    }
}
