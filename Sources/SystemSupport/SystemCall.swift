#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place that turns the C convention "-1 and errno" into a typed error, retrying on EINTR
/// (after swift-system's `valueOrErrno`).
public enum SystemCall {
    /// Calls `body` until it returns something other than -1 with errno EINTR. Returns the value; throws
    /// `SystemCallError` naming `call` (and `subject`) for any other failure.
    @discardableResult
    public static func retrying<Value: FixedWidthInteger>(
        _ call: String, subject: String? = nil, _ body: () -> Value
    ) throws(SystemCallError) -> Value {
        while true {
            let value = body()
            if value != -1 { return value }
            let code = errno
            if code == EINTR { continue }
            throw SystemCallError(call: call, errno: code, subject: subject)
        }
    }

    /// A pipe whose ends are close-on-exec (and non-blocking if asked), as `[read, write]`. (pipe2 is not in
    /// Swift's Glibc module; nothing here spawns between the two calls, and spawns go through `ProcessSpawner`,
    /// which closes every descriptor above 2 in the child anyway.)
    public static func makePipe(nonBlocking: Bool = false) throws(SystemCallError) -> [Int32] {
        var fds: [Int32] = [-1, -1]
        try retrying("pipe") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        }
        return fds
    }
}
