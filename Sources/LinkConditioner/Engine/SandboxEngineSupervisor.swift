import Foundation
import Sandbox
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a sandbox's user-space engine running for as long as its command: `condition __sandbox-engine --role
/// supervise`, inside the sandbox's namespace, runs the engine (`--role worker`, `SandboxEngine.work`) as its child
/// and starts it again when it dies by a signal or a failure while the sandbox's record still names the engine and
/// its owner lives. Without the engine its queue rules let packets through unheld, so the command, still running,
/// would silently stop getting the delay and loss its user asked for. (An interface's supervisor, `condition
/// __engine`, turns the profile off instead: there the profile outlives any one command, and restoring the interface
/// is the safe state.)
///
/// Bounded, so an engine that cannot run does not flap for ever: each restart waits a pause that doubles with every
/// restart in the last minute (`RestartBudget`), and after `RestartBudget.limit` restarts within a minute the
/// supervisor gives up, writes why into the engine's report (`condition sandboxes` and `status` then say the engine
/// is not running, so delay and loss are no longer applied, and why) and exits.
///
/// It exits with the engine when the engine stops because its sandbox goes (record, owner or veth gone: exit 0) or
/// is stopped with SIGTERM: the sandbox's teardown sends that to every process in the namespace, this one too, and
/// a restart racing it would only start an engine the teardown has already listed. Nothing of its own is left: its
/// state is its child and the engine's report beside the sandbox's record, removed with the record.
public enum SandboxEngineSupervisor {
    /// When a dead engine may be started again.
    public struct RestartBudget: Sendable, Equatable {
        /// Restarts allowed within `window`; one more death and the supervisor gives up.
        public var limit = 5
        public var window: TimeInterval = 60
        /// The pause before the first restart; it doubles with each restart still within `window`. Short, since
        /// packets pass unheld while no engine runs; 0.1 s to 1.6 s over the five allowed.
        public var firstPause: TimeInterval = 0.1
        private var restarts: [Date] = []

        public init() {}

        /// The pause before starting the engine again after it died at `now`, or nil: give up, `limit` restarts
        /// already happened within `window`.
        public mutating func pause(at now: Date) -> TimeInterval? {
            restarts.removeAll { now.timeIntervalSince($0) >= window }
            guard restarts.count < limit else { return nil }
            defer { restarts.append(now) }
            return firstPause * Double(1 << restarts.count)
        }
    }

    public static func supervise(id: String, registry: SandboxRegistry, executable: String) throws {
        let reportFile = registry.engineReportFile(id: id)
        var budget = RestartBudget()
        var restarts = 0
        func start() throws(EngineStartError) -> pid_t {
            let arguments = SandboxEngine.command(.worker, id: id, registry: registry, executable: executable)
                + (restarts > 0 ? ["--restarts", String(restarts)] : [])
            let worker: SpawnedProcess
            do { worker = try ProcessSpawner.spawn(arguments, options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null)) } catch {
                throw EngineStartError(reason: "\(error)")
            }
            try SandboxEngine.waitUntilBound(worker.pid, id: id, registry: registry)
            return worker.pid
        }
        // Whether the sandbox still wants this engine: otherwise its death was its sandbox going.
        func wanted() -> Bool {
            guard let record = registry.record(id: id) else { return false }
            return SandboxEngine.profile(record) != nil && record.ownerIsAlive
        }

        var worker: pid_t
        do {
            worker = try start()
        } catch {
            // The first start: the starter waits for this report and fails the apply; nothing to start again.
            EngineReport(pid: getpid(), error: error.reason).write(to: reportFile)
            throw error
        }
        while true {
            let ended = try ProcessSpawner.waitForExit(worker)
            if ended == .exited(0) || ended == .signalled(SIGTERM) { return }
            var cause = "\(ended)"
            while true {
                guard wanted() else { return }
                guard let pause = budget.pause(at: Date()) else {
                    EngineReport(pid: getpid(), restarts: restarts, error: "it stopped \(budget.limit + 1) times within "
                                 + "\(Int(budget.window)) s (the last time: \(cause)), so its supervisor gave up")
                        .write(to: reportFile)
                    return
                }
                usleep(UInt32(pause * 1_000_000))
                guard wanted() else { return }
                restarts += 1
                do {
                    worker = try start()
                    break
                } catch {
                    cause = error.reason
                }
            }
        }
    }
}
