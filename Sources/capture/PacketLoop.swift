import CaptureEngine
import Foundation
import PacketCapture
import PacketDecoding
import Reports
import TLS

/// What happens to each packet: decoded and printed (text or JSON), or written to a pcap file.
struct PacketConsumer {
    let handle: CaptureHandle
    private let decoder: PacketDecoder?
    private var writer: RotatingWriter?
    private var lines: PacketLineRenderer
    private let json: Bool
    /// -v on a tunnelled packet: said once, because the outer headers are printed without tcpdump's -v details.
    private var toldVerboseTunnels = false
    private var text: TextOutput

    struct OutputClosed: Error {}

    init(handle: CaptureHandle, decoder: PacketDecoder?, output: OutputOptions, lineOptions: PacketLineOptions,
         verbosity: Int, control: CaptureControlOptions, secrets: SecretsToEmbed?) throws {
        self.handle = handle
        self.decoder = decoder
        if let path = output.writeFile { writer = try RotatingWriter(handle: handle, pattern: path, limits: control.rotation, secrets: secrets) }
        var options = PacketLineRenderer.Options()
        options.quiet = output.quiet
        lineOptions.apply(to: &options)
        options.verbosity = verbosity
        options.utc = output.utc
        lines = PacketLineRenderer(options: options)
        json = output.json
        // Line by line for a person at a terminal; big writes otherwise.
        let interactive = isatty(STDOUT_FILENO) == 1 || output.lineBuffered || control.packetBuffered
        text = TextOutput(fileDescriptor: STDOUT_FILENO, flushThreshold: interactive ? 0 : 1 << 16)
    }

    mutating func consume(_ packet: CapturedPacket) throws {
        if let writer {
            try writer.write(packet)
            return
        }
        guard let decoder else { return }
        let decoded = decoder.decode(packet.bytes, timestamp: packet.timestamp, originalLength: packet.originalLength)
        if json {
            PacketJSONRenderer().render(decoded, index: packet.index, to: &text)
        } else {
            lines.render(decoded, frame: packet.bytes, to: &text)
            if lines.options.verbosity > 0 && !decoded.encapsulation.isEmpty && !toldVerboseTunnels {
                toldVerboseTunnels = true
                printError("note: with -v, tunnel and encapsulation headers (GRE, VXLAN, MPLS, ...) print as without -v; "
                           + "the packet inside them gets tcpdump's -v fields.")
            }
        }
        if text.writeFailed {
            handle.stop()  // the reader went away (e.g. `| head`); stop quietly
        }
    }

    mutating func finish() {
        text.flush()
        if let writer { try? writer.flush() }
        writer = nil
    }
}

/// `\r 42% 1234567 packets` on standard error while a big file is read, when standard error is a terminal.
struct ProgressReporter: ReadProgress {
    private let handle: CaptureHandle
    private let totalBytes: Int64
    /// None until the first report, which comes at the first tick: a big file always shows where it is.
    private var lastReport: TimeInterval?
    private var shown = false

    init?(handle: CaptureHandle) {
        guard !handle.isLive, isatty(STDERR_FILENO) == 1, handle.source != "-",
              let attributes = try? FileManager.default.attributesOfItem(atPath: handle.source),
              let size = attributes[.size] as? Int64, size > 16 << 20 else { return nil }
        self.handle = handle
        self.totalBytes = size
    }

    mutating func tick(packets: Int) {
        guard packets & 0x3fff == 0 else { return }
        let now = ProcessInfo.processInfo.systemUptime
        if let lastReport, now - lastReport < 0.5 { return }
        guard let read = handle.fileBytesRead else { return }
        lastReport = now
        shown = true
        let percent = Int(read * 100 / max(totalBytes, 1))
        FileHandle.standardError.write(Data("\r\u{1b}[K\(percent)% read, \(packets) packets".utf8))
    }

    mutating func clear() {
        if shown { FileHandle.standardError.write(Data("\r\u{1b}[K".utf8)) }
        shown = false
    }
}
