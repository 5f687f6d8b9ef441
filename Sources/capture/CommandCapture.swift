import ArgumentParser
import Foundation
import LinkConditioner
import LiveView
import PacketCapture
import Sandbox
import SystemSupport

/// `capture [OPTIONS] -- COMMAND [ARGS...]`: run one command in a private network namespace and capture exactly
/// its traffic, on the host end of the sandbox's veth pair (see docs/sandbox.md).
struct CommandOptions: ParsableArguments {
    @Option(name: .customLong("profile"), help: ArgumentHelp(
        "With -- COMMAND: also condition the command's link with this profile (see `condition list`).", valueName: "name"))
    var profile: String?

    @Option(name: .customLong("profiles"), help: ArgumentHelp(
        "With --profile: a directory of *.json profiles that override built-ins of the same name.", valueName: "dir"))
    var profilesDirectory: String?

    @Flag(name: .customLong("no-quic"), help: "With -- COMMAND: reject its UDP to port 443, so QUIC clients fall back to TCP.")
    var noQUIC = false

    /// Everything after `--` (see `CommandArguments`).
    @Option(name: .customLong(CommandArguments.optionName), parsing: .remaining, help: .hidden)
    var command: [String] = []

    /// `liveView`: `--ui` was given, whose panel lists the `--profiles` files too.
    func validate(source: SourceOptions, liveView: Bool) throws {
        if command.isEmpty {
            if profile != nil { throw ValidationError("--profile conditions a command: add -- COMMAND [ARGS...].") }
            if profilesDirectory != nil && !liveView {
                throw ValidationError("--profiles only applies with --profile and -- COMMAND, or --ui.")
            }
            if noQUIC { throw ValidationError("--no-quic applies to a command: add -- COMMAND [ARGS...].") }
            return
        }
        if source.interface != nil || source.readFile != nil {
            throw ValidationError("-- COMMAND captures the command's own interface; it cannot be combined with -i or -r.")
        }
        if profilesDirectory != nil && profile == nil && !liveView {
            throw ValidationError("--profiles only applies with --profile or --ui.")
        }
    }
}

/// `capture OPTIONS -- COMMAND [ARGS...]`. ArgumentParser cannot have a positional list (the command) after
/// another (the filter words), so the command is handed over as a hidden option that takes everything after it.
/// Only the part before `--` gets tcpdump's attached-option splitting (`-c10`), never the command's own
/// arguments. With -i, -r or -D before it, `--` keeps its old meaning: filter words follow.
enum CommandArguments {
    static let optionName = "command-after-terminator"

    static func split(_ arguments: [String], normalizing: ([String]) -> [String]) -> [String] {
        guard let terminator = arguments.firstIndex(of: "--") else { return normalizing(arguments) }
        let options = normalizing(Array(arguments[..<terminator]))
        let rest = Array(arguments[(terminator + 1)...])
        if options.contains(where: { ["-i", "-r", "-D", "--list-interfaces"].contains($0) }) || rest.isEmpty {
            return options + ["--"] + rest
        }
        return options + ["--\(optionName)"] + rest
    }
}

/// The environment switches `capture` honours for sandboxes, read here and nowhere else (as `condition` does):
/// TAPKIT_RUN_DIR (sandbox registry), TAPKIT_RESOLV_CONF (resolver file), TAPKIT_PROFILES_DIR (built-in profiles).
enum CaptureEnvironment {
    static let variables = ProcessInfo.processInfo.environment

    private static func value(_ name: String) -> String? { variables[name].flatMap { $0.isEmpty ? nil : $0 } }

    static var registry: SandboxRegistry {
        SandboxRegistry(runDirectory: value("TAPKIT_RUN_DIR").map { URL(fileURLWithPath: $0) } ?? SandboxRegistry.defaultRunDirectory)
    }

    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static var sandboxSettings: SandboxSettings {
        let executable = executable
        return SandboxSettings(registry: registry, resolvConfPath: value("TAPKIT_RESOLV_CONF") ?? "/etc/resolv.conf",
                               watchdogCommand: SandboxWatchdog.command(executable: executable))
    }

    static var builtInProfiles: URL? { value("TAPKIT_PROFILES_DIR").map { URL(fileURLWithPath: $0) } }
}

/// The command under capture: started once the capture handle is live, waited for on a thread of its own that
/// forwards signals to it, and the capture stopped shortly after it ends (so its last packets are in).
final class CommandCapture: @unchecked Sendable {
    let sandbox: RunningSandbox
    private let catcher: SignalCatcher
    private let finished = DispatchSemaphore(value: 0)
    private var started = false
    private(set) var status: ExitStatus = .exited(0)

    /// How long after the command's exit the capture goes on, for packets still in flight (the last ACKs, FINs).
    static let drainDelay: useconds_t = 250_000

    init(sandbox: RunningSandbox, catcher: SignalCatcher) {
        self.sandbox = sandbox
        self.catcher = catcher
    }

    var interface: String { sandbox.identity.hostInterface }

    func start(stopping handle: CaptureHandle) throws {
        let identity = sandbox.identity
        printError("running \(shellWords(sandbox.options.command)) in sandbox \(identity.id) (interface \(identity.hostInterface), "
                   + "address \(identity.namespaceIPv4), profile \(sandbox.record.profile))"
                   + (sandbox.tlsKeyLogPath.map { "; TLS keys logged to \($0)" } ?? ""))
        let child = try sandbox.startCommand()
        started = true
        let thread = Thread { [self] in
            status = catcher.waitForwarding(to: child)
            sandbox.commandEnded()
            usleep(Self.drainDelay)
            handle.stop()
            finished.signal()
        }
        thread.start()
    }

    /// Waits for the command (it goes on after a `-c` count is reached); returns its status.
    func waitForCommand() -> ExitStatus {
        if started { finished.wait() }
        return status
    }
}

extension CaptureCommand {
    /// `-- COMMAND`: the sandbox, optionally conditioned, then the usual capture on its interface.
    func captureCommand() throws {
        let environment = CaptureEnvironment.variables
        // As a shell would, before anything is built: 127 for a command that is not there, 126 for one that
        // cannot be executed.
        let lookup = ExecutableLookup.resolve(commandOptions.command[0], searchPath: environment["PATH"] ?? "/usr/bin:/bin")
        if let status = lookup.shellStatus, let message = lookup.message {
            printError(message)
            throw ExitCode(status)
        }
        if tlsOptions.keyLogFile != nil {
            printError("-- COMMAND logs the command's own TLS secrets and decrypts with them; leave --keylog out.")
            throw ExitCode(64)
        }
        let profile: Profile?
        do {
            profile = try commandOptions.profile.map { name in
                let catalog = try ProfileCatalog.standard(
                    extra: commandOptions.profilesDirectory.map { URL(fileURLWithPath: $0) },
                    executable: URL(fileURLWithPath: CaptureEnvironment.executable),
                    builtIn: CaptureEnvironment.builtInProfiles)
                return try catalog.profileWithSettings(named: name, for: "capture --profile")
            }
        } catch {
            printError("\(error)")
            throw ExitCode(Self.setupFailureStatus)
        }
        let catcher = try SignalCatcher(childExits: true)
        let runner = ProcessRunner()
        let options = SandboxOptions(command: commandOptions.command, label: profile?.name ?? "none",
                                     environment: environment,
                                     invokingUser: InvokingUser.fromSudo(environment: environment),
                                     tlsKeyLog: true, blockQUIC: commandOptions.noQUIC)
        let sandbox: RunningSandbox
        do {
            sandbox = try RunningSandbox(options, settings: CaptureEnvironment.sandboxSettings, runner: runner)
        } catch {
            printError("cannot run the command in a sandbox: \(error)")
            throw ExitCode(Self.setupFailureStatus)
        }
        // As `condition run` does: DNS answered by TapKit where the profile needs it, then the profile applied.
        var dns: SandboxDNSAnswering?
        do {
            if let profile {
                let conditioned = try SandboxConditioning.condition(sandbox, for: profile, runner: runner)
                dns = conditioned.dns
                for notice in conditioned.notices { printError(notice) }
            }
        } catch {
            sandbox.remove()
            printError("cannot condition the sandbox: \(error)")
            throw ExitCode(Self.setupFailureStatus)
        }
        var liveView: LiveView?
        if liveViewOptions.ui != nil {
            let (catalog, builtIn) = liveViewCatalog()
            let target = SandboxConditionerTarget(sandboxID: sandbox.identity.id, registry: CaptureEnvironment.registry,
                                                  initialProfile: profile?.name)
            do {
                liveView = try startLiveView(source: .command(commandOptions.command),
                                             conditioner: ConditionerPanel(target: target, catalog: catalog,
                                                                           builtInDirectory: builtIn))
            } catch {
                _ = dns?.stop()
                sandbox.remove()
                throw error
            }
        }
        // Go programs write no key log unless told to: their secrets come from uprobes instead (docs/tls.md).
        var executable: String?
        if case .found(let path) = lookup { executable = path }
        let goKeys = GoKeySource.start(for: sandbox, executable: executable)
        let command = CommandCapture(sandbox: sandbox, catcher: catcher)
        // The command's lines and ours interleave on the terminal: write ours as they come.
        var live = self
        live.output.lineBuffered = true
        // The command's own key log, followed as it grows, decrypts its TLS.
        live.tlsOptions.keyLogFile = sandbox.tlsKeyLogPath
        do {
            try live.capture(command: command, liveView: liveView)
        } catch {
            goKeys?.stop()
            sandbox.remove() // stops the command too
            _ = command.waitForCommand()
            _ = dns?.stop()
            if let liveView { stopLiveView(liveView) }
            throw error
        }
        let status = command.waitForCommand()
        goKeys?.stop()
        sandbox.remove()
        if let dns { printError(dns.stop()) }
        if let liveView {
            liveView.conditioner.close(reason: "the command ended and its sandbox was removed")
            serveUntilStopped(liveView)
        }
        // Under sudo, a saved capture belongs to the user who asked for it, not to root.
        if let file = output.writeFile, file != "-" { options.invokingUser?.give(file) }
        throw ExitCode(status.shellCode)
    }

    /// The sandbox could not be made and the command never ran (as `condition run`, `docker run`, `env`).
    static let setupFailureStatus: Int32 = 125
}

private func shellWords(_ arguments: [String]) -> String {
    arguments.map { word in
        word.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@%+,".contains($0) } && !word.isEmpty
            ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }.joined(separator: " ")
}
