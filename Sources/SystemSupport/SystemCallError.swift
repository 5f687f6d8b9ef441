#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call failed: which call, on what, and the errno it set (or returned, for posix_spawn).
public struct SystemCallError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The call as a C programmer would name it: "open", "flock", "posix_spawnp", "waitpid".
    public var call: String
    public var errno: Int32
    /// What it was called on (a path, a program, a pid), when that helps.
    public var subject: String?

    public init(call: String, errno: Int32, subject: String? = nil) {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    /// strerror's text, e.g. "Permission denied".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        "\(call)\(subject.map { " \($0)" } ?? "") failed: \(reason) (errno \(errno))"
    }
}
