#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a lock file, so separate processes (apply, off, watchdogs, concurrent sandbox runs)
/// never interleave. Every failure throws: working on without the lock would be a silent race.
public enum FileLock {
    /// Runs `body` holding an exclusive lock on `path` (created with mode 0600 if missing), blocking until
    /// other holders release it. When `removeAfterwards` says so (asked while still holding the lock), the lock
    /// file is deleted, so files for names that hold nothing do not pile up. A waiter that then gets the lock of
    /// a deleted file notices (the path no longer names the inode it locked) and starts over on the new file.
    public static func withExclusiveLock<T>(path: String, removeAfterwards: () -> Bool = { false },
                                            _ body: () throws -> T) throws -> T {
        while true {
            let fd = try SystemCall.retrying("open", subject: path) { open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600) }
            defer { close(fd) }
            try SystemCall.retrying("flock", subject: path) { flock(fd, LOCK_EX) }
            defer { flock(fd, LOCK_UN) }
            var locked = stat()
            var named = stat()
            guard fstat(fd, &locked) == 0, stat(path, &named) == 0,
                  locked.st_ino == named.st_ino, locked.st_dev == named.st_dev else { continue }
            defer { if removeAfterwards() { unlink(path) } }
            return try body()
        }
    }
}
