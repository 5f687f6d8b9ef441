import ArgumentParser
import FlowReassembly
import Foundation
import HTTP2
import HTTPDecoding
import PacketCapture
import PacketDecoding
import Reports
import TLS

/// `--http`: packets -> TCP reassembly -> HTTP/1.x exchanges (HTTP/2 streams and WebSocket messages through the
/// HTTP2 module's takeover) -> the terminal view, NDJSON and/or HAR. With two threads (`--threads`), the layers
/// after reassembly run on the second one (see `StreamPipeline`), and cleartext connections are shared between
/// both when the second is the slower (see `ConnectionSplitter`).
func runHTTPMode(handle: CaptureHandle, source: SourceOptions, output: OutputOptions, http: HTTPOptions,
                 keys: TLSKeySource?) throws {
    let packetDecoder = try PacketDecoder(linkType: handle.linkType)
    let sink = try HTTPOutputSink(handle: handle, output: output, http: http)
    func decode() throws {
        var limits = HTTPDecoderLimits()
        // Keep decoded bytes only for what will show them: -v up to --body-limit, HAR up to 1 MiB per body.
        limits.bodyKeepBytes = max(http.verbose && !output.json ? http.bodyLimit : 0, http.harFile != nil ? 1 << 20 : 0)
        // Body hashes are shown only in JSON.
        limits.hashBodies = output.json
        let show: (SinkCall) -> Void = { call in
            switch call {
            case .event(let event): sink.handle(event)
            case .tls(let session): sink.handle(tls: session)
            }
        }
        // With a key log, TLS inside CONNECT tunnels is decrypted too.
        let tlsLimits = TLSDecryptionLimits(for: keys)
        func makeDecoder(_ deliver: @escaping (SinkCall) -> Void) -> HTTPStreamDecoder {
            let takeover = TunnelDecryptor.takeover(keys: keys, limits: tlsLimits) { deliver(.tls($0)) }
            return HTTPStreamDecoder(limits: limits, takeover: takeover) { deliver(.event($0)) }
        }
        // QUIC Initials on UDP 443 are labelled (HTTP/3 is not decoded): on the reading thread, shown in order with
        // the exchanges.
        var quicLabeler = QUICLabeler()
        let loop = HTTPLoop(handle: handle, source: source, writeFile: output.writeFile, packetDecoder: packetDecoder,
                            pipeline: http.pipelinePolicy(handle: handle, readFile: source.readFile, output: output),
                            label: { quicLabeler.inspect($0, at: $1) }, show: show)
        if let keys {
            // TLS first: decrypted application data reaches the HTTP decoder as if it were cleartext.
            func makeConsumer(_ deliver: @escaping (SinkCall) -> Void) -> TLSDecryptingConsumer<HTTPStreamDecoder> {
                TLSDecryptingConsumer(keys: keys, limits: tlsLimits, inner: makeDecoder(deliver)) { deliver(.tls($0)) }
            }
            var consumer = makeConsumer(show)
            // A key log read once is only looked up from here on, so both threads can decode connections with it;
            // a followed one grows as it is re-read, so then every connection stays on the worker.
            let route = SinkRoute(sink: show)
            try loop.run(consumer: &consumer, local: keys.follows ? nil : (makeConsumer(route.deliver), route)) {
                $0.reportKeyLogWarnings(at: $1)
                $0.inner.flush(at: $1)
            }
        } else {
            var consumer = makeDecoder(show)
            let route = SinkRoute(sink: show)
            try loop.run(consumer: &consumer, local: (makeDecoder(route.deliver), route)) { $0.flush(at: $1) }
        }
    }
    // Also when reading fails part-way (a truncated file): what was decoded before the damage is still shown.
    do { try decode() } catch { try? sink.finish(); throw error }
    try sink.finish()
}

/// Reads packets through reassembly into a consumer until the source ends, then closes what is still open.
private struct HTTPLoop {
    let handle: CaptureHandle
    let source: SourceOptions
    let writeFile: String?
    let packetDecoder: PacketDecoder
    /// nil: everything on this thread.
    let pipeline: StreamPipelinePolicy?
    /// Looks at every UDP datagram (QUIC labels), on the reading thread.
    let label: (UDPDatagram, Timestamp) -> ConnectionNotice?
    /// Shows output, on the thread that runs the consumer.
    let show: (SinkCall) -> Void

    /// `local`: a second decoder for the reading thread, when connections may be shared between the threads.
    func run<Consumer: StreamConsumer>(consumer: inout Consumer, local: (consumer: Consumer, route: SinkRoute)?,
                                       flush: (inout Consumer, Timestamp) -> Void) throws {
        var reassembler = TCPReassembler()
        // -w with --http: every packet is saved as it arrives, whatever the view shows or filters out.
        let writer = try writeFile.map { try handle.makeWriter(path: $0) }
        defer { try? writer?.flush() }

        var lastTime: Timestamp?
        var packetsCut = 0, packetsRead = 0, longestCut = 0
        func feed<Target: StreamConsumer>(_ packet: CapturedPacket, into target: inout Target) -> ConnectionNotice? {
            packetsRead += 1
            writer?.write(packet)
            lastTime = packet.timestamp
            if packet.bytes.count < packet.originalLength {
                packetsCut += 1
                longestCut = max(longestCut, packet.bytes.count)
            }
            let decoded = packetDecoder.decode(packet.bytes, timestamp: packet.timestamp,
                                               originalLength: packet.originalLength)
            reassembler.process(decoded, into: &target)
            if let udp = decoded.udp { return label(udp, packet.timestamp) }
            return nil
        }
        // Two threads: the consumer moves to the pipeline's worker for the loop and comes back before anything
        // else is printed, so messages on standard error keep their single-threaded order too.
        let pipeline = try pipeline.map { try StreamPipeline(consumer: consumer, policy: $0, deliver: show) }
        var splitter = pipeline.map { pipeline in
            local?.route.pipelineBatch = { pipeline.batch.append(extra: $0) }
            return ConnectionSplitter(local: local?.consumer, pipeline: pipeline)
        }
        func packetLoop(_ packet: CapturedPacket) throws {
            if let pipeline {
                if let label = feed(packet, into: &splitter!) { pipeline.batch.append(extra: .event(.notice(label))) }
                pipeline.packetDone()
            } else {
                if let label = feed(packet, into: &consumer) { show(.event(.notice(label))) }
            }
        }
        func finishPipeline() {
            guard let pipeline else { return }
            local?.route.pipelineBatch = nil
            splitter!.pipelineFinished(remote: pipeline.finish())
        }
        var failure: Error?
        var packetsSeen = 0
        do {
            if handle.isLive {
                let buffered = BufferedCapture(handle: handle)
                defer {
                    finishPipeline()
                    printLiveStatistics(handle: handle, captured: packetsSeen, queueDrops: buffered.droppedByQueue)
                }
                // A quiet moment passes on what was held back for batching, so exchanges still print at once.
                try buffered.forEachPacket(limit: source.count, whenIdle: { pipeline?.handOver() }) { packet in
                    packetsSeen += 1
                    try packetLoop(packet)
                }
            } else {
                var progress = ProgressReporter(handle: handle)
                defer {
                    finishPipeline()
                    progress?.clear()
                }
                try handle.forEachPacket(limit: source.count) { packet in
                    try packetLoop(packet)
                    progress?.tick(packets: packet.index)
                }
            }
        } catch {
            failure = error
        }
        // With -c the capture stops mid-conversation: say so, so "[incomplete]" is not read as a broken connection.
        if let count = source.count, packetsRead >= count {
            printError("stopped after \(count) packet\(count == 1 ? "" : "s") (-c \(count)); exchanges still open then are shown as incomplete")
        }
        // Connections still open are reported as cut short; requests still waiting appear with no response.
        let end = lastTime ?? Timestamp(seconds: 0, nanoseconds: 0)
        if var splitter {
            // Reassembly closes every connection it still has here, so both decoders are left with none open and
            // flushing them one after the other cannot reorder anything.
            reassembler.finish(at: end, into: &splitter)
            if splitter.local != nil { flush(&splitter.local!, end) }
            consumer = splitter.remote!
        } else {
            reassembler.finish(at: end, into: &consumer)
        }
        flush(&consumer, end)
        if packetsCut > 0 {
            // Never print nothing silently: a small snap length (-s 120) leaves HTTP heads and bodies uncaptured.
            printError("\(packetsCut) of \(packetsRead) packets were cut by the snap length (at most \(longestCut) bytes "
                       + "of each kept): "
                       + "HTTP messages in them are shown incomplete or not at all. Capture with -s 0 to keep whole packets.")
        }
        if let failure { throw failure }
    }
}

/// Receives decoder events, filters them and writes each enabled output.
final class HTTPOutputSink {
    private let handle: CaptureHandle
    private let filter: ExchangeFilter
    private let json: Bool
    private var renderer: HTTPTextRenderer
    private let har: HARWriter?
    private var text: TextOutput
    private let flushEachExchange: Bool
    private(set) var shown = 0
    private(set) var filteredOut = 0
    private(set) var incomplete = 0
    /// Connections whose upgrade exchange passed the filter: their WebSocket messages are shown too.
    private var shownUpgrades: Set<ConnectionID> = []

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
        text = TextOutput(fileDescriptor: STDOUT_FILENO, flushThreshold: flushEachExchange ? 0 : 1 << 16)
    }

    func handle(_ event: HTTPEvent) {
        switch event {
        case .exchange(let exchange):
            guard filter.matches(exchange) else { filteredOut += 1; return }
            shown += 1
            if !exchange.complete { incomplete += 1 }
            if exchange.upgradeDecoded { shownUpgrades.insert(exchange.connection) }
            if json {
                HTTPJSONRenderer.appendLine(for: exchange, to: &text)
            } else {
                renderer.append(exchange, to: &text)
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
        case .webSocket(let message):
            guard shownUpgrades.contains(message.connection) else { return }
            if json {
                HTTPJSONRenderer.appendLine(for: message, to: &text)
            } else {
                text.append(renderer.render(message))
            }
        case .warning(_, let message, let time):
            FileHandle.standardError.write(Data(HTTPTextRenderer(options: HTTPTextRenderer.Options())
                .render(warning: message, time: time).utf8))
        }
        flushAsDue()
    }

    /// Writes what is pending when a person is watching or enough has gathered; a closed output stops the capture.
    private func flushAsDue() {
        if flushEachExchange { text.flush() } else { text.flushIfFull() }
        if text.writeFailed { handle.stop() }
    }

    /// The TLS line of a connection, from the decrypting layer.
    func handle(tls session: TLSSessionFacts) {
        guard filter.isEmpty || !filter.hosts.isEmpty && matchesHost(serverName: session.serverName) else { return }
        if json {
            TLSJSONRenderer.appendLine(for: session, to: &text)
        } else {
            text.append(renderer.render(session))
        }
        flushAsDue()
    }

    private func matchesHost(serverName: String?) -> Bool {
        guard let serverName else { return false }
        return filter.hosts.contains { fnmatch($0.lowercased(), serverName.lowercased(), 0) == 0 }
    }

    private func matchesHost(_ notice: ConnectionNotice) -> Bool {
        switch notice.kind {
        case .tls(let serverName, _), .quic(_, let serverName, _): return matchesHost(serverName: serverName)
        case .http2Preface: return false
        }
    }

    /// Flushes standard output and closes the HAR file; a HAR file that could not be written fails the run.
    func finish() throws {
        text.flush()
        if !json && isatty(STDERR_FILENO) == 1 {
            var summary = "\(shown) exchange\(shown == 1 ? "" : "s")"
            if incomplete > 0 { summary += ", \(incomplete) incomplete" }
            if filteredOut > 0 { summary += ", \(filteredOut) filtered out" }
            printError(summary, prefixed: false)
        }
        do { try har?.finish() } catch {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}

