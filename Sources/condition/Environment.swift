import Foundation
import LinkConditioner
import Sandbox

/// The environment switches `condition` honours, read here and nowhere else; the libraries get directories
/// and settings passed in. TAPKIT_STATE_DIR (profile state), TAPKIT_RUN_DIR (sandbox registry),
/// TAPKIT_RESOLV_CONF (the resolver file sandboxes start from) and TAPKIT_PROFILES_DIR (built-in profiles)
/// exist for tests and unusual installs.
enum ConditionEnvironment {
    static let variables = ProcessInfo.processInfo.environment

    private static func value(_ name: String) -> String? {
        variables[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    static var stateDirectory: URL { value("TAPKIT_STATE_DIR").map { URL(fileURLWithPath: $0) } ?? StateStore.defaultDirectory }
    static var runDirectory: URL { value("TAPKIT_RUN_DIR").map { URL(fileURLWithPath: $0) } ?? SandboxRegistry.defaultRunDirectory }
    static var resolvConfPath: String { value("TAPKIT_RESOLV_CONF") ?? "/etc/resolv.conf" }
    static var builtInProfiles: URL? { value("TAPKIT_PROFILES_DIR").map { URL(fileURLWithPath: $0) } }

    /// What a systemd timer's `condition off` needs to find the same state.
    static var unitEnvironment: [String: String] {
        value("TAPKIT_STATE_DIR").map { ["TAPKIT_STATE_DIR": $0] } ?? [:]
    }

    static var registry: SandboxRegistry { SandboxRegistry(runDirectory: runDirectory) }

    static var sandboxSettings: SandboxSettings {
        let executable = SandboxCLI.executableURL.path
        return SandboxSettings(registry: registry, resolvConfPath: resolvConfPath,
                               watchdogCommand: SandboxWatchdog.command(executable: executable))
    }
}

/// The conditioner with this executable's runner and state directory.
func makeConditioner() -> Conditioner {
    let runner = ProcessRunner()
    return Conditioner(runner: runner, store: StateStore(directory: ConditionEnvironment.stateDirectory,
                                                         namespaceID: NetworkNamespace.currentID()),
                       logger: makeLogger())
}
