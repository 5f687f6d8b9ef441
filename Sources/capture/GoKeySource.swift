import Foundation
import KeySources
import Sandbox
import SystemSupport

/// `-- COMMAND`'s Go key source: probes the command's executable, and each binary its process tree executes, for
/// `crypto/tls.(*Config).writeKeyLog`, and appends the secrets it catches to the sandbox's own key log, the file
/// the decrypting layer already follows (and `-w` embeds). Off, with one line saying why, without root or tracefs.
enum GoKeySource {
    static func start(for sandbox: RunningSandbox, executable: String?) -> GoKeyLogProbe? {
        guard let keyLog = sandbox.tlsKeyLogPath else { return nil }
        guard geteuid() == 0 else {
            printError("Go key source off: reading Go programs' TLS secrets with uprobes needs root (CAP_SYS_ADMIN)")
            return nil
        }
        do {
            let tracefs = try Tracefs.open(mountIfAbsent: true)
            let appender = try KeyLogAppender(path: keyLog)
            let probe = try GoKeyLogProbe(
                tracefs: tracefs, instance: sandbox.identity.tracingInstance, group: sandbox.identity.tracingGroup,
                followPIDs: GoKeyLogProbe.ownThreads(), followExecs: true,
                lines: { appender.append($0) }, notices: { notice in if let words = describe(notice) { printError(words) } })
            if let executable { probe.probe(binary: executable) }
            return probe
        } catch {
            printError("Go key source off: \(error)")
            return nil
        }
    }

    /// The words for a notice; nil for binaries that are not Go at all (shells, curl), which are no news.
    static func describe(_ notice: GoKeyLogProbe.Notice) -> String? {
        switch notice {
        case .probing(let path, let version, let foundIn):
            return "Go key source: \(path) (\(version)): TLS secrets read from crypto/tls (writeKeyLog found in \(foundIn.rawValue))"
        case .notProbed(_, .notGo), .notProbed(_, .notELF):
            return nil
        case .notProbed(let path, let reason):
            return "Go key source: \(path): no secrets from it: \(reason)"
        case .cannotRead(let path, let reason):
            return "Go key source: \(path) cannot be read: \(reason)"
        case .probeRefused(let path, let reason):
            return "Go key source: \(path): \(reason)"
        case .unreadableEvent(let reason):
            return "Go key source: a writeKeyLog call could not be read: \(reason)"
        }
    }
}
