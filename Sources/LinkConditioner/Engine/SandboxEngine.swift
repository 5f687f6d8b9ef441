import Foundation
import Sandbox
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// The user-space engine of one sandbox, `condition __sandbox-engine --sandbox ID --registry DIR`, for kernels
/// without netem. `SandboxConditioning` runs it (the starter, in the host's namespace) when a sandbox first needs
/// delay or loss; the starter starts the engine itself (`--role worker`) inside the sandbox's namespace, detached in
/// a session of its own, and returns once it has bound its queues, or fails saying why.
///
/// The worker follows the profile in the sandbox's record (`SandboxConditions`) and stops when the record goes,
/// when its owner (`condition run`, `capture`) is dead, when its veth end is gone, or when the record no longer says
/// the engine carries the profile (a failed switch put the old record back). The sandbox's teardown stops it with
/// every other process in the namespace before the namespace is deleted, so it never keeps the namespace alive;
/// its table and queue rules are in the namespace and go with it. It has no supervisor: if it dies, the rules let
/// packets through unheld (`--queue-bypass`), `condition sandboxes` says it is not running, and the next switch
/// (`apply --sandbox`, the live view) starts it again.
public enum SandboxEngine {
    public static let commandName = "__sandbox-engine"

    /// What the engine of a sandbox with `record` applies: nil when its record does not name the user-space engine.
    public static func profile(_ record: SandboxRecord) -> Profile? {
        guard let conditions = SandboxConditions(recordText: record.conditions), conditions.engine == .userspace else { return nil }
        return SandboxConditioning.treeProfile(conditions.profile, answersDNS: record.answersDNS)
    }

    /// Starts the worker inside the sandbox's namespace and waits (at most 10 s) until it has bound its queues.
    public static func start(id: String, registry: SandboxRegistry, executable: String) throws {
        guard let record = registry.record(id: id) else { throw SandboxError.unknownSandbox(id) }
        let report = registry.engineReportFile(id: id)
        try? FileManager.default.removeItem(at: report)
        let worker = try ProcessSpawner.spawn(
            ["ip", "netns", "exec", record.identity.namespace, executable, commandName, "--sandbox", id,
             "--registry", registry.directory.path, "--role", "worker"],
            options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null, grouping: .newSession))
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let state = self.report(id: id, registry: registry) {
                if let error = state.error { throw EngineStartError(reason: error) }
                return
            }
            if let status = ProcessSpawner.waitForExit(worker.pid, timeout: 0.005) {
                throw EngineStartError(reason: "it stopped at once (\(status)) without saying why")
            }
        }
        kill(worker.pid, SIGKILL)
        throw EngineStartError(reason: "it did not bind its queues within 10 s")
    }

    /// The worker: runs in the sandbox's namespace until the sandbox or its engine record goes.
    public static func work(id: String, registry: SandboxRegistry) throws {
        let reportFile = registry.engineReportFile(id: id)
        func write(_ report: EngineReport) {
            if let data = try? JSONEncoder().encode(report) { try? data.write(to: reportFile, options: .atomic) }
        }
        guard let record = registry.record(id: id), let profile = Self.profile(record),
              let inner = try? InterfaceName(record.identity.namespaceInterface) else {
            write(EngineReport(pid: getpid(), error: "sandbox \(id) is gone, or its record names no user-space engine"))
            return
        }
        var followed = record
        var ownerChecked = Date()
        do {
            try EngineService.serve(profile: profile, interface: inner, bound: { write(EngineReport(pid: getpid())) },
                                    counters: { counters in
                write(EngineReport(pid: getpid(), delayed: counters.delayed, passed: counters.passed, dropped: counters.dropped))
            }, next: {
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
            write(EngineReport(pid: getpid(), error: "\(error)"))
            throw error
        }
        try? FileManager.default.removeItem(at: reportFile)
    }

    /// The engine's last report, if it wrote one.
    public static func report(id: String, registry: SandboxRegistry) -> EngineReport? {
        (try? Data(contentsOf: registry.engineReportFile(id: id))).flatMap { try? JSONDecoder().decode(EngineReport.self, from: $0) }
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
            return engine.summary + ", pid \(report.pid): \(report.delayed) delayed, \(report.passed) let through, "
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
