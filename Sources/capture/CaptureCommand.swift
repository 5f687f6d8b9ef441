import ArgumentParser
import Foundation
import PacketCapture
import PacketDecoding
import Reports

/// Where packets come from: `-i`, `-r`, and how many and how much of each to take.
struct SourceOptions: ParsableArguments {
    @Option(name: .customShort("i"), help: ArgumentHelp("Capture live on this interface ('any' for all; see -D).",
                                                        valueName: "interface"))
    var interface: String?

    @Option(name: .customShort("r"), help: ArgumentHelp("Read packets from a pcap or pcapng file ('-' reads standard input).",
                                                        valueName: "file"))
    var readFile: String?

    @Option(name: .customShort("c"), help: ArgumentHelp("Stop after this many packets.", valueName: "count"))
    var count: Int?

    @Option(name: .customShort("s"), help: ArgumentHelp("Snap length: bytes kept per live packet (0 means 262144).",
                                                        valueName: "snaplen"))
    var snapLength: Int?

    @Option(name: .customShort("B"), help: ArgumentHelp("Kernel capture buffer size in KiB (live capture).",
                                                        valueName: "KiB"))
    var bufferKiB: Int?

    @Argument(help: ArgumentHelp("BPF filter expression in tcpdump syntax, e.g. 'tcp port 80'.", valueName: "filter"))
    var filterWords: [String] = []

    var filter: String? { filterWords.isEmpty ? nil : filterWords.joined(separator: " ") }
}

/// How packets are shown or saved.
struct OutputOptions: ParsableArguments {
    @Option(name: .customShort("w"), help: ArgumentHelp("Write the raw packets to this pcap file ('-' for standard output) instead of printing them.",
                                                        valueName: "file"))
    var writeFile: String?

    @Flag(name: .customShort("q"), help: "Quick output: shorter lines, e.g. 'tcp 269'.")
    var quiet = false

    @Flag(name: .customShort("t"), help: "Do not print a timestamp on each line.")
    var noTimestamp = false

    @Flag(name: .customShort("A"), help: "Print each packet (from the network header) in ASCII.")
    var ascii = false

    @Flag(name: .customShort("X"), help: "Print each packet (from the network header) in hex and ASCII.")
    var hexAndASCII = false

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

            Live capture needs root or: sudo setcap cap_net_raw,cap_net_admin=eip <path to capture>
            Exit status: 0 ok; 1 error (unreadable or broken capture, no permission); 2 bad filter; 64 bad usage.
            """)

    @OptionGroup var source: SourceOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup(title: "HTTP view (--http)") var httpOptions: HTTPOptions

    @Flag(name: [.customShort("D"), .customLong("list-interfaces")],
          help: "List the interfaces capture can use, with index, state and addresses, then exit.")
    var listInterfaces = false

    /// tcpdump users write `-c10` and `-ieth0`; ArgumentParser wants `-c 10`. Split those before parsing.
    static func main() {
        main(normalizedArguments(Array(CommandLine.arguments.dropFirst())))
    }

    static func normalizedArguments(_ arguments: [String]) -> [String] {
        var result: [String] = []
        for argument in arguments {
            let characters = Array(argument)
            if characters.count > 2, characters[0] == "-", "irwcsB".contains(characters[1]) {
                result.append(String(characters[0...1]))
                result.append(String(characters[2...]))
            } else {
                result.append(argument)
            }
        }
        return result
    }

    func validate() throws {
        if listInterfaces { return }
        if source.interface != nil && source.readFile != nil {
            throw ValidationError("Give either -i (live) or -r (file), not both.")
        }
        if source.interface == nil && source.readFile == nil {
            throw ValidationError("Say where packets come from: -i INTERFACE for live capture, or -r FILE to read a capture.")
        }
        if let count = source.count, count <= 0 { throw ValidationError("-c needs a positive packet count.") }
        if let snap = source.snapLength, snap < 0 { throw ValidationError("-s needs a snap length of 0 or more.") }
        if let kib = source.bufferKiB, kib <= 0 { throw ValidationError("-B needs a positive buffer size in KiB.") }
        if output.json && (output.quiet || output.ascii || output.hexAndASCII) {
            throw ValidationError("--json cannot be combined with -q, -A or -X.")
        }
        if output.http && output.writeFile != nil {
            throw ValidationError("--http cannot be combined with -w.")
        }
        try httpOptions.validate(http: output.http)
        if output.writeFile != nil && (output.json || output.ascii || output.hexAndASCII) {
            throw ValidationError("-w writes packets to a file; it cannot be combined with --json, -A or -X.")
        }
    }

    func run() throws {
        if listInterfaces {
            try printInterfaces()
            return
        }
        do {
            try capture()
        } catch let error as CaptureError {
            printError(error.description)
            if case .badFilter = error { throw ExitCode(2) }
            throw ExitCode(1)
        } catch let error as PacketDecoder.UnsupportedLinkType {
            printError("\(error.description)")
            throw ExitCode(1)
        }
    }

    private func capture() throws {
        let handle: CaptureHandle
        if let path = source.readFile {
            handle = try CaptureHandle.openOffline(path)
        } else {
            handle = try openLive(source.interface!)
        }
        if let filter = source.filter { try handle.setFilter(filter) }
        // Writing copies frames unchanged, so any link type can be saved; printing needs a decoder.
        let decoder = output.writeFile == nil ? try PacketDecoder(linkType: handle.linkType) : nil
        announce(handle)

        let session = SignalSession(handle: handle)
        defer { session.finish() }
        if output.http {
            try runHTTPMode(handle: handle, source: source, output: output, http: httpOptions)
            return
        }
        var consumer = try PacketConsumer(handle: handle, decoder: decoder, output: output)
        defer { consumer.finish() }
        if handle.isLive {
            let buffered = BufferedCapture(handle: handle)
            defer { printLiveStatistics(handle: handle, captured: consumer.packetsSeen, queueDrops: buffered.droppedByQueue) }
            try runPacketLoop(buffered, limit: source.count, consumer: &consumer)
        } else {
            try runPacketLoop(handle, limit: source.count, consumer: &consumer)
        }
    }

    private func openLive(_ name: String) throws -> CaptureHandle {
        var options = LiveOptions()
        if let snap = source.snapLength, snap > 0 { options.snapshotLength = snap }
        if let kib = source.bufferKiB { options.bufferSize = kib * 1024 }
        // Deliver packets as they come when a person is watching; batch them when writing to a file or pipe.
        options.immediate = (isatty(STDOUT_FILENO) == 1 || output.lineBuffered) && output.writeFile == nil
        var interface = name
        if let position = Int(name), position > 0, let interfaces = try? NetworkInterface.all(),
           position <= interfaces.count, !interfaces.contains(where: { $0.name == name }) {
            interface = interfaces[position - 1].name
        }
        return try CaptureHandle.openLive(interface, options: options)
    }

    /// tcpdump's first line on standard error, so users know what they are looking at.
    private func announce(_ handle: CaptureHandle) {
        let what = handle.isLive ? "listening on \(handle.source)" : "reading from file \(handle.source)"
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
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// tcpdump's closing counts for a live capture, on standard error.
func printLiveStatistics(handle: CaptureHandle, captured: Int, queueDrops: Int) {
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
