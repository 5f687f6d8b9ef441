import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The life of one engine process, the same for an interface's engine (`condition __engine`) and a sandbox's
/// (`condition __sandbox-engine`): bind the queues, say so, hold and release packets while whatever it follows
/// (a state record, a sandbox's record) says to go on, and report its counters once a second.
public enum EngineService {
    /// What the engine does next, asked every 20 ms.
    public enum Next {
        case keep
        /// The profile was switched: packets already held keep their release times; new ones get the new profile's.
        case update(Profile)
        /// Its record or interface is gone: held packets are let go, and `serve` returns.
        case stop
    }

    /// Binds `interface`'s queues in this process's network namespace for `profile`, calls `bound` (the caller's
    /// report that it runs: a starter may return), then serves until `next` says stop. Throws when the queues cannot
    /// be bound (nothing was bound then).
    public static func serve(profile: Profile, interface: InterfaceName, bound: () -> Void,
                             counters: (DelayEngine.Counters) -> Void, next: () -> Next) throws {
        // Releases are due to the microsecond: a real-time priority wakes the engine on time on a busy machine, as
        // netem's timer would (best effort; it sleeps between packets and uses a few % of a CPU at 50 Mbit/s).
        var priority = sched_param(sched_priority: 10)
        _ = sched_setscheduler(0, SCHED_FIFO, &priority)
        let engine = try DelayEngine(profile: profile, interface: interface, maximumHeld: UserspaceEngine.maximumHeld(profile))
        bound()
        var lastReport = Date()
        try engine.run { () -> Bool in
            switch next() {
            case .stop: return false
            case .update(let profile): engine.update(profile: profile, interface: interface)
            case .keep: break
            }
            // No interface any more (its namespace deleted, a device unplugged): nothing to condition.
            if if_nametoindex(interface.rawValue) == 0 { return false }
            if Date().timeIntervalSince(lastReport) >= 1 {
                lastReport = Date()
                counters(engine.counters)
            }
            return true
        }
    }
}
