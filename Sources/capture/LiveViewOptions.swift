import ArgumentParser
import Foundation
import LinkConditioner
import LiveView
import Sandbox
import SystemSupport

/// `--ui [ADDR:PORT]`: the live view in the browser (docs/liveview.md). ArgumentParser has no option whose value
/// may be left out (nor takes an empty one), so `LiveViewOptions.normalize` turns `--ui` into `--ui=default` (the
/// default address) or, when an address follows, `--ui=ADDR:PORT`, before parsing.
struct LiveViewOptions: ParsableArguments {
    @Option(name: .customLong("ui"), help: ArgumentHelp(
        "Serve a live view of the exchanges (and the conditioner's panel) to a browser on this address "
            + "(default 127.0.0.1:\(LiveViewBinding.defaultPort), or the next free port); prints the URL to open. "
            + "Implies --http. With -r FILE it stays up until Ctrl-C.", valueName: "[addr:port]"))
    var ui: String?

    var binding: LiveViewBinding? { ui.flatMap(LiveViewBinding.init(parsing:)) }

    func validate(statsOrFollow: String?) throws {
        guard let ui else { return }
        if case .failure(let problem) = LiveViewBinding.parse(ui) {
            throw ValidationError("--ui \(ui): \(problem); give an address and port like 127.0.0.1:8383 or [::1]:8383, "
                                  + "a port, or nothing.")
        }
        if let mode = statsOrFollow {
            throw ValidationError("--ui shows exchanges (the --http view); it cannot be combined with \(mode).")
        }
    }

    /// `--ui` with no address becomes `--ui=default`; `--ui ADDR:PORT` becomes `--ui=ADDR:PORT`; `--http` is added when
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
        if let next = rest.first, !next.hasPrefix("-"), !next.isEmpty, meantAsAddress(next) {
            result.append("--ui=\(next)")
            rest.removeFirst()
        } else {
            result.append("--ui=\(LiveViewBinding.defaultSpelling)")
        }
        result += rest
        if !result.contains("--http") { result.append("--http") }
        return result
    }

    /// A port, `ADDR:PORT`, `[V6]:PORT` or an address literal, or a word written as one of them that is wrong
    /// (`99999`, `localhost:8080`, `localhost`), which `validate` then names; never a filter word such as `tcp` or
    /// `port`. No filter starts with a number, a colon, a bracket or `localhost`, so none is taken from the filter.
    private static func meantAsAddress(_ word: String) -> Bool {
        LiveViewBinding(parsing: word) != nil || word == "localhost" || word.contains(":") || word.hasPrefix("[")
            || word.allSatisfy { ("0"..."9").contains($0) || $0 == "." }
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

/// `-i IFACE --ui`: the panel applies profiles to the interface with the conditioner `condition apply` uses (its
/// state directory, locks, plans and restore), only after the page's confirmation; when the view stops, the
/// interface gets back what it had when the view started.
struct InterfaceConditionerTarget: ConditionerTarget {
    let interface: InterfaceName
    let conditioner: Conditioner
    /// What `condition` had applied here when the view started.
    let initial: Profile?
    var kind: String { "interface" }
    var needsConfirmation: Bool { true }
    var initialProfile: String? { initial?.name }

    init(interface name: String) throws {
        interface = try InterfaceName(name)
        let directory = CaptureEnvironment.variables["TAPKIT_STATE_DIR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        let store = StateStore(directory: directory ?? StateStore.defaultDirectory)
        // The user-space engine (delay and loss without netem) runs as `condition __engine`, beside this executable.
        let engine = URL(fileURLWithPath: CaptureEnvironment.executable).deletingLastPathComponent()
            .appendingPathComponent("condition").path
        conditioner = Conditioner(runner: ProcessRunner(), store: store, engineExecutable: engine)
        initial = (try? store.load(interface))?.profile
    }

    func apply(_ profile: Profile?) throws {
        if let profile {
            // The page's "confirm": true is the confirmation `condition apply --yes` asks for.
            _ = try conditioner.apply(profile, to: interface, options: ApplyOptions(confirmed: true))
        } else {
            _ = try conditioner.off(interface)
        }
    }

    func restore() throws { try apply(initial) }
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
        stopLiveView(view)
    }

    func stopLiveView(_ view: LiveView) {
        if let problem = view.stop() { printError(problem) }
    }

    /// The panel for `-i`: the interface, when it is one that can be conditioned.
    func interfacePanel(_ name: String) -> ConditionerPanel {
        let (catalog, builtIn) = liveViewCatalog()
        do {
            return ConditionerPanel(target: try InterfaceConditionerTarget(interface: name), catalog: catalog,
                                    builtInDirectory: builtIn)
        } catch {
            return ConditionerPanel(unavailable: "\(name) cannot be conditioned: \(error)", catalog: catalog,
                                    builtInDirectory: builtIn)
        }
    }
}
