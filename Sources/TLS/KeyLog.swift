/// Secrets from an NSS key log (the `SSLKEYLOGFILE` format that curl, browsers, OpenSSL and Python write),
/// indexed by the ClientHello random they belong to.
/// Format: https://firefox-source-docs.mozilla.org/security/nss/legacy/key_log_format/
public struct TLSKeyLog: Sendable {
    /// What a key log can hold for one session.
    public struct Secrets: Sendable, Hashable {
        /// TLS 1.2 and earlier (`CLIENT_RANDOM`): the 48-byte master secret.
        public var masterSecret: [UInt8]?
        public var clientHandshakeTrafficSecret: [UInt8]?
        public var serverHandshakeTrafficSecret: [UInt8]?
        public var clientTrafficSecret0: [UInt8]?
        public var serverTrafficSecret0: [UInt8]?
        public var clientEarlyTrafficSecret: [UInt8]?
        public init() {}
    }

    /// A line that was not understood. Never fatal: the rest of the file is still used.
    public struct Warning: Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var problem: Problem
        public var description: String { "key log line \(line): \(problem)" }
    }

    /// Why a line was not used; the texts quote at most the start of what was found.
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        case fieldCount(Int)
        case rsaNotSupported
        case badClientRandom(String)
        case secretNotHex(String)
        case masterSecretLength(Int)
        case unknownLabel(String)
        case tooManySessions(limit: Int)

        public var description: String {
            switch self {
            case .fieldCount(let count): "expected \"LABEL CLIENT_RANDOM SECRET\" (3 fields), found \(count)"
            case .rsaNotSupported: "RSA pre-master secret lines are not supported (only CLIENT_RANDOM and TLS 1.3 secrets)"
            case .badClientRandom(let found): "client random must be 64 hex digits, found \"\(found)\""
            case .secretNotHex(let found): "secret is not hex: \"\(found)\""
            case .masterSecretLength(let count): "CLIENT_RANDOM master secret must be 48 bytes, found \(count)"
            case .unknownLabel(let label): "unknown label \"\(label)\""
            case .tooManySessions(let limit): "more than \(limit) sessions in the key log; this one is dropped"
            }
        }
    }

    public private(set) var sessions: [ClientRandom: Secrets] = [:]
    /// Lines read so far (for numbering warnings of lines appended later).
    public private(set) var linesRead = 0
    /// Limit on the number of sessions kept; past it, new sessions are dropped with a warning.
    public var maxSessions = 1_000_000

    public init() {}

    /// A key log from the whole text at once; warnings name the lines they come from.
    public init(text: String, warnings: inout [Warning]) {
        warnings += add(text: text)
    }

    public func secrets(for random: ClientRandom) -> Secrets? { sessions[random] }

    /// Adds complete lines (a trailing partial line is the caller's to keep until it is finished).
    @discardableResult
    public mutating func add(text: String) -> [Warning] {
        var warnings: [Warning] = []
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            linesRead += 1
            if let problem = add(line: line) { warnings.append(Warning(line: linesRead, problem: problem)) }
        }
        // A text ending in a newline has an empty last piece that is not a line.
        if text.last == "\n" || text.last == "\r\n" { linesRead -= 1 }
        return warnings
    }

    /// Merges another key log (a pcapng Decryption Secrets Block, say) into this one.
    public mutating func merge(_ other: TLSKeyLog) {
        for (random, secrets) in other.sessions {
            var merged = sessions[random] ?? Secrets()
            merged.masterSecret = secrets.masterSecret ?? merged.masterSecret
            merged.clientHandshakeTrafficSecret = secrets.clientHandshakeTrafficSecret ?? merged.clientHandshakeTrafficSecret
            merged.serverHandshakeTrafficSecret = secrets.serverHandshakeTrafficSecret ?? merged.serverHandshakeTrafficSecret
            merged.clientTrafficSecret0 = secrets.clientTrafficSecret0 ?? merged.clientTrafficSecret0
            merged.serverTrafficSecret0 = secrets.serverTrafficSecret0 ?? merged.serverTrafficSecret0
            merged.clientEarlyTrafficSecret = secrets.clientEarlyTrafficSecret ?? merged.clientEarlyTrafficSecret
            sessions[random] = merged
        }
    }

    /// nil when the line was used or is deliberately ignored; otherwise why it was not.
    private mutating func add(line rawLine: Substring) -> Problem? {
        let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
        let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count == 3 else {
            return .fieldCount(fields.count)
        }
        let label = fields[0]
        switch label {
        case "EXPORTER_SECRET", "EARLY_EXPORTER_SECRET", "CLIENT_EARLY_EXPORTER_SECRET":
            return nil  // exporters derive keys for other protocols, never for TLS records
        case "RSA":
            return .rsaNotSupported
        default:
            break
        }
        guard let randomBytes = Hex.decode(fields[1]), let random = ClientRandom(randomBytes) else {
            return .badClientRandom(String(fields[1].prefix(80)))
        }
        guard let secret = Hex.decode(fields[2]), !secret.isEmpty else {
            return .secretNotHex(String(fields[2].prefix(80)))
        }
        var secrets = sessions[random] ?? Secrets()
        switch label {
        case "CLIENT_RANDOM":
            guard secret.count == 48 else { return .masterSecretLength(secret.count) }
            secrets.masterSecret = secret
        case "CLIENT_HANDSHAKE_TRAFFIC_SECRET": secrets.clientHandshakeTrafficSecret = secret
        case "SERVER_HANDSHAKE_TRAFFIC_SECRET": secrets.serverHandshakeTrafficSecret = secret
        case "CLIENT_TRAFFIC_SECRET_0": secrets.clientTrafficSecret0 = secret
        case "SERVER_TRAFFIC_SECRET_0": secrets.serverTrafficSecret0 = secret
        case "CLIENT_EARLY_TRAFFIC_SECRET": secrets.clientEarlyTrafficSecret = secret
        default:
            return .unknownLabel(String(label.prefix(60)))
        }
        if sessions[random] == nil && sessions.count >= maxSessions {
            return .tooManySessions(limit: maxSessions)
        }
        sessions[random] = secrets
        return nil
    }
}

extension TLSKeyLog {
    /// The secrets as NSS key log lines (what a pcapng Decryption Secrets Block carries), sorted by client random.
    public var nssText: String {
        var out = ""
        for (random, secrets) in sessions.sorted(by: { $0.key.description < $1.key.description }) {
            let name = random.description
            func line(_ label: String, _ secret: [UInt8]?) {
                if let secret { out += "\(label) \(name) \(Hex.encode(secret))\n" }
            }
            line("CLIENT_RANDOM", secrets.masterSecret)
            line("CLIENT_EARLY_TRAFFIC_SECRET", secrets.clientEarlyTrafficSecret)
            line("CLIENT_HANDSHAKE_TRAFFIC_SECRET", secrets.clientHandshakeTrafficSecret)
            line("SERVER_HANDSHAKE_TRAFFIC_SECRET", secrets.serverHandshakeTrafficSecret)
            line("CLIENT_TRAFFIC_SECRET_0", secrets.clientTrafficSecret0)
            line("SERVER_TRAFFIC_SECRET_0", secrets.serverTrafficSecret0)
        }
        return out
    }
}
