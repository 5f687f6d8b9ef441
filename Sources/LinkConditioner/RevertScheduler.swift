import Foundation
import SystemSupport

/// Arranges for `condition off` to run at a deadline in a process of its own, so `--for` still
/// reverts when the `condition` process that applied the profile is killed.
public enum RevertScheduler {
    public enum Mechanism: Sendable, Equatable {
        /// A transient systemd timer (`systemd-run --on-active`), when systemd runs the machine and we are in
        /// its network namespace (a unit started by systemd would not see a private namespace's interfaces).
        case systemdTimer(unit: String)
        /// A detached watchdog: `setsid -f condition watchdog ...`, in its own session, no terminal, no parent.
        case watchdogProcess
    }

    /// The arguments that turn the profile off when run at the deadline.
    /// `extra` names the network namespace (`--netns NAME`, `--pid PID`) when the profile is in another one.
    public static func offArguments(executable: String, interface: InterfaceName, token: String,
                                    extra: [String] = []) -> [String] {
        [executable, "off", "-i", interface.rawValue, "--token", token] + extra
    }

    public static func watchdogArguments(executable: String, interface: InterfaceName, token: String, deadline: Date,
                                         extra: [String] = []) -> [String] {
        [executable, "watchdog", "-i", interface.rawValue, "--token", token,
         "--at", String(format: "%.3f", deadline.timeIntervalSince1970)] + extra
    }

    public static func systemdAvailable(runner: any CommandRunner) -> Bool {
        FileManager.default.fileExists(atPath: "/run/systemd/system") && NetworkNamespace.isInitialNamespace(runner: runner)
            && ProcessRunner.locate("systemd-run") != nil
    }

    /// Starts the revert and says how. `unitEnvironment` is set for a systemd timer's `condition off` (a
    /// detached watchdog inherits this process's environment anyway), e.g. a state directory the executable
    /// was told about.
    public static func schedule(interface: InterfaceName, token: String, deadline: Date,
                                executable: String = currentExecutable(), extra: [String] = [],
                                runner: any CommandRunner, unitEnvironment: [String: String] = [:]) throws -> Mechanism {
        if systemdAvailable(runner: runner) {
            let unit = "tapkit-condition-\(interface.rawValue)-\(token.prefix(8))"
            let seconds = max(0.001, deadline.timeIntervalSinceNow)
            var arguments = ["systemd-run", "--quiet", "--collect", "--unit", unit,
                             "--on-active=\(String(format: "%.3f", seconds))s", "--timer-property=AccuracySec=10ms"]
            arguments += unitEnvironment.sorted { $0.key < $1.key }.map { "--setenv=\($0.key)=\($0.value)" }
            arguments += offArguments(executable: executable, interface: interface, token: token, extra: extra)
            if (try? runner.run(arguments))?.status == 0 { return .systemdTimer(unit: unit) }
        }
        guard let setsid = ProcessRunner.locate("setsid") else {
            throw ConditionerError.unexpectedOutput("cannot start the --for watchdog: setsid not found (install util-linux)")
        }
        // The watchdog must hold nothing of ours: an inherited pipe or socket would keep whoever started us
        // (a terminal session, a test harness waiting for EOF) attached until the deadline.
        ProcessTable.markDescriptorsCloseOnExec()
        // -f: fork, so the watchdog is never our child and survives us in a session of its own.
        let arguments = [setsid, "-f"] + watchdogArguments(executable: executable, interface: interface, token: token,
                                                           deadline: deadline, extra: extra)
        let status: ExitStatus
        do {
            status = try ProcessSpawner.run(arguments, captureOutput: false).status
        } catch {
            throw ConditionerError.unexpectedOutput("cannot start the --for watchdog: \(error)")
        }
        guard status == .exited(0) else {
            throw ConditionerError.unexpectedOutput("cannot start the --for watchdog: setsid exited \(status.shellCode)")
        }
        return .watchdogProcess
    }

    /// Stops a revert that is no longer needed (the profile was turned off early, by Ctrl-C): a systemd timer
    /// would otherwise stay listed until its deadline. A detached watchdog needs nothing: it sees its token gone
    /// within half a second and exits.
    public static func cancel(_ mechanism: Mechanism, runner: any CommandRunner) {
        if case .systemdTimer(let unit) = mechanism {
            _ = try? runner.run(["systemctl", "stop", unit + ".timer"])
        }
    }

    /// This program's own path, so the revert runs the same `condition`.
    public static func currentExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

/// `3s`, `500ms`, `2m`, `1h`, `1m30s` or plain seconds (`90`).
public enum DurationParser {
    public static func seconds(_ text: String) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { return nil }
        if let plain = Double(trimmed) { return plain > 0 && plain.isFinite ? plain : nil }
        var total: TimeInterval = 0
        var number = ""
        var index = trimmed.startIndex
        var sawUnit = false
        while index < trimmed.endIndex {
            let character = trimmed[index]
            if character.isNumber || character == "." {
                number.append(character)
                index = trimmed.index(after: index)
                continue
            }
            var unit = ""
            while index < trimmed.endIndex, trimmed[index].isLetter {
                unit.append(trimmed[index])
                index = trimmed.index(after: index)
            }
            guard let value = Double(number) else { return nil }
            switch unit {
            case "ms": total += value / 1000
            case "s", "sec": total += value
            case "m", "min": total += value * 60
            case "h": total += value * 3600
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit, total > 0, total.isFinite else { return nil }
        return total
    }
}
