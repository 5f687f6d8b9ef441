import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds a command the way a shell does, so a wrapper that starts it indirectly (through `ip netns exec`) can
/// give the shell's answers before building anything: 127 when it cannot be found, 126 when it is there but
/// cannot be executed.
public enum ExecutableLookup {
    public enum Outcome: Equatable, Sendable {
        case found(String)
        case notFound(String)
        /// The path exists but is a directory or lacks execute permission.
        case notExecutable(path: String, reason: String)

        /// The shell's exit status for a command that cannot run (126, 127), nil when it can.
        public var shellStatus: Int32? {
            switch self {
            case .found: nil
            case .notFound: 127
            case .notExecutable: 126
            }
        }

        /// What a shell prints for it ("curll: command not found").
        public var message: String? {
            switch self {
            case .found: nil
            case .notFound(let name): name.contains("/") ? "\(name): No such file or directory" : "\(name): command not found"
            case .notExecutable(let path, let reason): "\(path): \(reason)"
            }
        }
    }

    /// `name` itself when it has a slash, else the first executable file of that name in `searchPath` (a PATH
    /// value; empty entries mean the current directory). A non-executable match is reported only when no
    /// executable one exists, as bash does.
    public static func resolve(_ name: String, searchPath: String) -> Outcome {
        if name.contains("/") { return check(name) ?? .notFound(name) }
        guard !name.isEmpty else { return .notFound(name) }
        var firstProblem: Outcome?
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            switch check(candidate) {
            case .found(let path)?: return .found(path)
            case let problem?: if firstProblem == nil { firstProblem = problem }
            case nil: continue
            }
        }
        return firstProblem ?? .notFound(name)
    }

    /// nil when nothing is at `path`.
    private static func check(_ path: String) -> Outcome? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if info.st_mode & S_IFMT == S_IFDIR { return .notExecutable(path: path, reason: "Is a directory") }
        guard access(path, X_OK) == 0 else { return .notExecutable(path: path, reason: "Permission denied") }
        return .found(path)
    }
}
