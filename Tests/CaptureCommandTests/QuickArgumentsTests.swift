import Testing
@testable import capture

/// QuickArguments builds the command for the everyday `-r FILE` forms without swift-argument-parser; what it builds
/// must be what the parser builds for the same words, every field (an option added to the command but not to the
/// quick path shows up here as a field the parser set and the quick path did not).
@Suite struct QuickArgumentsTests {
    /// Every field's state, as dump() shows it; option groups' help titles (not values) left out.
    private func described(_ command: CaptureCommand) -> [Substring] {
        var text = ""
        dump(command, to: &text)
        return text.split(separator: "\n").filter { !$0.contains("- title: ") }
    }

    @Test(arguments: [
        ["-r", "in.pcap"],
        ["-r", "in.pcap", "-n"],
        ["-n", "-r", "in.pcap", "tcp", "port", "80"],
        ["-r", "in.pcap", "-q", "udp"],
        ["-r", "in.pcap", "-w", "out.pcap", "host", "10.0.0.1"],
        ["-r", "in.pcap", "--json"],
        ["-r", "in.pcap", "--http"],
        ["-r", "in.pcap", "--http", "--json", "port", "8080"],
        ["-r", "in.pcap", "--http", "-w", "copy.pcap"],
        ["-r", "in.pcap", "--stats"],
        ["--stats", "--json", "-r", "in.pcap"],
    ])
    func quickFormsEqualWhatTheParserBuilds(_ arguments: [String]) throws {
        let quick = try #require(QuickArguments.command(arguments), "\(arguments) should take the quick path")
        let parsed = try #require(try CaptureCommand.parseAsRoot(arguments) as? CaptureCommand)
        let quickLines = described(quick), parsedLines = described(parsed)
        let firstDifference = zip(quickLines, parsedLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? (quickLines.count == parsedLines.count ? nil : min(quickLines.count, parsedLines.count))
        #expect(firstDifference == nil, """
            first difference at line \(firstDifference ?? 0):
            quick:  \(quickLines.dropFirst(firstDifference ?? 0).prefix(3).joined(separator: " / "))
            parser: \(parsedLines.dropFirst(firstDifference ?? 0).prefix(3).joined(separator: " / "))
            """)
    }

    /// Everything else goes to the parser: other flags, repeats, values that look like options, no -r, and commands
    /// that fail validation (so the parser prints its usage message).
    @Test(arguments: [
        [], ["-i", "eth0"], ["-r"], ["-r", "-"], ["-r", "a.pcap", "-r", "b.pcap"], ["-r", "a.pcap", "-n", "-n"],
        ["-r", "a.pcap", "-v"], ["-r", "a.pcap", "-c", "5"], ["-r", "a.pcap", "--help"], ["-r", "a.pcap", "--version"],
        ["-r", "a.pcap", "-q", "--json"], ["-r", "a.pcap", "-w", "-", "--http"], ["-r", "a.pcap", "-w", "o.pcap", "--json"],
        ["-r", "a.pcap", "--", "curl"], ["-nr", "a.pcap"],
    ])
    func otherFormsGoToTheParser(_ arguments: [String]) {
        #expect(QuickArguments.command(arguments) == nil)
    }
}
