import ArgumentParser
import Foundation
import LinkConditioner
import Sandbox

/// `condition __sandbox-engine --sandbox ID --registry DIR`: a sandbox's user-space engine (see `SandboxEngine`),
/// started by `SandboxConditioning` from `condition run`, `apply --sandbox`, `capture -- COMMAND` and the live view.
struct SandboxEngineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: SandboxEngine.commandName, shouldDisplay: false)

    @Option var sandbox: String
    @Option var registry: String
    @Option var role: SandboxEngine.Role = .start
    /// The worker's: how many times its supervisor has started it again.
    @Option var restarts = 0

    func run() throws {
        let registry = SandboxRegistry(directory: URL(fileURLWithPath: registry))
        if role == .start {
            do { try SandboxEngine.start(id: sandbox, registry: registry, executable: RevertScheduler.currentExecutable()) } catch {
                throw ReportedError(description: "\(error)")
            }
            return
        }
        // Both run in a session of their own, so no terminal signal reaches them; ignore them anyway. SIGTERM stays
        // fatal: the sandbox's teardown stops them with it.
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        if role == .supervise {
            try SandboxEngineSupervisor.supervise(id: sandbox, registry: registry, executable: RevertScheduler.currentExecutable())
        } else {
            try SandboxEngine.work(id: sandbox, registry: registry, restarts: restarts)
        }
    }
}

extension SandboxEngine.Role: ExpressibleByArgument {}
