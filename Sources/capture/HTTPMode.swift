import ArgumentParser
import CaptureEngine
import FlowReassembly
import Foundation
import HTTPModel
import LiveView
import PacketCapture
import PacketDecoding
import Reports
import SystemSupport
import TLS

/// `--http`: the capture engine's events (HTTP/1.x exchanges, HTTP/2 streams, WebSocket messages, TLS sessions,
/// QUIC labels) -> the terminal view, NDJSON and/or HAR.
func runHTTPMode(handle: CaptureHandle, source: SourceOptions, output: OutputOptions, http: HTTPOptions,
                 keys: TLSKeySource?, holding: (wait: Duration, directory: String), secrets: SecretsToEmbed?,
                 liveView: LiveView? = nil) throws {
    var options = HTTPEngineOptions()
    options.keyWait = holding.wait
    options.heldRecordsDirectory = holding.directory
    // Keep decoded bytes only for what will show them: -v up to --body-limit, HAR up to 1 MiB per body.
    // The live view keeps up to its per-body limit (that of HAR, so its HAR download equals --har's file).
    options.limits.bodyKeepBytes = max(http.verbose && !output.json ? http.bodyLimit : 0, http.harFile != nil ? 1 << 20 : 0,
                                       liveView?.store.limits.bodyBytes ?? 0)
    // Body hashes are shown in JSON and in the live view (whose records are `--json`'s).
    options.limits.hashBodies = output.json || liveView != nil
    options.keys = keys
    options.pipeline = http.pipelinePolicy(handle: handle, readFile: source.readFile, output: output)
    options.packetLimit = source.count
    // -w with --http: every packet is saved as it arrives, whatever the view shows or filters out.
    options.savePacketsTo = output.writeFile
    options.secretsToSave = secrets
    let engine = try HTTPEngine(handle: handle, options: options)
    let sink = try HTTPOutputSink(handle: handle, output: output, http: http)
    // Also when reading fails part-way (a truncated file): what was decoded before the damage is still shown.
    do {
        // The live view is a second consumer of the same events, beside the terminal's.
        try engine.run(progress: ProgressReporter(handle: handle), observe: liveView.map { view in { view.observe($0) } },
                       ended: { printLiveStatistics(handle: handle, ended: $0) }, note: printNote) { event in
            sink.handle(event)
            liveView?.handle(event)
        }
    } catch {
        try? sink.finish()
        throw error
    }
    try sink.finish()
}

/// What the engine noticed about the whole capture, in words.
private func printNote(_ note: CaptureNote) {
    switch note {
    case .stoppedAtCount(let count):
        // With -c the capture stops mid-conversation: say so, so "[incomplete]" is not read as a broken connection.
        printError("stopped after \(count) packet\(count == 1 ? "" : "s") (-c \(count)); exchanges still open then are shown as incomplete")
    case .packetsCut(let cut, let read, let longestKept):
        // Never print nothing silently: a small snap length (-s 120) leaves HTTP heads and bodies uncaptured.
        printError("\(cut) of \(read) packets were cut by the snap length (at most \(longestKept) bytes "
                   + "of each kept): "
                   + "HTTP messages in them are shown incomplete or not at all. Capture with -s 0 to keep whole packets.")
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
    /// TLS connections whose key never came, said once at the end.
    private var keyless = KeylessConnectionsNotice()

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
            do { har = try HARWriter(path: path, creatorVersion: TapKitVersion.current) } catch {
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

    func handle(_ event: CaptureEvent) {
        switch event {
        case .http(let event): handle(event)
        case .tls(let session): handle(tls: session)
        }
    }

    private func handle(_ event: HTTPEvent) {
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
            if json, QUICJSONRenderer.isRecord(notice) {
                // With a key log a QUIC connection gets an object on standard output, as a TLS one does.
                QUICJSONRenderer.appendLine(for: notice, to: &text)
            } else if json, NotHTTPJSONRenderer.isRecord(notice) {
                NotHTTPJSONRenderer.appendLine(for: notice, to: &text)
            } else if json {
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
        case .warning(let connection, let warning, let time):
            keyless.note(warning.value, connection: connection)
            FileHandle.standardError.write(Data(HTTPTextRenderer(options: HTTPTextRenderer.Options())
                .render(warning: warning.description, time: time).utf8))
        }
        flushAsDue()
    }

    /// Writes what is pending when a person is watching or enough has gathered; a closed output stops the capture.
    private func flushAsDue() {
        if flushEachExchange { text.flush() } else { text.flushIfFull() }
        if text.writeFailed { handle.stop() }
    }

    /// The TLS line of a connection, from the decrypting layer.
    private func handle(tls session: TLSSessionFacts) {
        keyless.note(session)
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
        case .tls(let serverName, _), .quic(_, let serverName, _, _): return matchesHost(serverName: serverName)
        case .http2Preface, .notParsedAsHTTP: return false
        }
    }

    /// Flushes standard output and closes the HAR file; a HAR file that could not be written fails the run.
    func finish() throws {
        text.flush()
        for line in keyless.lines { printError(line) }
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

