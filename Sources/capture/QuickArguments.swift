import ArgumentParser

/// The everyday offline forms (`capture -r FILE`, with `-n`, `-q`, `-w FILE`, `--json`, `--http`, `--stats` and
/// filter words), parsed without swift-argument-parser. Building its command tree costs about 3.5 ms per start
/// (reflection over some 60 options, and the Swift runtime's first conformance lookups it triggers): a third of
/// `capture -r small.pcap`. Anything else, a repeated flag, an unknown one, a value that starts with '-', returns
/// nil and goes through the full parser, as does any command that fails validation (so usage errors read the same).
///
/// The command built here must equal what the parser builds for the same words: `QuickArgumentsTests` compares
/// the two field by field, so an option added to the command without a default here fails that test.
enum QuickArguments {
    static func command(_ arguments: [String]) -> CaptureCommand? {
        var readFile: String?, writeFile: String?
        var numeric = false, quiet = false, json = false, http = false, stats = false
        var filterWords: [String] = []
        var index = 0
        func value() -> String? {
            index += 1
            guard index < arguments.count, let first = arguments[index].first, first != "-" else { return nil }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-r": guard readFile == nil, let file = value() else { return nil }; readFile = file
            case "-w": guard writeFile == nil, let file = value() else { return nil }; writeFile = file
            case "-n": guard !numeric else { return nil }; numeric = true
            case "-q": guard !quiet else { return nil }; quiet = true
            case "--json": guard !json else { return nil }; json = true
            case "--http": guard !http else { return nil }; http = true
            case "--stats": guard !stats else { return nil }; stats = true
            default:
                guard let first = argument.first, first != "-" else { return nil }
                filterWords.append(argument)
            }
            index += 1
        }
        guard readFile != nil else { return nil }

        var source = SourceOptions()
        source.interface = nil
        source.readFile = readFile
        source.count = nil
        source.snapLength = nil
        source.bufferKiB = nil
        source.netns = nil
        source.pid = nil
        source.filterWords = filterWords

        var output = OutputOptions()
        output.writeFile = writeFile
        output.quiet = quiet
        output.json = json
        output.http = http
        output.utc = false
        output.lineBuffered = false
        output.numeric = numeric

        var lines = PacketLineOptions()
        lines.timestampFlags = 0
        lines.timestampPrecision = nil
        lines.hexFlags = 0
        lines.hexAndASCIIFlags = 0
        lines.asciiFlags = 0
        lines.linkHeader = false
        lines.absoluteSequenceNumbers = false
        lines.numbered = false

        var control = CaptureControlOptions()
        control.noPromiscuous = false
        control.direction = nil
        control.packetBuffered = false
        control.filterFile = nil
        control.dataLinkType = nil
        control.listDataLinkTypes = false
        control.immediateMode = false
        control.timestampType = nil
        control.listTimestampTypes = false
        control.fileSizeMegabytes = nil
        control.rotateSeconds = nil
        control.fileCount = nil
        control.user = nil
        control.readyFile = nil

        var httpOptions = HTTPOptions()
        httpOptions.verbosity = 0
        httpOptions.bodyLimitOption = nil
        httpOptions.harFile = nil
        httpOptions.hosts = []
        httpOptions.paths = []
        httpOptions.methods = []
        httpOptions.statuses = []
        httpOptions.colorOption = nil
        httpOptions.threadsOption = nil

        var statsOptions = StatsOptions()
        statsOptions.stats = stats
        statsOptions.follow = nil
        statsOptions.followFormat = nil

        var tls = TLSOptions()
        tls.keyLogFile = nil
        tls.keyWaitSeconds = 2

        var commandOptions = CommandOptions()
        commandOptions.profile = nil
        commandOptions.profilesDirectory = nil
        commandOptions.noQUIC = false
        commandOptions.command = []

        var liveView = LiveViewOptions()
        liveView.ui = nil

        var command = CaptureCommand()
        command.source = source
        command.output = output
        command.lineOptions = lines
        command.control = control
        command.httpOptions = httpOptions
        command.statsOptions = statsOptions
        command.tlsOptions = tls
        command.commandOptions = commandOptions
        command.liveViewOptions = liveView
        command.listInterfaces = false
        // As the parser does: each group's own checks, then the command's.
        do {
            try command.lineOptions.validate()
            try command.validate()
        } catch {
            return nil
        }
        return command
    }
}
