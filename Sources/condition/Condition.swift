import ArgumentParser
import Foundation
import LinkConditioner
import Logging
import Sandbox
import SystemSupport
import Synchronization

@main
struct Condition: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "condition",
        abstract: "Apple's Network Link Conditioner for Linux: named link profiles applied with tc.",
        discussion: """
            Profiles set bandwidth, delay, jitter and loss per direction, and an extra delay for DNS. \
            The uplink is shaped on the interface's egress; the downlink on an ifb device that the \
            interface's ingress is redirected to. Built-in profiles can be overridden by name from \
            ~/.config/tapkit/profiles/ or --profiles DIR.
            """,
        version: "condition (TapKit) \(TapKitVersion.current)",
        subcommands: [List.self, Show.self, Apply.self, Off.self, Status.self, Plan.self, Doctor.self, Watchdog.self,
                      RunCommand.self, SandboxesCommand.self, ImportCommand.self, ExportCommand.self,
                      EngineCommand.self, SandboxEngineCommand.self]
    )

    static func main() async {
        // The detached watchdog of a sandbox `run` made, started as Sandbox starts it (as `capture -- COMMAND`'s).
        if SandboxWatchdog.runIfAsked(Array(CommandLine.arguments.dropFirst())) { return }
        await main(RunCommand.normalizeUI(Array(CommandLine.arguments.dropFirst())))
    }
}

struct ProfileOptions: ParsableArguments {
    @Option(name: .customLong("profiles"), help: ArgumentHelp(
        "A directory of *.json profiles that override built-ins of the same name.", valueName: "dir"))
    var directory: String?

    /// Every profile; each file that could not be used is named in a warning on standard error, except one that may
    /// be `name` (asking for it is then the error, from `ProfileCatalog.profile(named:)`).
    func catalog(for name: String? = nil, warnings: Bool = true) throws -> ProfileCatalog {
        let executable = URL(fileURLWithPath: RevertScheduler.currentExecutable())
        let catalog = try ProfileCatalog.standard(extra: directory.map { URL(fileURLWithPath: $0) }, executable: executable,
                                                  builtIn: ConditionEnvironment.builtInProfiles,
                                                  environment: ConditionEnvironment.variables)
        for bad in catalog.badFiles where warnings && name.map({ !bad.mayBe($0) }) ?? true {
            // A command may read the catalog more than once (apply: the schedule check, then the profile); each
            // bad file is still one warning.
            let message = "condition: warning: skipped \(bad.error)\n"
            guard warnedBadFiles.withLock({ $0.insert(message).inserted }) else { continue }
            FileHandle.standardError.write(Data(message.utf8))
        }
        return catalog
    }
}

/// The bad-file warnings this process has printed.
private let warnedBadFiles = Mutex<Set<String>>([])

struct InterfaceOption: ParsableArguments {
    @Option(name: [.short, .customLong("interface")], help: ArgumentHelp("The network interface.", valueName: "iface"))
    var interface: String

    func validate() throws {
        do { _ = try InterfaceName(interface) } catch { throw ValidationError(error.description) }
    }

    var name: InterfaceName { get throws { try InterfaceName(interface) } }
}

/// Errors from the library already say what to do; print them as they are and exit 1.
struct ReportedError: Error, CustomStringConvertible {
    var description: String
}

func report<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CleanExit {
        throw error
    } catch {
        FileHandle.standardError.write(Data("condition: \(error)\n".utf8))
        throw ExitCode.failure
    }
}

func makeLogger() -> Logger {
    var logger = Logger(label: "tapkit.condition") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .notice
    return logger
}

func shellQuoted(_ arguments: [String]) -> String {
    arguments.map { argument in
        let safe = argument.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_./:%=@+,".unicodeScalars.contains($0)
        }
        return safe && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }.joined(separator: " ")
}
