import ArgumentParser
import Foundation
import LinkConditioner

/// `condition __engine -i IFACE --id ID ...`: the user-space engine of one interface, started by `apply` where the
/// kernel has no netem. Three roles of one executable: the starter (what apply runs) starts the supervisor in a
/// session of its own and returns once the engine has bound its queues; the supervisor runs the engine as a
/// child and, if that child dies by a signal or a failure while its profile is still recorded, turns the profile
/// off, so a crashed or killed engine leaves nothing behind (no table, no queue rules, no qdiscs).
struct EngineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "__engine", shouldDisplay: false)

    @OptionGroup var interface: InterfaceOption
    @Option var id: String
    @Option(name: .customLong("state-dir")) var stateDirectory: String
    @Option(name: .customLong("namespace-id")) var namespaceID: String
    @Option var role: Role = .start

    enum Role: String, ExpressibleByArgument {
        /// Starts the supervisor detached and waits until the engine has bound its queues.
        case start
        /// Runs the engine as a child and turns the profile off if that child dies.
        case supervise
        /// The engine itself.
        case worker
    }

    func run() throws {
        let device = try interface.name
        let store = StateStore(directory: URL(fileURLWithPath: stateDirectory), namespaceID: namespaceID)
        let report = store.url(device, suffix: "engine")
        let again = [RevertScheduler.currentExecutable(), "__engine", "-i", device.rawValue, "--id", id,
                     "--state-dir", stateDirectory, "--namespace-id", namespaceID, "--role"]
        if role == .start {
            try? FileManager.default.removeItem(at: report)
            _ = try ProcessSpawner.spawn(again + [Role.supervise.rawValue],
                                         options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null, grouping: .newSession))
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if let state = EngineReport.read(from: report) {
                    if let error = state.error { throw ReportedError(description: "the user-space engine did not start: \(error)") }
                    return
                }
                usleep(5_000)
            }
            throw ReportedError(description: "the user-space engine did not bind its queues within 10 s")
        }
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        if role == .worker {
            // The supervisor is this process's parent: if it goes (kill -9), nothing would clean up after this engine,
            // so the engine stops and turns the profile off itself.
            let supervisor = getppid()
            let orphaned = try runEngine(device, store: store, supervisor: supervisor)
            guard orphaned, let state = try? store.load(device), state.engineID == id else { return }
            _ = try? Conditioner(runner: ProcessRunner(), store: store, inInitialNamespace: false).off(device)
            return
        }
        let child = try ProcessSpawner.spawn(again + [Role.worker.rawValue],
                                             options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null))
        let status = try ProcessSpawner.waitForExit(child.pid)
        guard status != .exited(0), let state = try? store.load(device), state.engineID == id else { return }
        let conditioner = Conditioner(runner: ProcessRunner(), store: store, inInitialNamespace: false)
        writeReport(EngineReport(pid: getpid(), error: "the engine stopped (\(status)); the profile was turned off"), device, store)
        _ = try? conditioner.off(device)
    }

    /// Runs the engine until its record or interface goes (false) or its supervisor does (true).
    private func runEngine(_ device: InterfaceName, store: StateStore, supervisor: pid_t) throws -> Bool {
        guard let state = try store.load(device), state.engineID == id else { return false }
        var bytes = store.recordBytes(device)
        var orphaned = false
        do {
            try EngineService.serve(profile: state.profile, interface: device, bound: {
                writeReport(EngineReport(pid: supervisor, worker: getpid()), device, store) // the starter may return
            }, counters: { counters in
                writeReport(EngineReport(pid: supervisor, worker: getpid(), delayed: counters.delayed, passed: counters.passed,
                                         dropped: counters.dropped), device, store)
            }, next: {
                if getppid() != supervisor {
                    orphaned = true
                    return .stop
                }
                let now = store.recordBytes(device)
                guard now != bytes else { return .keep }
                bytes = now
                // Gone, or another apply's: stop (held packets are let go first).
                guard let current = try? store.load(device), current.engineID == id else { return .stop }
                return .update(current.profile)
            })
        } catch {
            writeReport(EngineReport(pid: getpid(), error: "\(error)"), device, store)
            throw ExitCode.failure
        }
        if !orphaned { try? FileManager.default.removeItem(at: store.url(device, suffix: "engine")) }
        return orphaned
    }

    private func writeReport(_ report: EngineReport, _ device: InterfaceName, _ store: StateStore) {
        report.write(to: store.url(device, suffix: "engine"))
    }
}
