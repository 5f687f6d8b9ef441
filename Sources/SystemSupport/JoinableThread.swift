#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX thread that runs one closure and is waited for with `join()`: for work that must run beside the
/// caller's thread for a known stretch (a pipeline stage), where everything it touched is handed back at `join`.
public final class JoinableThread: Sendable {
    private let thread: pthread_t

    /// Starts `work` on a new thread now.
    public init(_ work: @escaping @Sendable () -> Void) throws(SystemCallError) {
        final class Work: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Work(work)).toOpaque()
#if canImport(Glibc)
        var thread = pthread_t()
#else
        var thread: pthread_t?
#endif
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            throw SystemCallError(call: "pthread_create", errno: status)
        }
#if canImport(Glibc)
        self.thread = thread
#else
        self.thread = thread!
#endif
    }

    /// Waits for the work to return. Everything the work wrote is visible to the caller afterwards.
    /// Call exactly once.
    public func join() {
        pthread_join(thread, nil)
    }
}
