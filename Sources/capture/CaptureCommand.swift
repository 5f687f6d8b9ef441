import ArgumentParser
import CaptureEngine
import Foundation
import LiveView
import PacketCapture
import PacketDecoding
import Reports
import Sandbox
import SystemSupport
import TLS

/// Where packets come from: `-i`, `-r`, and how many and how much of each to take.
struct SourceOptions: ParsableArguments {
    @Option(name: .customShort("i"), help: ArgumentHelp("Capture live on this interface ('any' for all; see -D).",
                                                        valueName: "interface"))
    var interface: String?

    @Option(name: .customShort("r"), help: ArgumentHelp("Read packets from a pcap or pcapng file ('-' reads standard input).",
                                                        valueName: "file"))
    var readFile: String?

    // Unconditional (as getopt takes the next word), so `-c -1` is called a bad count, not a missing value.
    @Option(name: .customShort("c"), parsing: .unconditional, help: ArgumentHelp("Stop after this many packets.", valueName: "count"))
    var count: Int?

    @Option(name: .customShort("s"), help: ArgumentHelp("Snap length: bytes kept per live packet (0 means 262144).",
                                                        valueName: "snaplen"))
    var snapLength: Int?

    @Option(name: .customShort("B"), help: ArgumentHelp("Kernel capture buffer size in KiB (live capture).",
                                                        valueName: "KiB"))
    var bufferKiB: Int?

    @Option(name: .customLong("netns"), help: ArgumentHelp(
        "Capture live inside this network namespace: a name from `ip netns list` or a path to a namespace file "
            + "(/proc/PID/ns/net, a bind mount). -i names an interface there; without -i, every interface there "
            + "('any', loopback included). Ends when the name is removed.",
        valueName: "name|path"))
    var netns: String?

    @Option(name: .customLong("pid"), help: ArgumentHelp(
        "Capture live inside the network namespace of this process (a server's, a container's: "
            + "/proc/PID/ns/net), as --netns does; ends when the process exits.",
        valueName: "pid"))
    var pid: Int32?

    @Argument(help: ArgumentHelp("BPF filter expression in tcpdump syntax, e.g. 'tcp port 80'.", valueName: "filter"))
    var filterWords: [String] = []

    var filter: String? { filterWords.isEmpty ? nil : filterWords.joined(separator: " ") }

    /// `--netns` or `--pid` as given, before anything is opened.
    var namespaceFlag: String? { netns != nil ? "--netns" : pid != nil ? "--pid" : nil }
}

/// How packets are shown or saved.
struct OutputOptions: ParsableArguments {
    @Option(name: .customShort("w"), help: ArgumentHelp("Write the raw packets to this pcap file ('-' for standard output) instead of printing them.",
                                                        valueName: "file"))
    var writeFile: String?

    @Flag(name: .customShort("q"), help: "Quick output: shorter lines, e.g. 'tcp 269'.")
    var quiet = false

    @Flag(help: "Write one JSON object per packet (NDJSON) instead of text lines.")
    var json = false

    @Flag(help: "Show paired HTTP/1.x requests and responses instead of packets.")
    var http = false

    @Flag(help: "Print timestamps in UTC instead of local time.")
    var utc = false

    @Flag(name: .customShort("l"), help: "Line-buffered output: write each line at once, even into a pipe (e.g. capture -i any -l | grep ...).")
    var lineBuffered = false

    @Flag(name: .customShort("n"), help: "Accepted for tcpdump habits: addresses and ports are always shown as numbers.")
    var numeric = false
}

@main
struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Capture and decode network packets, like tcpdump -n.",
        discussion: """
            Examples:
              capture -r app.pcap                  read a capture file
              capture -i any -c 20 tcp port 80     20 live packets to or from port 80
              capture -i eth0 -w out.pcap          save packets for later
              capture -r app.pcap --json           one JSON object per packet
              capture -D                           list interfaces
              sudo capture --http -- curl -s URL   one command's traffic, from a sandbox of its own

            Live capture needs root or: sudo setcap cap_net_raw,cap_net_admin=eip <path to capture>
            Exit status: 0 ok; 1 error (unreadable or broken capture, no permission); 2 bad filter; 64 bad usage.
            """,
        version: "capture (TapKit) \(TapKitVersion.current)\n\(CaptureHandle.libraryVersion)")

    @OptionGroup var source: SourceOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup(title: "Packet lines (tcpdump's flags)") var lineOptions: PacketLineOptions
    @OptionGroup(title: "Capture control (tcpdump's flags)") var control: CaptureControlOptions
    @OptionGroup(title: "HTTP view (--http)") var httpOptions: HTTPOptions
    @OptionGroup(title: "Summaries and one connection (--stats, --follow)") var statsOptions: StatsOptions
    @OptionGroup(title: "TLS decryption") var tlsOptions: TLSOptions
    @OptionGroup(title: "One command's traffic (-- COMMAND)") var commandOptions: CommandOptions
    @OptionGroup(title: "Live view in the browser (--ui)") var liveViewOptions: LiveViewOptions

    @Flag(name: [.customShort("D"), .customLong("list-interfaces")],
          help: "List the interfaces capture can use, with index, state and addresses, then exit.")
    var listInterfaces = false

    /// tcpdump users write `-c10` and `-ieth0`; ArgumentParser wants `-c 10`. Split those before parsing.
    /// The everyday `-r FILE` forms skip the parser (QuickArguments), for start-up time.
    static func main() {
        // The detached watchdog of a sandbox this executable made (`-- COMMAND`), started as Sandbox starts it.
        if SandboxWatchdog.runIfAsked(Array(CommandLine.arguments.dropFirst())) { return }
        let arguments = CommandArguments.split(Array(CommandLine.arguments.dropFirst()), normalizing: normalizedArguments)
        guard let command = QuickArguments.command(arguments) else { return main(arguments) }
        do { try command.run() } catch { exit(withError: error) }
    }

    static func normalizedArguments(_ arguments: [String]) -> [String] {
        var result: [String] = []
        let arguments = LiveViewOptions.normalize(arguments)
        for argument in arguments {
            let characters = Array(argument)
            if characters.count > 2, characters[0] == "-", "irwcsBCGWZyQFj".contains(characters[1]) {
                result.append(String(characters[0...1]))
                result.append(String(characters[2...]))
            } else {
                result.append(argument)
            }
        }
        return result
    }

    func validate() throws {
        if listInterfaces {
            if let flag = source.namespaceFlag {
                throw ValidationError("-D lists this namespace's interfaces and the other namespaces; \(flag) does not change "
                                      + "it. To see the interfaces inside a namespace: ip -n NAME link, or "
                                      + "nsenter --net=/proc/PID/ns/net ip link.")
            }
            return
        }
        try validateNamespace()
        try commandOptions.validate(source: source, liveView: liveViewOptions.ui != nil)
        if source.interface != nil && source.readFile != nil {
            throw ValidationError("Give either -i (live) or -r (file), not both.")
        }
        if source.interface == nil && source.readFile == nil && commandOptions.command.isEmpty && source.namespaceFlag == nil {
            throw ValidationError("Say where packets come from: -i INTERFACE for live capture, -r FILE to read a capture, "
                                  + "or --netns NAME / --pid PID to capture inside another network namespace.")
        }
        try control.validate(live: source.readFile == nil, writeFile: output.writeFile, http: output.http,
                             filterGiven: source.filter != nil)
        if let count = source.count, count <= 0 { throw ValidationError("-c needs a positive packet count.") }
        if let snap = source.snapLength, snap < 0 { throw ValidationError("-s needs a snap length of 0 or more.") }
        if let kib = source.bufferKiB, kib <= 0 || kib > Int(Int32.max) / 1024 {
            // libpcap takes the size as a C int; tcpdump refuses larger values the same way.
            throw ValidationError("invalid packet buffer size \(kib) KiB for -B: give 1 to \(Int(Int32.max) / 1024).")
        }
        // The ring is kernel memory that cannot be swapped out; libpcap quietly shrinks a ring the kernel cannot
        // allocate, so a size beyond what the machine has free is refused rather than silently reduced.
        if let kib = source.bufferKiB, source.readFile == nil, let available = MemoryInfo.availableBytes(),
           kib * 1024 > available {
            throw ValidationError("-B \(kib) KiB is more than the \(available / 1024) KiB of memory this machine has "
                                  + "available (MemAvailable in /proc/meminfo); the kernel cannot give the capture ring "
                                  + "that much. Give a smaller -B.")
        }
        let verboseFlag = httpOptions.verbose && !output.http ? "-" + String(repeating: "v", count: httpOptions.verbosity) : nil
        if output.json, let flag = output.quiet ? "-q" : lineOptions.firstGiven ?? verboseFlag {
            throw ValidationError("\(flag) changes packet lines; --json writes packets as JSON objects, so it does nothing there.")
        }
        if output.http, let flag = output.quiet ? "-q" : lineOptions.firstGiven {
            throw ValidationError("\(flag) changes packet lines; --http shows exchanges, not packets, so it does nothing there.")
        }
        if output.http && output.writeFile == "-" {
            throw ValidationError("-w - would mix packets into the --http view on standard output; give -w a file name.")
        }
        // -Z is carried out where the packet loop starts, once its files are open; the other modes open theirs as
        // they go, and -- COMMAND needs root to remove its sandbox, so there it is refused rather than ignored.
        if control.user != nil, let mode = output.http ? "--http" : statsOptions.stats ? "--stats"
            : statsOptions.follow != nil ? "--follow" : commandOptions.command.isEmpty ? nil : "-- COMMAND" {
            throw ValidationError("-Z drops root once a packet capture and its -w file are open; \(mode) does not support it. "
                                  + "Leave -Z out, or give capture the capture rights instead (setcap, see the README).")
        }
        try liveViewOptions.validate(statsOrFollow: statsOptions.stats ? "--stats" : statsOptions.follow != nil ? "--follow" : nil)
        try httpOptions.validate(http: output.http)
        try statsOptions.validate(output: output, lineFlag: lineOptions.firstGiven)
        if tlsOptions.keyLogFile != nil && !output.http && !statsOptions.stats && !(output.writeFile?.hasSuffix(".pcapng") ?? false) {
            throw ValidationError("--keylog decrypts TLS for the HTTP view (--http) and --stats, or embeds its secrets in -w FILE.pcapng.")
        }
        if output.writeFile != nil && !output.http,
           let flag = output.json ? "--json" : lineOptions.firstGiven(besidesPrecision: true) ?? verboseFlag {
            throw ValidationError("-w writes packets to a file instead of printing them, so \(flag) would do nothing; leave it out.")
        }
    }

    func run() throws {
        if listInterfaces {
            try printInterfaces()
            return
        }
        if control.listDataLinkTypes || control.listTimestampTypes {
            try printInterfaceCapabilities()
            return
        }
        do {
            if commandOptions.command.isEmpty { try capture() } else { try captureCommand() }
        } catch let error as NetworkNamespaceError {
            printError(error.description)
            throw ExitCode(1)
        } catch let error as NamespaceCaptureError {
            printError(error.description)
            throw ExitCode(1)
        } catch let error as CaptureError {
            printError(error.description)
            if case .badFilter = error { throw ExitCode(2) }
            throw ExitCode(1)
        } catch let error as PacketDecoder.UnsupportedLinkType {
            // libpcap's own name and description (PPP_SERIAL, "PPP over serial"), as tcpdump would print them.
            let value = error.linkType.rawValue
            let name = CaptureHandle.linkTypeName(value) ?? error.linkType.name
            let description = CaptureHandle.linkTypeDescription(value).map { "\($0), " } ?? ""
            printError("unsupported link type \(name) (\(description)DLT \(value)); capture can print EN10MB, LINUX_SLL, "
                       + "LINUX_SLL2, RAW, IPV4, IPV6, NULL, LOOP, NFLOG, PPP and C_HDLC captures; -w still saves any link type unchanged.")
            throw ExitCode(1)
        }
    }

    /// `command`, when given, names the sandbox interface to capture on and starts its command once the handle
    /// is live; it then owns the signals (forwarded to the command) and stops the capture when the command ends.
    func capture(command: CommandCapture? = nil, liveView commandView: LiveView? = nil) throws {
        let namespace = try openNamespace()
        let handle: CaptureHandle
        if let path = source.readFile {
            handle = try CaptureHandle.openOffline(path)
        } else {
            handle = try openLive(command?.interface ?? source.interface ?? "any", in: namespace)
        }
        // --pid and --netns: the capture ends when its process exits or its name is removed (NamespaceCapture.swift).
        let watch = try namespace.map { namespace in
            try NetworkNamespaceWatch(namespace) { _ in handle.stop() }
        }
        defer { watch?.cancel() }
        if lineOptions.timestampPrecision == .nano { handle.savesNanoseconds = true }
        if let filter = try source.filter ?? control.filterFromFile() { try handle.setFilter(filter) }
        // Writing copies frames unchanged, so any link type can be saved; printing needs a decoder.
        let decoder = output.writeFile == nil ? try PacketDecoder(linkType: handle.linkType) : nil
        announce(handle, namespace: namespace?.target)
        // -- COMMAND brings its own view (its panel switches the sandbox); -i and -r get theirs here.
        let liveView = try commandView ?? (liveViewOptions.ui == nil ? nil : startLiveView(
            source: source.readFile.map { .file(path: $0) } ?? .live(interface: handle.source),
            conditioner: source.readFile != nil
                ? ConditionerPanel(unavailable: "reading a capture file: there is no link to condition "
                                   + "(the panel works with -i INTERFACE or -- COMMAND)")
                : namespace.map(Self.namespacePanel) ?? interfacePanel(handle.source)))
        if let ready = control.readyFile, !FileManager.default.createFile(atPath: ready, contents: nil) {
            printError("cannot create \(ready) (--ready-file): \(String(cString: strerror(errno)))")
        }

        // -w FILE.pcapng: pcapng in every mode, with the key log (a command's own included) in Decryption Secrets
        // Blocks as keys become known, so Wireshark, tshark and `capture -r` open it decrypted, even mid-capture.
        let secrets = output.writeFile?.hasSuffix(".pcapng") == true
            ? try tlsOptions.secretsToEmbed(live: handle.isLive, readFile: source.readFile, reporting: !output.http)
            : nil
        try command?.start(stopping: handle)
        let session = command == nil ? SignalSession(handle: handle) : nil
        defer { session?.finish() }
        do {
            try captureInMode(handle: handle, decoder: decoder, command: command, secrets: secrets, liveView: liveView)
        } catch {
            if commandView == nil, let liveView {
                if let error = error as? CaptureError, source.readFile != nil, session?.interrupted != true {
                    // A file broken part-way: the terminal showed what was read before the damage, and the view keeps
                    // it up for browsing too. The error is said first; the exit status stays the error's.
                    printError(error.description)
                    session?.finish()
                    serveUntilStopped(liveView)
                    throw ExitCode(1)
                }
                stopLiveView(liveView)
            }
            throw error
        }
        // A file read to its end stays up for browsing; a live capture, or a file whose reading was interrupted,
        // ended with Ctrl-C; a command's view is its caller's.
        session?.finish()
        if commandView == nil, let liveView {
            if source.readFile != nil && session?.interrupted != true { serveUntilStopped(liveView) } else { stopLiveView(liveView) }
        }
        if let departure = watch?.departure { printError(Self.words(for: departure)) }
        // A key can become known after packets that needed it (it is read every 50 ms at most): at the end, one
        // block with every key goes first, for readers that decrypt in one pass. Rotated files keep theirs as written.
        if let path = output.writeFile, let secrets, !control.rotates {
            do {
                let keyLog = secrets.finalText()
                if !keyLog.isEmpty { try PcapngSecrets.gatherAtFront(path: path, keyLog: keyLog) }
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }
    }

    /// Reads packets into what the options ask for: --stats, --follow, --http, or packet lines.
    private func captureInMode(handle: CaptureHandle, decoder: PacketDecoder?, command: CommandCapture?,
                               secrets: SecretsToEmbed?, liveView: LiveView?) throws {
        if statsOptions.stats {
            let keys = try tlsOptions.openKeySource(live: handle.isLive, readFile: source.readFile)
            try runStatsMode(handle: handle, source: source, json: output.json, keys: keys, holding: tlsOptions.holding())
            return
        }
        if let follow = statsOptions.follow {
            try runFollowMode(handle: handle, source: source, target: try statsOptions.parsedFollowTarget(follow),
                              format: statsOptions.followFormat ?? .ascii)
            return
        }
        if output.http {
            let keys = try tlsOptions.openKeySource(live: handle.isLive, readFile: source.readFile)
            try runHTTPMode(handle: handle, source: source, output: output, http: httpOptions, keys: keys,
                            holding: tlsOptions.holding(), secrets: secrets, liveView: liveView)
            return
        }
        var consumer = try PacketConsumer(handle: handle, decoder: decoder, output: output, lineOptions: lineOptions,
                                          verbosity: httpOptions.verbosity, control: control, secrets: secrets)
        if command == nil { try control.dropPrivilegesIfAsked() }
        do {
            defer { consumer.finish() }
            var progress = ProgressReporter(handle: handle)
            try PacketReading.run(handle, limit: source.count, progress: &progress,
                                  ended: { printLiveStatistics(handle: handle, ended: $0) }) { try consumer.consume($0) }
        }
    }

    /// The kernel buffer of a live capture when -B is not given (see `openLive`).
    static let defaultBufferSize = 32 << 20

    private func openLive(_ name: String, in namespace: NetworkNamespaceFile?) throws -> CaptureHandle {
        var options = LiveOptions()
        if let snap = source.snapLength, snap > 0 { options.snapshotLength = snap }
        if let kib = source.bufferKiB { options.bufferSize = kib * 1024 }
        // Deliver packets as they come when a person is watching; batch them when writing to a file or pipe.
        options.immediate = (isatty(STDOUT_FILENO) == 1 || output.lineBuffered) && output.writeFile == nil
        control.apply(to: &options)
        // libpcap's 2 MiB default holds about 30 packets of a loopback or offloaded download (64 KiB each): in
        // immediate mode's fixed frames, and in TPACKET_V3's blocks too while the decoder is busy on one burst. The
        // kernel dropped packets tcpdump beside it kept, and a decrypted stream lost its record boundaries
        // (`-- COMMAND` and `-i lo --keylog` both lost exchanges that way; docs/threads.md has the ladder). Without
        // -B every live capture gets room for about 500 such packets.
        if options.bufferSize == nil { options.bufferSize = Self.defaultBufferSize }
        if let namespace { return try Self.openLive(name, options: options, in: namespace) }
        var interface = name
        if let position = Int(name), position > 0, let interfaces = try? NetworkInterface.all(),
           position <= interfaces.count, !interfaces.contains(where: { $0.name == name }) {
            interface = interfaces[position - 1].name
        }
        return try CaptureHandle.openLive(interface, options: options)
    }

    /// `-L` and `-J`, in tcpdump's words.
    private func printInterfaceCapabilities() throws {
        let interface = source.interface!
        let listDataLinkTypes = control.listDataLinkTypes, listTimestampTypes = control.listTimestampTypes
        do {
            // Inside another namespace the interface is looked up there (--netns, --pid).
            let namespace = try openNamespace()
            let text = try inNamespace(namespace, named: interface) { () throws -> String in
                var text = ""
                if listDataLinkTypes {
                    text += "Data link types for \(interface) (use option -y to set):\n"
                    for type in try CaptureHandle.dataLinkTypes(interface: interface) {
                        text += "  \(type.name) (\(type.description))\n"
                    }
                }
                if listTimestampTypes {
                    let types = try CaptureHandle.timestampTypes(interface: interface)
                    if types.isEmpty {
                        text += "Time stamp type cannot be set for \(interface)\n"
                    } else {
                        text += "Time stamp types for \(interface) (use option -j to set):\n"
                        for type in types { text += "  \(type.name) (\(type.description))\n" }
                    }
                }
                return text
            }
            // tcpdump writes these lists to standard error; so do we, so scripts behave the same.
            FileHandle.standardError.write(Data(text.utf8))
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }

    /// tcpdump's first line on standard error, so users know what they are looking at.
    private func announce(_ handle: CaptureHandle, namespace: NetworkNamespaceTarget?) {
        let inside = namespace.map { " inside \($0)" } ?? ""
        let what = handle.isLive ? "listening on \(handle.source)\(inside)" : "reading from file \(handle.source)"
        printError("\(what), link-type \(handle.linkType.name), snapshot length \(handle.snapshotLength)", prefixed: false)
    }

    private func printInterfaces() throws {
        let interfaces: [NetworkInterface]
        do {
            interfaces = try NetworkInterface.all()
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        var text = ""
        for (position, interface) in interfaces.enumerated() {
            text += "\(position + 1).\(interface.name)"
            if let description = interface.description { text += " (\(description))" }
            var state: [String] = []
            if interface.isUp { state.append("Up") }
            if interface.isRunning { state.append("Running") }
            if interface.isLoopback { state.append("Loopback") }
            text += " [\(state.isEmpty ? "Down" : state.joined(separator: ", "))]"
            text += " index \(interface.index)"
            if !interface.addresses.isEmpty { text += " " + interface.addresses.joined(separator: " ") }
            text += "\n"
        }
        // Other network namespaces, sandboxes and containers, apart from the numbered lines (NamespaceListing.swift).
        text += NamespaceListing.current(registry: CaptureEnvironment.registry).text
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// tcpdump's closing counts for a live capture, on standard error (nothing for a file).
func printLiveStatistics(handle: CaptureHandle, ended: ReadingEnded) {
    guard let live = ended.live else { return }
    let captured = live.captured, queueDrops = live.queueDrops
    var text = "\n\(captured) packet\(captured == 1 ? "" : "s") captured\n"
    if let stats = handle.statistics() {
        text += "\(stats.receivedByFilter) packet\(stats.receivedByFilter == 1 ? "" : "s") received by filter\n"
        text += "\(stats.droppedByKernel) packet\(stats.droppedByKernel == 1 ? "" : "s") dropped by kernel\n"
        if stats.droppedByInterface > 0 { text += "\(stats.droppedByInterface) packets dropped by interface\n" }
    }
    if queueDrops > 0 {
        text += "\(queueDrops) packet\(queueDrops == 1 ? "" : "s") dropped by output queue (output too slow)\n"
    }
    FileHandle.standardError.write(Data(text.utf8))
}

func printError(_ message: String, prefixed: Bool = true) {
    FileHandle.standardError.write(Data(((prefixed ? "capture: " : "") + message + "\n").utf8))
}
