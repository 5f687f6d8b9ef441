import ArgumentParser
import Foundation
import TLS

/// `--keylog`: TLS decryption for the `--http` view (see docs/tls.md).
struct TLSOptions: ParsableArguments {
    @Option(name: .customLong("keylog"),
            help: ArgumentHelp("With --http: decrypt TLS with this NSS key log (what SSLKEYLOGFILE makes curl, browsers and Python write). Default: $SSLKEYLOGFILE. Live, new lines are read as the file grows.",
                               valueName: "file"))
    var keyLogFile: String?

    @Option(name: .customLong("keylog-wait"),
            help: ArgumentHelp("Live, with a key log: how long TLS and QUIC records may wait for a key the program has not logged yet, from the first record that waited (records past the in-memory bound wait in a temporary file). Past it the connection is not decrypted.",
                               valueName: "seconds"))
    var keyWaitSeconds: Double = 2

    func validate() throws {
        guard keyWaitSeconds >= 0, keyWaitSeconds <= 3600 else {
            throw ValidationError("--keylog-wait takes 0 to 3600 seconds, not \(keyWaitSeconds)")
        }
    }

    /// How the engine holds records for keys: the bound, and where records past the in-memory bound go (TMPDIR,
    /// read here in the executable, else /tmp).
    func holding(environment: [String: String] = ProcessInfo.processInfo.environment) -> (wait: Duration, directory: String) {
        let directory = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return (.milliseconds(Int64((keyWaitSeconds * 1000).rounded())), directory)
    }

    /// The key log to use: --keylog, else SSLKEYLOGFILE from the environment (read here, in the executable).
    func keyLogPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> (path: String, fromEnvironment: Bool)? {
        if let keyLogFile { return (keyLogFile, false) }
        if let fromEnvironment = environment["SSLKEYLOGFILE"], !fromEnvironment.isEmpty { return (fromEnvironment, true) }
        return nil
    }

    /// Opens the key log for a capture: follow it for new lines when capturing live. nil when none is configured
    /// (or SSLKEYLOGFILE names a file that does not exist yet and we read a file: nothing can be added later).
    /// Secrets embedded in the file being read (pcapng Decryption Secrets Blocks) are added to the key log, or are
    /// the key log when none is given.
    func openKeySource(live: Bool, readFile: String?) throws -> TLSKeySource? {
        var embedded: TLSKeyLog?
        if let readFile, readFile != "-" {
            var warnings: [PcapngSecrets.Warning] = []
            embedded = PcapngSecrets.read(path: readFile, warnings: &warnings)
            for warning in warnings.prefix(20) { printError("\(readFile): \(warning)") }
        }
        guard let source = try openKeyLogFile(live: live) else {
            return embedded.map { TLSKeySource(keyLog: $0) }
        }
        if let embedded { source.merge(embedded) }
        return source
    }

    /// The key log's secrets for a pcapng file written with -w, as they become known (its own reader of the key log:
    /// the decrypting layer's may be on another thread); nil without a key log. `reporting`: say what is wrong with
    /// the key log (not when `openKeySource` has said it already).
    func secretsToEmbed(live: Bool, readFile: String?, reporting: Bool) throws -> SecretsToEmbed? {
        var embedded: TLSKeyLog?
        if let readFile, readFile != "-" {
            var ignored: [PcapngSecrets.Warning] = []
            embedded = PcapngSecrets.read(path: readFile, warnings: &ignored)
        }
        guard let source = try openKeyLogFile(live: live, reporting: reporting) ?? embedded.map(TLSKeySource.init) else {
            return nil
        }
        if let embedded { source.merge(embedded) }
        return SecretsToEmbed(keys: source)
    }

    private func openKeyLogFile(live: Bool, reporting: Bool = true) throws -> TLSKeySource? {
        guard let (path, fromEnvironment) = keyLogPath() else { return nil }
        if fromEnvironment && !live && !FileManager.default.fileExists(atPath: path) {
            if reporting { printError("SSLKEYLOGFILE names \(path), which does not exist; TLS is not decrypted") }
            return nil
        }
        if live && !FileManager.default.fileExists(atPath: path) {
            // A program about to start will create it; follow it from empty. If it cannot be created, opening it
            // below says so.
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        var warnings: [TLSKeyLog.Warning] = []
        let source: TLSKeySource
        do {
            source = try TLSKeySource(path: path, follow: live, initialWarnings: &warnings)
        } catch {
            printError("\(error)\(fromEnvironment ? " (from SSLKEYLOGFILE)" : "")")
            throw ExitCode(1)
        }
        guard reporting else { return source }
        for warning in warnings.prefix(20) { printError("\(path): \(warning)") }
        if warnings.count > 20 { printError("\(path): \(warnings.count - 20) more bad lines not shown") }
        return source
    }
}
