import ArgumentParser
import Reports

extension ColorChoice: ExpressibleByArgument {}

/// Options of the `--http` view (see docs/http.md).
struct HTTPOptions: ParsableArguments {
    @Flag(name: [.customShort("v"), .customLong("verbose")],
          help: "With --http: also print headers and decoded bodies (JSON pretty-printed, binary summarised).")
    var verbose = false

    @Option(name: .customLong("body-limit"),
            help: ArgumentHelp("With --http -v: decoded body bytes shown per message (default 4096).", valueName: "bytes"))
    var bodyLimit: Int = 4096

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
    var color: ColorChoice = .auto

    /// Whether any option that only makes sense with `--http` was given.
    var usedWithoutHTTP: String? {
        if verbose { return "-v" }
        if harFile != nil { return "--har" }
        if !hosts.isEmpty { return "--host" }
        if !paths.isEmpty { return "--path" }
        if !methods.isEmpty { return "--method" }
        if !statuses.isEmpty { return "--status" }
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
        if !http, let option = usedWithoutHTTP {
            throw ValidationError("\(option) only applies to the HTTP view: add --http.")
        }
        if bodyLimit < 0 { throw ValidationError("--body-limit needs a byte count of 0 or more.") }
        _ = try makeFilter()
    }
}
