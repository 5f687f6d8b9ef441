import Foundation
import Sandbox
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// The user-space engine of one sandbox, `condition __sandbox-engine --sandbox ID --registry DIR`, for kernels
/// without netem. `SandboxConditioning` runs it (the starter, in the host's namespace) when a sandbox first needs
/// delay or loss; the starter starts its supervisor (`--role supervise`, `SandboxEngineSupervisor`) inside the
/// sandbox's namespace, detached in a session of its own, and returns once the supervisor's child, the engine itself
/// (`--role worker`), has bound its queues, or fails saying why.
///
/// The worker follows the profile in the sandbox's record (`SandboxConditions`) and stops when the record goes,
/// when its owner (`condition run`, `capture`) is dead, when its veth end is gone, or when the record no longer says
/// the engine carries the profile (a failed switch put the old record back). The sandbox's teardown stops both
/// processes with every other process in the namespace before the namespace is deleted, so they never keep the
/// namespace alive; the engine's table and queue rules are in the namespace and go with it. If the worker dies
/// (a crash, `kill -9`), its queue rules let packets through unheld (`--queue-bypass`) until the supervisor has
/// started it again, a fraction of a second later; if that keeps happening the supervisor gives up and says so,
/// and then `condition sandboxes` says it is not running and the next switch (`apply --sandbox`, the live view)
/// starts it again.
public enum SandboxEngine {
    public static let commandName = "__sandbox-engine"

    /// The three processes of one `condition __sandbox-engine` command line.
    public enum Role: String, Sendable {
        /// In the host's namespace: starts the supervisor in the sandbox's and waits until the engine has bound its queues.
        case start
        /// In the sandbox's namespace: runs the worker as its child and starts it again when it dies.
        case supervise
        /// The engine itself.
        case worker
    }

    /// What the engine of a sandbox with `record` applies: nil when its record does not name the user-space engine.
    public static func profile(_ record: SandboxRecord) -> Profile? {
        guard let conditions = SandboxConditions(recordText: record.conditions), conditions.engine == .userspace else { return nil }
        return SandboxConditioning.treeProfile(conditions.profile, answersDNS: record.answersDNS)
    }

    /// `executable __sandbox-engine --sandbox ID --registry DIR --role ROLE`.
    static func command(_ role: Role, id: String, registry: SandboxRegistry, executable: String) -> [String] {
        [executable, commandName, "--sandbox", id, "--registry", registry.directory.path, "--role", role.rawValue]
    }

    /// Starts the supervisor (and through it the worker) inside the sandbox's namespace and waits (at most 10 s)
    /// until the worker has bound its queues.
    public static func start(id: String, registry: SandboxRegistry, executable: String) throws {
        guard let record = registry.record(id: id) else { throw SandboxError.unknownSandbox(id) }
        try? FileManager.default.removeItem(at: registry.engineReportFile(id: id))
        let supervisor = try ProcessSpawner.spawn(
            ["ip", "netns", "exec", record.identity.namespace] + command(.supervise, id: id, registry: registry, executable: executable),
            options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null, grouping: .newSession))
        try waitUntilBound(supervisor.pid, id: id, registry: registry)
    }

    /// Waits (at most 10 s) until the engine that `spawned` is, or supervises, has bound its queues: its report names
    /// `spawned` (the worker's reports carry its supervisor's pid as well as its own). Throws the engine's error, or
    /// why it never said anything.
    static func waitUntilBound(_ spawned: pid_t, id: String, registry: SandboxRegistry) throws(EngineStartError) {
        let deadline = Date().addingTimeInterval(10)
        while true {
            // Its exit first, its report then: a report written just before the exit still counts.
            let exit = ProcessSpawner.waitForExit(spawned, timeout: 0.005)
            if let state = report(id: id, registry: registry), state.pid == spawned || state.worker == spawned {
                if let error = state.error { throw EngineStartError(reason: error) }
                return
            }
            if let exit { throw EngineStartError(reason: "it stopped at once (\(exit)) without saying why") }
            if Date() >= deadline { break }
        }
        // A supervisor leads a session (and so a process group) of its own, which its worker is in: both go.
        if kill(-spawned, SIGKILL) != 0 { kill(spawned, SIGKILL) }
        _ = ProcessSpawner.waitForExit(spawned, timeout: 1)
        throw EngineStartError(reason: "it did not bind its queues within 10 s")
    }

    /// The worker: runs in the sandbox's namespace until the sandbox or its engine record goes. `restarts`: how many
    /// times its supervisor has started it again (shown by `condition sandboxes`).
    ///
    /// If its supervisor is killed, the engine keeps going: the sandbox's command still runs under the profile its
    /// user asked for, and unlike an interface's engine (which turns its profile off when orphaned, since nothing
    /// else would) nothing needs an orphan to clean up: the engine stops by itself when the sandbox goes, the
    /// teardown stops every process in the namespace, and the table and rules go with the namespace. Only a later
    /// crash is no longer recovered from; its reports then name it alone (`pid` = its own), which
    /// `condition sandboxes` shows, and the next switch starts a supervised engine if it dies.
    public static func work(id: String, registry: SandboxRegistry, restarts: Int = 0) throws {
        let reportFile = registry.engineReportFile(id: id)
        let supervisor = getppid()
        func write(_ counters: DelayEngine.Counters? = nil, error: String? = nil) {
            let report = EngineReport(pid: getppid() == supervisor ? supervisor : getpid(), worker: getpid(),
                                      restarts: restarts > 0 ? restarts : nil, delayed: counters?.delayed ?? 0,
                                      passed: counters?.passed ?? 0, dropped: counters?.dropped ?? 0, error: error)
            report.write(to: reportFile)
        }
        guard let record = registry.record(id: id), let profile = Self.profile(record),
              let inner = try? InterfaceName(record.identity.namespaceInterface) else {
            write(error: "sandbox \(id) is gone, or its record names no user-space engine")
            return
        }
        var followed = record
        var ownerChecked = Date()
        do {
            try EngineService.serve(profile: profile, interface: inner, bound: { write() }, counters: { write($0) }, next: {
                guard let current = registry.record(id: id) else { return .stop }
                if Date().timeIntervalSince(ownerChecked) >= 0.2 {
                    ownerChecked = Date()
                    if !current.ownerIsAlive { return .stop }
                }
                guard current.conditions != followed.conditions || current.answersDNS != followed.answersDNS else { return .keep }
                followed = current
                return Self.profile(current).map(EngineService.Next.update) ?? .stop
            })
        } catch {
            write(error: "\(error)")
            throw error
        }
        try? FileManager.default.removeItem(at: reportFile)
    }

    /// The engine's last report, if it wrote one.
    public static func report(id: String, registry: SandboxRegistry) -> EngineReport? {
        EngineReport.read(from: registry.engineReportFile(id: id))
    }

    /// What carries a sandbox's delay and loss, for `condition sandboxes` and `status`: nil while htb alone does.
    public struct Status: Sendable, Equatable {
        public var engine: ConditioningEngine
        /// The user-space engine's report (its counters), when it is the engine and has reported.
        public var report: EngineReport?
        /// Whether the user-space engine's process runs (always true for netem).
        public var running: Bool

        /// "user space (nftables + netfilter queue), pid 123: 40 delayed, 0 let through, 2 dropped", or why not.
        public var summary: String {
            guard engine == .userspace else { return engine.summary }
            guard let report, running else {
                return engine.summary + ": NOT RUNNING (delay and loss are not applied until the next switch starts it "
                    + "again; the sandbox still goes when its command ends)" + (report?.error.map { ": \($0)" } ?? "")
            }
            let pid = report.worker ?? report.pid
            let restarts = report.restarts.map { ", started again \($0) time\($0 == 1 ? "" : "s") after it died" } ?? ""
            let unsupervised = report.worker == report.pid ? " (its supervisor was killed: if it dies, the next switch starts it again)" : ""
            return engine.summary + ", pid \(pid)\(unsupervised)\(restarts): \(report.delayed) delayed, \(report.passed) let through, "
                + "\(report.dropped) dropped by it"
        }
    }

    public static func status(of record: SandboxRecord, registry: SandboxRegistry) -> Status? {
        guard let engine = SandboxConditions(recordText: record.conditions)?.engine else { return nil }
        guard engine == .userspace else { return Status(engine: engine, running: true) }
        let report = report(id: record.identity.id, registry: registry)
        let running = report.map { $0.error == nil && $0.isRunning(engineID: record.identity.id) } ?? false
        return Status(engine: engine, report: report, running: running)
    }
}

/// The sandbox's user-space engine did not start; nothing it would carry was applied.
public struct EngineStartError: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "the user-space engine (delay and loss without netem) did not start: \(reason)" }
}
