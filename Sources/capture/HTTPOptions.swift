import ArgumentParser
import CaptureEngine
import Foundation
import PacketCapture
import Reports

extension ColorChoice: ExpressibleByArgument {}

/// Options of the `--http` view (see docs/http.md).
struct HTTPOptions: ParsableArguments {
    @Flag(name: [.customShort("v"), .customLong("verbose")],
          help: "With --http: also print headers and decoded bodies (JSON pretty-printed, binary summarised). On packet lines, as tcpdump: -v IP header fields, checksums, HTTP header lines; -vv and -vvv more.")
    var verbosity: Int
    var verbose: Bool { verbosity > 0 }

    @Option(name: .customLong("body-limit"),
            help: ArgumentHelp("With --http -v: decoded body bytes shown per message (default 4096).", valueName: "bytes"))
    var bodyLimitOption: Int?
    var bodyLimit: Int { bodyLimitOption ?? 4096 }

    @Option(name: .customLong("har"),
            help: ArgumentHelp("With --http: also write the exchanges to this HTTP Archive (HAR 1.2) file.", valueName: "file"))
    var harFile: String?

    @Option(name: .customLong("host"),
            help: ArgumentHelp("With --http: only exchanges whose Host (or server address) matches this glob; repeat or comma-separate for several.",
                               valueName: "glob"))
    var hosts: [String] = []

    @Option(name: .customLong("path"),
            help: ArgumentHelp("With --http: only requests whose path (without query) matches this glob, e.g. '/api/*'.",
                               valueName: "glob"))
    var paths: [String] = []

    @Option(name: .customLong("method"),
            help: ArgumentHelp("With --http: only these request methods (GET,POST).", valueName: "method"))
    var methods: [String] = []

    @Option(name: .customLong("status"),
            help: ArgumentHelp("With --http: only responses with this status: 404, 4xx or 200-299; comma-separate for several.",
                               valueName: "status"))
    var statuses: [String] = []

    @Option(name: .customLong("color"),
            help: ArgumentHelp("Colour the --http view: auto (on a terminal, unless NO_COLOR is set), always or never.",
                               valueName: "when"))
    var colorOption: ColorChoice?
    var color: ColorChoice { colorOption ?? .auto }

    @Option(name: .customLong("threads"),
            help: ArgumentHelp("With --http: 1 decodes everything on one thread; 2 (the default with two or more CPUs) reassembles on one and decodes HTTP, bodies and output on another. The output is the same.",
                               valueName: "1|2"))
    var threadsOption: Int?

    /// `--threads`, or 2 when this process may run on two CPUs or more.
    var threads: Int { threadsOption ?? (ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 : 1) }

    /// How the second thread gets its work, nil for one thread. For tests and measurements (docs/threads.md):
    /// `TAPKIT_PIPELINE_EVERY_PACKET=1` hands over after every packet (batch boundaries everywhere);
    /// `TAPKIT_PIPELINE_SHARE=every-other|none` fixes which connections the reading thread decodes itself.
    func pipelinePolicy(handle: CaptureHandle, readFile: String?, output: OutputOptions) -> StreamPipelinePolicy? {
        guard threads >= 2 else { return nil }
        var policy = StreamPipelinePolicy()
        // A pipe may pause between packets without our knowing: pass each packet's work on at once.
        let regularFile = readFile.map { path in
            var status = stat()
            return path != "-" && stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
        } ?? false
        if !handle.isLive && !regularFile { policy.everyPacket = true }
        let environment = ProcessInfo.processInfo.environment
        if environment["TAPKIT_PIPELINE_EVERY_PACKET"] == "1" { policy.everyPacket = true }
        if let depth = environment["TAPKIT_PIPELINE_DEPTH"].flatMap(Int.init), depth > 0 { policy.queueDepth = depth }
        if let behind = environment["TAPKIT_PIPELINE_BEHIND"].flatMap(Int.init), behind > 0 { policy.behindBatches = behind }
        switch environment["TAPKIT_PIPELINE_SHARE"] {
        case "every-other": policy.share = .everyOther
        case "none": policy.share = .none
        default: break
        }
        return policy
    }

    /// Whether any option that only makes sense with `--http` was given.
    var usedWithoutHTTP: String? {
        if harFile != nil { return "--har" }
        if !hosts.isEmpty { return "--host" }
        if !paths.isEmpty { return "--path" }
        if !methods.isEmpty { return "--method" }
        if !statuses.isEmpty { return "--status" }
        if bodyLimitOption != nil { return "--body-limit" }
        if threadsOption != nil { return "--threads" }
        if colorOption != nil { return "--color" }
        return nil
    }

    func makeFilter() throws -> ExchangeFilter {
        var filter = ExchangeFilter()
        func split(_ values: [String]) -> [String] {
            values.flatMap { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
                .filter { !$0.isEmpty }
        }
        filter.hosts = split(hosts)
        filter.paths = split(paths)
        filter.methods = split(methods)
        for value in statuses {
            do { filter.statuses += try ExchangeFilter.statusPatterns(value) } catch { throw ValidationError(error.description) }
        }
        return filter
    }

    /// Checks made by the command's `validate()`.
    func validate(http: Bool) throws {
        if verbosity > 3 { throw ValidationError("-v can be given at most three times (-vvv).") }
        if !http, let option = usedWithoutHTTP {
            throw ValidationError("\(option) only applies to the HTTP view: add --http.")
        }
        if bodyLimit < 0 { throw ValidationError("--body-limit needs a byte count of 0 or more.") }
        if let threads = threadsOption, !(1...2).contains(threads) {
            throw ValidationError("--threads \(threads): give 1 (one thread) or 2 (reassembly on one, HTTP decoding on the other).")
        }
        for value in statuses.flatMap({ $0.split(separator: ",") }) {
            // HTTP status codes are three digits from 100 to 599 (RFC 9110 section 15); 999 can never match.
            let numbers = value.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            if numbers.contains(where: { !(100...599).contains($0) }) {
                throw ValidationError("--status \(value): HTTP status codes run from 100 to 599.")
            }
            if let first = value.trimmingCharacters(in: .whitespaces).first, value.lowercased().hasSuffix("xx"),
               !("1"..."5").contains(first) {
                throw ValidationError("--status \(value): status classes run from 1xx to 5xx.")
            }
        }
        _ = try makeFilter()
    }
}
