import ArgumentParser
import Reports

extension FollowFormat: ExpressibleByArgument {}

/// `--stats` and `--follow` (see docs/stats.md).
struct StatsOptions: ParsableArguments {
    @Flag(help: "Summarise the capture instead of printing packets: protocol hierarchy, TCP/UDP conversations (numbered for --follow), endpoints, and HTTP per host, method and status with latency percentiles. With -i, printed when the capture ends. With --json, one JSON object.")
    var stats = false

    @Option(help: ArgumentHelp("Print the reassembled bytes of one TCP connection, both directions, as tshark -z follow,tcp does: an index from --stats, or ip:port-ip:port (IPv6 in brackets).",
                               valueName: "connection"))
    var follow: String?

    @Option(name: .customLong("follow-format"),
            help: ArgumentHelp("With --follow: ascii (default), hex or raw (hex digits per chunk), as tshark names them.",
                               valueName: "format"))
    var followFormat: FollowFormat?

    func validate(output: OutputOptions, lineFlag: String?) throws {
        if followFormat != nil && follow == nil {
            throw ValidationError("--follow-format says how --follow prints a connection; give --follow too.")
        }
        if let follow { _ = try parsedFollowTarget(follow) }
        guard stats || follow != nil else { return }
        let mode = stats ? "--stats" : "--follow"
        if stats && follow != nil { throw ValidationError("Give either --stats or --follow, not both: run --stats first to find the index.") }
        if output.http { throw ValidationError("\(mode) replaces the packet view; --http is another view. Give one of them.") }
        if output.writeFile != nil { throw ValidationError("-w saves packets instead of printing them, so \(mode) would print nothing; leave -w out.") }
        if let flag = output.quiet ? "-q" : lineFlag {
            throw ValidationError("\(flag) changes packet lines; \(mode) prints no packet lines, so it does nothing there.")
        }
        if follow != nil && output.json { throw ValidationError("--follow prints a connection's bytes as text; --json is for --stats and packets.") }
    }

    func parsedFollowTarget(_ text: String) throws -> FollowTarget {
        do { return try FollowTarget(parsing: text) } catch { throw ValidationError(error.description) }
    }
}
