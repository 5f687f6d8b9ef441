import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// The detached watchdog of a sandbox (see `SandboxReaper.watch`), started the same way by every executable that
/// makes sandboxes (`capture -- COMMAND`, `condition run`): the executable itself, run again as
/// `EXECUTABLE __sandbox-watchdog ID REGISTRY_DIRECTORY`, recognised before any argument parsing.
public enum SandboxWatchdog {
    static let argument = "__sandbox-watchdog"

    /// `SandboxSettings.watchdogCommand` for `executable`.
    public static func command(executable: String) -> @Sendable (_ id: String, _ registryDirectory: String) -> [String] {
        { id, directory in [executable, argument, id, directory] }
    }

    /// When `arguments` (without the program name) are a watchdog's, watches that sandbox until it is gone or its
    /// owner died (then removes it) and returns true; otherwise returns false at once.
    public static func runIfAsked(_ arguments: [String]) -> Bool {
        guard arguments.count == 3, arguments[0] == argument else { return false }
        // Started in a session of its own, so no terminal signal reaches it; ignore them anyway.
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        let registry = SandboxRegistry(directory: URL(fileURLWithPath: arguments[2]))
        SandboxReaper(registry: registry, runner: ProcessRunner()).watch(id: arguments[1])
        return true
    }
}
