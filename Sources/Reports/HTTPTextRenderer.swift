import HTTPModel
import TLS
import PacketDecoding

/// Whether to colour output. `auto` colours a terminal unless `NO_COLOR` is set (https://no-color.org).
public enum ColorChoice: String, Sendable, CaseIterable {
    case auto, always, never

    public func resolve(isTerminal: Bool, environment: [String: String]) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .auto:
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return isTerminal
        }
    }
}

/// The `--http` terminal view: one line per exchange, then with `verbose` the headers and decoded bodies.
public struct HTTPTextRenderer: Sendable {
    public struct Options: Sendable {
        public var verbose = false
        /// Decoded body bytes shown per message with `verbose`.
        public var bodyLimit = 4096
        public var color = false
        public var utc = false
        public init() {}
    }

    public var options: Options
    private var clock = TimeOfDayCache()

    public init(options: Options) { self.options = options }

    private enum Style: String {
        case dim = "2", bold = "1", green = "32", yellow = "33", red = "31", cyan = "36", magenta = "35"
    }

    private func paint(_ text: String, _ style: Style) -> String {
        options.color ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// What `body` writes, in `style` when colouring.
    private func paint(_ style: Style, _ out: inout TextOutput, _ body: (inout TextOutput) -> Void) {
        guard options.color else { return body(&out) }
        out.append("\u{1B}[")
        out.append(style.rawValue)
        out.append(UInt8(ascii: "m"))
        body(&out)
        out.append("\u{1B}[0m")
    }

    /// The exchange's text, ending with a newline.
    public func render(_ exchange: HTTPExchange) -> String {
        var renderer = self
        var out = TextOutput(fileDescriptor: -1, flushThreshold: 0)
        renderer.append(exchange, to: &out)
        return out.text
    }

    /// Appends the exchange's text, ending with a newline. The default line is written straight into `out`: it is
    /// what users see first, and building it from Strings took three times as long as the JSON line.
    public mutating func append(_ exchange: HTTPExchange, to out: inout TextOutput) {
        paint(.dim, &out) { $0.append(timeOfDay: exchange.time, utc: options.utc, cache: &clock) }
        out.append(UInt8(ascii: " "))
        out.append(exchange.client)
        out.append(" → ")
        out.append(exchange.server)
        out.append("  ")
        if let request = exchange.request {
            paint(.bold, &out) { $0.append(request.method) }
            out.append(UInt8(ascii: " "))
            ExchangeText.appendHostAndTarget(exchange, request: request, to: &out)
        } else {
            paint(.dim, &out) { $0.append("(request not captured)") }
        }
        out.append(" → ")
        if let response = exchange.response {
            paint(statusStyle(response.status), &out) { ExchangeText.appendStatus(response, to: &$0) }
            let start = exchange.request?.start ?? response.start
            out.append("  ")
            out.append(duration: response.end.seconds(since: start))
        } else {
            paint(.red, &out) { $0.append("no response") }
        }
        out.append("  ")
        out.append(size: exchange.request.map { $0.headSize + $0.body.transferSize } ?? 0)
        if let response = exchange.response {
            out.append(" → ")
            out.append(size: response.headSize + response.body.transferSize)
            let encoding = response.body.encoding
            if !encoding.isEmpty {
                out.append(" (")
                for (index, coding) in encoding.reversed().enumerated() {
                    if index > 0 { out.append(", ") }
                    out.append(coding)
                }
                out.append(UInt8(ascii: ")"))
            }
        }
        if let upgrade = exchange.upgrade {
            out.append("  ")
            if exchange.upgradeDecoded {
                out.append(paint("⇄ \(upgrade)", .magenta))
            } else {
                out.append(paint(upgrade == "tunnel" ? "⇄ tunnel (not decoded)" : "⇄ \(upgrade) (not decoded)", .magenta))
            }
        }
        if let http2 = exchange.http2 {
            let pushed = http2.promisedOn.map { " pushed on #\($0)" } ?? ""
            out.append("  " + paint("h2 #\(http2.streamID)\(pushed)", .magenta))
        }
        if let http3 = exchange.http3 { out.append("  " + paint(ExchangeText.http3Label(http3), .magenta)) }
        if let grpc = exchange.grpc { out.append("  " + ExchangeText.grpcSummary(grpc)) }
        if !exchange.complete { out.append("  " + paint("[incomplete]", .yellow)) }
        out.append(UInt8(ascii: "\n"))
        for warning in exchange.warnings {
            out.append("    " + paint("! " + BodyPresentation.terminalSafe(warning.description), .yellow) + "\n")
        }
        if options.verbose { out.append(details(exchange)) }
    }

    public func render(_ notice: ConnectionNotice) -> String {
        var out = paint(ExchangeText.timeOfDay(notice.time, utc: options.utc), .dim) + " "
        out += "\(notice.client) → \(notice.server)  "
        switch notice.kind {
        case .tls(let serverName, let alpn):
            out += paint("TLS", .magenta) + " " + BodyPresentation.terminalSafe(serverName ?? "(no server name)")
            if !alpn.isEmpty { out += "  ALPN " + BodyPresentation.terminalSafe(alpn.joined(separator: ", ")) }
            out += "  " + paint("(encrypted, not decoded)", .dim)
        case .http2Preface:
            out += paint("HTTP/2", .magenta) + " cleartext preface  " + paint("(HTTP/2 not decoded)", .dim)
        case .notParsedAsHTTP(let clientBytes, let serverBytes):
            out += paint(ExchangeText.notParsedAsHTTP(clientBytes: clientBytes, serverBytes: serverBytes), .yellow)
        case .quic(let version, let serverName, let alpn, let keys):
            out += paint("QUIC", .magenta) + " " + ExchangeText.quicVersion(version)
            // A version not read has no server name to show, nor the absence of one.
            if keys != .unknownVersion { out += " " + BodyPresentation.terminalSafe(serverName ?? "(no server name)") }
            if !alpn.isEmpty { out += "  ALPN " + BodyPresentation.terminalSafe(alpn.joined(separator: ", ")) }
            if let resumption = notice.resumption { out += Self.resumptionSummary(resumption) }
            switch keys {
            case .noKeyLog: out += "  " + paint("(encrypted, not decoded)", .dim)
            case .notLogged: out += "  " + paint("(no key logged for this connection)", .dim)
            case .decrypted: out += "  " + paint("(decrypted)", .dim)
            case .unknownVersion: out += "  " + paint("(\(ExchangeText.quicUnknownVersionProblem))", .yellow)
            }
        }
        out += "\n"
        // With -v, each side's transport parameters on an indented line, as the TLS line shows what was offered.
        if options.verbose, let parameters = notice.transportParameters {
            out += "    client transport parameters: " + Self.parameterList(parameters.client) + "\n"
            out += "    server transport parameters: "
                + (parameters.server.map(Self.parameterList) ?? "not seen (its Handshake packets were not decrypted)") + "\n"
        }
        if options.verbose, let resumption = notice.resumption { out += "    " + Self.resumptionDetails(resumption) + "\n" }
        if options.verbose, let ids = notice.connectionIDs { out += "    " + Self.connectionIDWords(ids) + "\n" }
        return out
    }

    /// On the QUIC line, as the TLS line says `resumed`: the session resumed, and what became of 0-RTT.
    static func resumptionSummary(_ resumption: QUICResumption) -> String {
        var out = resumption.resumed == true ? "  resumed" : ""
        if resumption.earlyDataOffered == true {
            switch resumption.earlyDataAccepted {
            case true?: out += "  0-RTT accepted"
            case false?: out += "  0-RTT rejected"
            case nil: out += "  0-RTT offered (acceptance not seen)"
            }
        }
        return out
    }

    /// With -v, as Zeek's quic.log has them: `(empty)` for a zero-length ID, `not seen` when no long header came.
    static func connectionIDWords(_ ids: QUICConnectionIDs) -> String {
        func hex(_ bytes: [UInt8]?) -> String {
            guard let bytes else { return "not seen" }
            return bytes.isEmpty ? "(empty)" : QUICTransportParameter.hex(bytes)
        }
        return "connection IDs: client's first destination \(hex(ids.clientInitialDestination)), client's source "
            + "\(hex(ids.clientSource)), server's source \(hex(ids.serverSource))"
    }

    /// With -v: each side's part, and what could not be seen.
    static func resumptionDetails(_ resumption: QUICResumption) -> String {
        var out = "resumption: "
        switch (resumption.offered, resumption.resumed) {
        case (nil, _): out += "not seen (no ClientHello read)"
        case (false?, _): out += "not offered"
        case (true?, true?): out += "offered by the client, accepted by the server (resumed)"
        case (true?, false?): out += "offered by the client, not accepted by the server (full handshake)"
        case (true?, nil): out += "offered by the client, the server's answer not seen (no ServerHello read)"
        }
        out += "; 0-RTT: "
        switch (resumption.earlyDataOffered, resumption.earlyDataAccepted) {
        case (nil, _): out += "not seen (no ClientHello read)"
        case (false?, _): out += "not offered"
        case (true?, true?): out += "offered by the client, accepted by the server"
        case (true?, false?): out += "offered by the client, rejected by the server"
        case (true?, nil): out += "offered by the client, the server's answer not seen (its EncryptedExtensions was not decrypted)"
        }
        return out
    }

    private static func parameterList(_ parameters: [QUICTransportParameter]) -> String {
        parameters.isEmpty ? "none" : BodyPresentation.terminalSafe(parameters.map(\.description).joined(separator: ", "))
    }

    /// One WebSocket message: `time sender → receiver  WS text 16 B "hello"`.
    public func render(_ message: WebSocketMessage) -> String {
        var out = paint(ExchangeText.timeOfDay(message.time, utc: options.utc), .dim) + " "
        let fromClient = message.direction == .clientToServer
        out += fromClient ? "\(message.client) → \(message.server)  " : "\(message.server) → \(message.client)  "
        out += paint("WS", .magenta) + " " + paint(message.kind.rawValue, .bold)
        switch message.kind {
        case .close:
            if let code = message.closeCode { out += " \(code)" }
            if let reason = message.closeReason, !reason.isEmpty { out += " " + ExchangeText.quoted(reason) }
        case .text:
            out += " " + ExchangeText.size(message.size)
            let text = String(decoding: message.kept.prefix(options.verbose ? options.bodyLimit : 80), as: UTF8.self)
            out += "  " + ExchangeText.quoted(text) + (message.kept.count < message.size || (!options.verbose && message.kept.count > 80) ? "…" : "")
        default:
            out += " " + ExchangeText.size(message.size)
            if !message.kept.isEmpty { out += "  " + paint(ExchangeText.hexSummary(message.kept, count: 16), .dim) }
        }
        if message.compressed { out += "  " + paint("(deflate)", .dim) }
        if message.frames > 1 { out += "  " + paint("(\(message.frames) frames)", .dim) }
        out += "\n"
        for warning in message.warnings {
            out += "    " + paint("! " + BodyPresentation.terminalSafe(warning.description), .yellow) + "\n"
        }
        return out
    }

    /// The TLS line of a connection the decrypting layer saw (with a key log): version, suite, SNI, ALPN, resumption
    /// and whether it was decrypted. With -v, what the client offered follows on indented lines.
    public func render(_ session: TLSSessionFacts) -> String {
        var out = paint(ExchangeText.timeOfDay(session.time, utc: options.utc), .dim) + " "
        out += "\(session.client) → \(session.server)  " + paint(session.versionName ?? "TLS", .magenta)
        if let suite = session.cipherSuiteName { out += " " + suite }
        out += " " + BodyPresentation.terminalSafe(session.serverName ?? "(no server name)")
        if let alpn = session.alpn {
            out += "  ALPN " + BodyPresentation.terminalSafe(alpn)
        } else if !session.offeredALPN.isEmpty {
            out += "  ALPN offered " + BodyPresentation.terminalSafe(session.offeredALPN.joined(separator: ", "))
        }
        if session.resumed { out += "  resumed" }
        if session.helloRetryRequest { out += "  HRR" }
        switch session.decryption {
        case .decrypted: out += "  " + paint("(decrypted)", .dim)
        case .noKeyLogged, .noKeyWithin: out += "  " + paint("(\(session.decryption.problem ?? ""))", .yellow)
        case .unsupported(let reason): out += "  " + paint("(not decrypted: \(reason))", .yellow)
        }
        out += "\n"
        if options.verbose {
            if !session.offeredALPN.isEmpty {
                out += "    offered ALPN: " + BodyPresentation.terminalSafe(session.offeredALPN.joined(separator: ", ")) + "\n"
            }
            if session.earlyDataOffered { out += "    0-RTT early data offered\n" }
        }
        return out
    }

    public func render(warning message: String, time: Timestamp) -> String {
        paint(ExchangeText.timeOfDay(time, utc: options.utc), .dim) + " " + paint("! " + BodyPresentation.terminalSafe(message), .yellow) + "\n"
    }

    private func statusStyle(_ status: Int?) -> Style {
        guard let status else { return .yellow }  // not a number, or no status line: odd, so it stands out
        switch status {
        case 200..<300: return .green
        case 300..<400: return .cyan
        case 400..<500: return .yellow
        case 500...: return .red
        default: return .dim
        }
    }

    private func details(_ exchange: HTTPExchange) -> String {
        var out = ""
        if let request = exchange.request {
            out += "  " + paint("> \(request.method) \(request.uri) \(request.version)", .bold) + "\n"
            for field in request.headers { out += "  > " + BodyPresentation.terminalSafe("\(field.name): \(field.value)") + "\n" }
            out += body(request.body)
        }
        if let response = exchange.response {
            for interim in response.interim {
                out += "  " + paint("< \(interim.status) \(interim.reason)", .dim) + "\n"
            }
            let line = response.version == "HTTP/0.9" && response.statusText.isEmpty
                ? "< (HTTP/0.9: no status line, no header fields)"
                : "< \(response.version) \(response.statusText)" + (response.reason.isEmpty ? "" : " \(response.reason)")
            out += "  " + paint(BodyPresentation.terminalSafe(line), statusStyle(response.status)) + "\n"
            for field in response.headers { out += "  < " + BodyPresentation.terminalSafe("\(field.name): \(field.value)") + "\n" }
            out += body(response.body)
        }
        if let grpc = exchange.grpc {
            for (index, message) in grpc.requestMessages.enumerated() {
                out += "  > " + paint("gRPC message \(index + 1): \(ExchangeText.size(message.size))\(message.compressed ? " compressed" : "")  \(message.hexPrefix)", .dim) + "\n"
            }
            for (index, message) in grpc.responseMessages.enumerated() {
                out += "  < " + paint("gRPC message \(index + 1): \(ExchangeText.size(message.size))\(message.compressed ? " compressed" : "")  \(message.hexPrefix)", .dim) + "\n"
            }
        }
        return out + "\n"
    }

    private func body(_ body: HTTPBody) -> String {
        switch BodyPresentation.of(body, limit: options.bodyLimit) {
        case .empty:
            return ""
        case .binary(let mimeType, let size):
            return "  " + paint("[binary body: \(mimeType), \(ExchangeText.size(size)); not shown]", .dim) + "\n"
        case .text(let text, _):
            var out = "\n"
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) { out += "    \(line)\n" }
            let shown = min(options.bodyLimit, body.kept.count)
            if shown < body.size {
                let hint = shown < options.bodyLimit ? "" : "; --body-limit shows more"
                out += "  " + paint("[\(body.size - shown) more bytes not shown\(hint)]", .dim) + "\n"
            }
            return out
        }
    }
}
