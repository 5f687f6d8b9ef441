#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a lock file, so separate processes (apply, off, watchdogs, concurrent sandbox runs)
/// never interleave. Every failure throws: working on without the lock would be a silent race.
public enum FileLock {
    /// Runs `body` holding an exclusive lock on `path` (created with mode 0600 if missing), blocking until
    /// other holders release it.
    public static func withExclusiveLock<T>(path: String, _ body: () throws -> T) throws -> T {
        let fd = try SystemCall.retrying("open", subject: path) { open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600) }
        defer { close(fd) }
        try SystemCall.retrying("flock", subject: path) { flock(fd, LOCK_EX) }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
