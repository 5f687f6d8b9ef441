import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// Tears sandboxes down from their registry records alone: the owner on its way out, its detached watchdog when
/// the owner was killed, or a later run that finds a record whose owner is gone.
public struct SandboxReaper: Sendable {
    public var registry: SandboxRegistry
    public var runner: any CommandRunner

    public init(registry: SandboxRegistry, runner: any CommandRunner) {
        self.registry = registry
        self.runner = runner
    }

    /// Stops the recorded processes and everything in the namespace, removes network objects, files and the
    /// record, and restores IP forwarding when it was the last sandbox. Under the registry lock.
    public func remove(_ record: SandboxRecord) {
        _ = try? registry.withLock {
            SandboxLifecycle.destroy(record.identity, pids: [record.childPID].compactMap { $0 } + record.capturePIDs,
                                     runner: runner)
            Self.removeFiles(of: record)
            registry.remove(id: record.identity.id)
            SandboxForwarding(registry: registry).restoreIfUnused(remainingSandboxes: registry.records().count)
        }
    }

    static func removeFiles(of record: SandboxRecord) {
        if let directory = record.scratchDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Removes sandboxes whose owner is gone (killed with SIGKILL, and its watchdog died too). Returns their ids.
    @discardableResult
    public func reapStale() -> [String] {
        guard geteuid() == 0 else { return [] }
        let stale = registry.records().filter { !$0.ownerIsAlive }
        for record in stale { remove(record) }
        return stale.map(\.identity.id)
    }

    /// The watchdog: polls the owner every 200 ms; when it is gone and the record is still there, tears down.
    public func watch(id: String) {
        while true {
            guard let record = registry.record(id: id) else { return }
            if !record.ownerIsAlive {
                remove(record)
                return
            }
            usleep(200_000)
        }
    }
}
