import ArgumentParser
import FlowReassembly
import Foundation
import HTTPDecoding
import PacketCapture
import PacketDecoding
import Reports

/// `--http`: packets -> TCP reassembly -> HTTP/1.x exchanges -> the terminal view, NDJSON and/or HAR.
func runHTTPMode(handle: CaptureHandle, source: SourceOptions, output: OutputOptions, http: HTTPOptions) throws {
    let decoder = try PacketDecoder(linkType: handle.linkType)
    let sink = try HTTPOutputSink(handle: handle, output: output, http: http)
    var limits = HTTPDecoderLimits()
    // Keep decoded bytes only for what will show them: -v up to --body-limit, HAR up to 1 MiB per body.
    limits.bodyKeepBytes = max(http.verbose && !output.json ? http.bodyLimit : 0, http.harFile != nil ? 1 << 20 : 0)
    var consumer = HTTPStreamDecoder(limits: limits) { event in sink.handle(event) }
    var reassembler = TCPReassembler()

    var lastTime: Timestamp?
    let packetLoop: (CapturedPacket) throws -> Void = { packet in
        lastTime = packet.timestamp
        let decoded = decoder.decode(packet.bytes, timestamp: packet.timestamp, originalLength: packet.originalLength)
        reassembler.process(decoded, into: &consumer)
    }
    var failure: Error?
    var packetsSeen = 0
    do {
        if handle.isLive {
            let buffered = BufferedCapture(handle: handle)
            defer { printLiveStatistics(handle: handle, captured: packetsSeen, queueDrops: buffered.droppedByQueue) }
            try buffered.forEachPacket(limit: source.count) { packet in
                packetsSeen += 1
                try packetLoop(packet)
            }
        } else {
            var progress = ProgressReporter(handle: handle)
            defer { progress?.clear() }
            try handle.forEachPacket(limit: source.count) { packet in
                try packetLoop(packet)
                progress?.tick(packets: packet.index)
            }
        }
    } catch {
        failure = error
    }
    // Connections still open are reported as cut short; requests still waiting appear with no response.
    let end = lastTime ?? Timestamp(seconds: 0, nanoseconds: 0)
    reassembler.finish(at: end, into: &consumer)
    consumer.flush(at: end)
    sink.finish()
    if let failure { throw failure }
}

/// Receives decoder events, filters them and writes each enabled output.
final class HTTPOutputSink {
    private let handle: CaptureHandle
    private let filter: ExchangeFilter
    private let json: Bool
    private let renderer: HTTPTextRenderer
    private let har: HARWriter?
    private var text: PacketOutput
    private let flushEachExchange: Bool
    private(set) var shown = 0
    private(set) var filteredOut = 0
    private(set) var incomplete = 0

    init(handle: CaptureHandle, output: OutputOptions, http: HTTPOptions) throws {
        self.handle = handle
        filter = try http.makeFilter()
        json = output.json
        var options = HTTPTextRenderer.Options()
        options.verbose = http.verbose
        options.bodyLimit = http.bodyLimit
        options.utc = output.utc
        options.color = http.color.resolve(isTerminal: isatty(STDOUT_FILENO) == 1,
                                           environment: ProcessInfo.processInfo.environment)
        renderer = HTTPTextRenderer(options: options)
        if let path = http.harFile {
            do { har = try HARWriter(path: path) } catch {
                printError(error.description)
                throw ExitCode(1)
            }
        } else {
            har = nil
        }
        // Live: each exchange is printed as soon as its response completes.
        flushEachExchange = handle.isLive || isatty(STDOUT_FILENO) == 1
        text = PacketOutput(fileDescriptor: STDOUT_FILENO, flushThreshold: flushEachExchange ? 0 : 1 << 16)
    }

    func handle(_ event: HTTPEvent) {
        switch event {
        case .exchange(let exchange):
            guard filter.matches(exchange) else { filteredOut += 1; return }
            shown += 1
            if !exchange.complete { incomplete += 1 }
            if json {
                HTTPJSONRenderer.appendLine(for: exchange, to: &text)
            } else {
                text.append(renderer.render(exchange))
            }
            har?.add(exchange)
        case .notice(let notice):
            // Not exchanges: in JSON mode they go to standard error so standard output stays one schema.
            guard filter.isEmpty || !filter.hosts.isEmpty && matchesHost(notice) else { return }
            if json {
                FileHandle.standardError.write(Data(renderer.render(notice).utf8))
            } else {
                text.append(renderer.render(notice))
            }
        case .warning(_, let message, let time):
            FileHandle.standardError.write(Data(HTTPTextRenderer(options: HTTPTextRenderer.Options())
                .render(warning: message, time: time).utf8))
        }
        if flushEachExchange || text.bytes.count >= text.flushThreshold { text.flush() }
        if text.writeFailed { handle.stop() }
    }

    private func matchesHost(_ notice: ConnectionNotice) -> Bool {
        guard case .tls(let serverName?, _) = notice.kind else { return false }
        return filter.hosts.contains { fnmatch($0.lowercased(), serverName.lowercased(), 0) == 0 }
    }

    func finish() {
        text.flush()
        har?.finish()
        if !json && isatty(STDERR_FILENO) == 1 {
            var summary = "\(shown) exchange\(shown == 1 ? "" : "s")"
            if incomplete > 0 { summary += ", \(incomplete) incomplete" }
            if filteredOut > 0 { summary += ", \(filteredOut) filtered out" }
            printError(summary, prefixed: false)
        }
    }
}

