import ArgumentParser
import Foundation
import LinkConditioner
import LiveView
import Sandbox
import SystemSupport

/// `--ui [ADDR:PORT]`: the live view in the browser (docs/liveview.md). ArgumentParser has no option whose value
/// may be left out, so `LiveViewOptions.normalize` turns `--ui` into `--ui=` (the default address) or, when an
/// address follows, `--ui=ADDR:PORT`, before parsing.
struct LiveViewOptions: ParsableArguments {
    @Option(name: .customLong("ui"), help: ArgumentHelp(
        "Serve a live view of the exchanges (and the conditioner's panel) to a browser on this address "
            + "(default 127.0.0.1:\(LiveViewServer.Binding.defaultPort), or the next free port); prints the URL to open. "
            + "Implies --http. With -r FILE it stays up until Ctrl-C.", valueName: "[addr:port]"))
    var ui: String?

    var binding: LiveViewServer.Binding? { ui.flatMap(LiveViewServer.Binding.init(parsing:)) }

    func validate(statsOrFollow: String?) throws {
        guard let ui else { return }
        guard LiveViewServer.Binding(parsing: ui) != nil else {
            throw ValidationError("--ui \(ui): give an address and port like 127.0.0.1:8383 or [::1]:8383, a port, or nothing.")
        }
        if let mode = statsOrFollow {
            throw ValidationError("--ui shows exchanges (the --http view); it cannot be combined with \(mode).")
        }
    }

    /// `--ui` with no address becomes `--ui=`; `--ui ADDR:PORT` becomes `--ui=ADDR:PORT`; `--http` is added when
    /// missing, since the view shows the HTTP engine's exchanges.
    static func normalize(_ arguments: [String]) -> [String] {
        guard let position = arguments.firstIndex(of: "--ui") else {
            if arguments.contains(where: { $0.hasPrefix("--ui=") }) && !arguments.contains("--http") {
                return arguments + ["--http"]
            }
            return arguments
        }
        var result = Array(arguments[..<position])
        var rest = Array(arguments[(position + 1)...])
        if let next = rest.first, !next.hasPrefix("-"), looksLikeAddress(next) {
            result.append("--ui=\(next)")
            rest.removeFirst()
        } else {
            result.append("--ui=")
        }
        result += rest
        if !result.contains("--http") { result.append("--http") }
        return result
    }

    /// A port, `ADDR:PORT`, `[V6]:PORT` or an address literal; not a filter word such as `tcp` or `port`.
    private static func looksLikeAddress(_ word: String) -> Bool {
        LiveViewServer.Binding(parsing: word) != nil
    }
}

/// The conditioner targets the panel switches, through the same library code as `condition`.
struct SandboxConditionerTarget: ConditionerTarget {
    let sandboxID: String
    let registry: SandboxRegistry
    let initialProfile: String?
    var kind: String { "sandbox" }
    var needsConfirmation: Bool { false }

    func apply(_ profile: Profile?) throws {
        // Off is the unconditioned profile: the switch plan removes what the previous one added.
        _ = try SandboxConditioning.switchProfile(to: profile ?? Profile(name: "none"), sandbox: sandboxID,
                                                  registry: registry, runner: ProcessRunner())
    }
}

extension CaptureCommand {
    /// The profiles the panel lists: built-ins and the user's files, as `condition list` shows them.
    func liveViewCatalog() -> (ProfileCatalog, URL?) {
        let executable = URL(fileURLWithPath: CaptureEnvironment.executable)
        let builtIn = ProfileCatalog.builtInDirectory(executable: executable, override: CaptureEnvironment.builtInProfiles)
        let catalog = (try? ProfileCatalog.standard(extra: commandOptions.profilesDirectory.map { URL(fileURLWithPath: $0) },
                                                    executable: executable, builtIn: CaptureEnvironment.builtInProfiles))
            ?? ProfileCatalog()
        return (catalog, builtIn)
    }

    /// Starts the server and prints the URL to open (standard error, beside tcpdump's first line).
    func startLiveView(source: LiveViewSource, conditioner: ConditionerPanel) throws -> LiveView? {
        guard let binding = liveViewOptions.binding else { return nil }
        let filter = try httpOptions.makeFilter()
        let view: LiveView
        do {
            view = try LiveView(binding: binding, source: source, conditioner: conditioner,
                                include: { filter.matches($0) })
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        printError("live view: \(view.url)", prefixed: false)
        return view
    }

    /// Keeps the view up after its source ended (a file, a command) until Ctrl-C or SIGTERM, then stops it.
    func serveUntilStopped(_ view: LiveView) {
        view.sourceEnded()
        printError("live view: still serving \(view.url) (Ctrl-C to stop)", prefixed: false)
        if let catcher = try? SignalCatcher(signals: [SIGINT, SIGTERM, SIGHUP]) {
            _ = catcher.wait(until: .distantFuture)
        }
        view.stop()
    }
}
