import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Another network namespace to condition without entering it by hand: one named by `ip netns`
/// (`/run/netns/NAME`), or a running process's (`/proc/PID/ns/net`, e.g. a container's). Commands are run
/// inside it (`tc -n NAME`, or `nsenter --net=/proc/PID/ns/net tc ...`) and its state is kept under its
/// own namespace id, so `status` and `off` given the same target find it; this process never moves.
public enum NetworkNamespaceTarget: Sendable, Equatable, CustomStringConvertible {
    case named(String)
    case process(Int32)

    /// Checks the name or process and that its namespace can be opened.
    public static func named(validating name: String) throws -> NetworkNamespaceTarget {
        guard !name.isEmpty, name.utf8.count <= 64, name != ".", name != "..", !name.hasPrefix("-"),
              name.unicodeScalars.allSatisfy({ CharacterSetASCII.isAlnum($0) || "._-".unicodeScalars.contains($0) }) else {
            throw ConditionerError.unexpectedOutput("invalid --netns \"\(name)\": expected a name from `ip netns list` "
                                                    + "(letters, digits, . _ -)")
        }
        let target = NetworkNamespaceTarget.named(name)
        guard FileManager.default.fileExists(atPath: target.path) else {
            throw ConditionerError.unexpectedOutput("no network namespace \"\(name)\" (\(target.path) does not exist); "
                                                    + "list them with `ip netns list`")
        }
        return target
    }

    public static func process(validating pid: Int32) throws -> NetworkNamespaceTarget {
        let target = NetworkNamespaceTarget.process(pid)
        guard pid > 0, NetworkNamespace.id(of: String(pid)) != "unknown" else {
            throw ConditionerError.unexpectedOutput("cannot open the network namespace of process \(pid) (\(target.path)): "
                                                    + "no such process, or not allowed (run as root)")
        }
        return target
    }

    /// The namespace file.
    public var path: String {
        switch self {
        case .named(let name): "/run/netns/\(name)"
        case .process(let pid): "/proc/\(pid)/ns/net"
        }
    }

    public var description: String {
        switch self {
        case .named(let name): "network namespace \"\(name)\""
        case .process(let pid): "the network namespace of process \(pid)"
        }
    }

    /// The command-line arguments that name this target again (for the `--for` watchdog).
    public var arguments: [String] {
        switch self {
        case .named(let name): ["--netns", name]
        case .process(let pid): ["--pid", String(pid)]
        }
    }

    /// The namespace's inode number, as `NetworkNamespace.currentID()` gives it for our own.
    public var namespaceID: String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "unknown" }
        return String(info.st_ino)
    }

    /// Whether this is the machine's own namespace (PID 1's), where remote sessions arrive.
    public var isInitialNamespace: Bool {
        let initial = NetworkNamespace.id(of: "1")
        return initial != "unknown" && initial == namespaceID
    }

    /// Runs commands inside the namespace.
    public func runner(base: any CommandRunner = ProcessRunner()) -> any CommandRunner {
        switch self {
        case .named(let name): NamespaceCommandRunner(namespace: name, base: base)
        case .process: NamespaceFileCommandRunner(namespaceFile: path, base: base)
        }
    }
}

/// Runs every command inside the network namespace behind a file (`/proc/PID/ns/net`) with
/// `nsenter --net=FILE`, for namespaces that have no name in `ip netns`.
public struct NamespaceFileCommandRunner: CommandRunner {
    public let namespaceFile: String
    public let base: any CommandRunner

    public init(namespaceFile: String, base: any CommandRunner = ProcessRunner()) {
        self.namespaceFile = namespaceFile
        self.base = base
    }

    public func translate(_ arguments: [String]) -> [String] {
        ["nsenter", "--net=\(namespaceFile)", "--"] + arguments
    }

    public func run(_ arguments: [String]) throws -> CommandResult {
        try base.run(translate(arguments))
    }

    public func start(_ arguments: [String]) throws -> (any PendingCommand)? {
        try base.start(translate(arguments))
    }
}
