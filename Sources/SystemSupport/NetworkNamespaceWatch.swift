import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches the target of a capture in another namespace and says once when it goes away, so a capture there ends
/// instead of waiting on a namespace nobody uses: the process given by `--pid` exited (pid and start time, so a
/// reused pid does not count as the same process; a zombie counts as gone), or the name or file given by
/// `--netns` was removed or now leads to another namespace. Checked every `interval` on a thread of its own.
/// (A socket keeps its namespace alive, so without this a deleted namespace's interfaces would live on while the
/// capture runs.)
public final class NetworkNamespaceWatch: Sendable {
    /// Why the target is gone.
    public enum Departure: Sendable, Equatable {
        case processExited(Int32)
        case namespaceRemoved(NetworkNamespaceTarget)
    }

    private final class State: Sendable {
        let stopped = Atomic<Bool>(false)
        let departed = Mutex<Departure?>(nil)
    }

    private let state = State()
    private let thread: JoinableThread

    /// Starts watching `namespace`; `onDeparture` is called once, on the watch's thread, when it goes.
    public init(_ namespace: NetworkNamespaceFile, interval: Double = 0.2,
                onDeparture: @escaping @Sendable (Departure) -> Void) throws(SystemCallError) {
        let target = namespace.target
        var startTime: UInt64?
        if case .process(let pid) = target { startTime = ProcessTable.startTime(of: pid) }
        let check: @Sendable () -> Departure? = { [startTime] in
            if case .process(let pid) = target {
                return ProcessTable.isAlive(pid: pid, startTime: startTime) ? nil : .processExited(pid)
            }
            return namespace.isStillNamed ? nil : .namespaceRemoved(target)
        }
        let state = self.state
        let microseconds = useconds_t(max(interval, 0.01) * 1_000_000)
        thread = try JoinableThread {
            while !state.stopped.load(ordering: .acquiring) {
                if let departure = check() {
                    state.departed.withLock { $0 = departure }
                    onDeparture(departure)
                    return
                }
                usleep(microseconds)
            }
        }
    }

    /// The departure seen, if any.
    public var departure: Departure? { state.departed.withLock { $0 } }

    /// Stops watching and waits for the thread. Call once.
    public func cancel() {
        state.stopped.store(true, ordering: .releasing)
        thread.join()
    }
}
