import ArgumentParser
import Reports

/// `--time-stamp-precision`: tcpdump's two values.
enum TimestampPrecision: String, ExpressibleByArgument, CaseIterable {
    case micro, nano
}

/// tcpdump's flags for packet lines: timestamps, dumps, link header, sequence numbers, numbering.
/// Each means exactly what it means to tcpdump; `validate()` refuses them where they would do nothing.
struct PacketLineOptions: ParsableArguments {
    @Flag(name: .customShort("t"),
          help: "Timestamps as tcpdump: -t none, -tt seconds since 1970, -ttt since the previous packet, -tttt date and time, -ttttt since the first packet.")
    var timestampFlags: Int

    @Option(name: .customLong("time-stamp-precision"),
            help: ArgumentHelp("Timestamp fraction digits: micro (6, default) or nano (9).", valueName: "micro|nano"))
    var timestampPrecision: TimestampPrecision?

    @Flag(name: .customShort("x"), help: "Print each packet in hex after its line (-xx: including the link header).")
    var hexFlags: Int

    @Flag(name: .customShort("X"), help: "Print each packet in hex and ASCII after its line (-XX: including the link header).")
    var hexAndASCIIFlags: Int

    @Flag(name: .customShort("A"), help: "Print each packet in ASCII after its line (-AA: including the link header).")
    var asciiFlags: Int

    @Flag(name: .customShort("e"), help: "Print the link-level header on each line.")
    var linkHeader = false

    @Flag(name: .customShort("S"), help: "Print absolute TCP sequence numbers, not relative ones.")
    var absoluteSequenceNumbers = false

    @Flag(name: [.customShort("#"), .customLong("number")], help: "Print the packet's number at the start of each line.")
    var numbered = false

    /// The first flag given, for messages that refuse them.
    var firstGiven: String? { firstGiven(besidesPrecision: false) }

    /// `--time-stamp-precision` also chooses -w's timestamps (as tcpdump's does), so -w refuses only the others.
    func firstGiven(besidesPrecision: Bool) -> String? {
        if timestampFlags > 0 { return "-" + String(repeating: "t", count: timestampFlags) }
        if timestampPrecision != nil && !besidesPrecision { return "--time-stamp-precision" }
        if hexFlags > 0 { return "-" + String(repeating: "x", count: hexFlags) }
        if hexAndASCIIFlags > 0 { return "-" + String(repeating: "X", count: hexAndASCIIFlags) }
        if asciiFlags > 0 { return "-" + String(repeating: "A", count: asciiFlags) }
        if linkHeader { return "-e" }
        if absoluteSequenceNumbers { return "-S" }
        if numbered { return "-#" }
        return nil
    }

    func validate() throws {
        if timestampFlags > 5 { throw ValidationError("-t can be given at most five times (-ttttt).") }
        for (count, flag) in [(hexFlags, "x"), (hexAndASCIIFlags, "X"), (asciiFlags, "A")] where count > 2 {
            throw ValidationError("-\(flag) can be given at most twice (-\(flag)\(flag)).")
        }
    }

    /// Renderer options; tcpdump's precedence when several dumps are asked for: -X, then -x, then -A.
    func apply(to options: inout PacketLineRenderer.Options) {
        options.timestamps = PacketLineRenderer.TimestampStyle(tFlagCount: timestampFlags)
        options.nanosecondTimestamps = timestampPrecision == .nano
        if hexAndASCIIFlags > 0 {
            options.dump = .hexAndASCII(includingLinkHeader: hexAndASCIIFlags > 1)
        } else if hexFlags > 0 {
            options.dump = .hex(includingLinkHeader: hexFlags > 1)
        } else if asciiFlags > 0 {
            options.dump = .ascii(includingLinkHeader: asciiFlags > 1)
        }
        options.linkHeader = linkHeader
        options.absoluteSequenceNumbers = absoluteSequenceNumbers
        options.numbered = numbered
    }
}
