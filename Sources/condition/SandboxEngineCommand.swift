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
    @Option var role: Role = .start

    enum Role: String, ExpressibleByArgument {
        /// Starts the worker in the sandbox's namespace and waits until it has bound its queues.
        case start
        /// The engine itself, inside the namespace.
        case worker
    }

    func run() throws {
        let registry = SandboxRegistry(directory: URL(fileURLWithPath: registry))
        switch role {
        case .start:
            do { try SandboxEngine.start(id: sandbox, registry: registry, executable: RevertScheduler.currentExecutable()) } catch {
                throw ReportedError(description: "\(error)")
            }
        case .worker:
            // In a session of its own, so no terminal signal reaches it; ignore them anyway.
            signal(SIGINT, SIG_IGN)
            signal(SIGHUP, SIG_IGN)
            try SandboxEngine.work(id: sandbox, registry: registry)
        }
    }
}
