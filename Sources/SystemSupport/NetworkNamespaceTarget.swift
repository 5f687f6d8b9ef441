import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Another network namespace to act in without this process moving there: one named by `ip netns`
/// (`/run/netns/NAME`), a running process's (`/proc/PID/ns/net`, e.g. a container's), or any namespace file
/// given by path (a bind mount such as `/var/run/docker/netns/ID`). `condition` runs its commands inside it
/// (`tc -n NAME`, `nsenter --net=FILE tc ...`); `capture` opens its packet socket there (`NetworkNamespaceFile`).
public enum NetworkNamespaceTarget: Sendable, Equatable, CustomStringConvertible {
    case named(String)
    case process(Int32)
    case file(String)

    /// Where `ip netns add` puts its names.
    public static let namedDirectory = "/run/netns"

    /// Checks the name and that its file exists.
    public static func named(validating name: String) throws(NetworkNamespaceError) -> NetworkNamespaceTarget {
        guard isValidName(name) else { throw .invalidName(name) }
        let target = NetworkNamespaceTarget.named(name)
        guard FileManager.default.fileExists(atPath: target.path) else {
            throw .noSuchNamespace(name: name, path: target.path)
        }
        return target
    }

    /// Checks that the process exists and that its namespace can be read.
    public static func process(validating pid: Int32) throws(NetworkNamespaceError) -> NetworkNamespaceTarget {
        let target = NetworkNamespaceTarget.process(pid)
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { throw .noSuchProcess(pid) }
        guard NetworkNamespace.id(of: String(pid)) != "unknown" else { throw .notPermitted(target.description) }
        return target
    }

    /// `--netns WORD`: a path when it holds a slash (`./ns`, `/proc/42/ns/net`), otherwise an `ip netns` name.
    public static func parse(_ word: String) throws(NetworkNamespaceError) -> NetworkNamespaceTarget {
        guard word.contains("/") else { return try named(validating: word) }
        // access(2), not FileManager: /proc/PID/ns/* are links whose text ("net:[4026531840]") leads nowhere.
        guard access(word, F_OK) == 0 else {
            if errno == EACCES || errno == EPERM { throw .notPermitted("the namespace file \(word)") }
            throw .noSuchFile(word)
        }
        return .file(word)
    }

    /// What `ip netns add` accepts, and nothing that could climb out of /run/netns.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name != "." && name != ".." && !name.hasPrefix("-")
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// The namespace file.
    public var path: String {
        switch self {
        case .named(let name): "\(Self.namedDirectory)/\(name)"
        case .process(let pid): "/proc/\(pid)/ns/net"
        case .file(let path): path
        }
    }

    public var description: String {
        switch self {
        case .named(let name): "network namespace \"\(name)\""
        case .process(let pid): "the network namespace of process \(pid)"
        case .file(let path): "the network namespace at \(path)"
        }
    }

    /// The command-line arguments that name this target again (for the `--for` watchdog).
    public var arguments: [String] {
        switch self {
        case .named(let name): ["--netns", name]
        case .process(let pid): ["--pid", String(pid)]
        case .file(let path): ["--netns", path]
        }
    }

    /// How to list the interfaces inside, for messages.
    public var listInterfacesCommand: String {
        switch self {
        case .named(let name): "ip -n \(name) link"
        case .process, .file: "nsenter --net=\(path) ip link"
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
        case .process, .file: NamespaceFileCommandRunner(namespaceFile: path, base: base)
        }
    }
}

/// Why a network namespace could not be named, opened or entered; each says what to do next.
public enum NetworkNamespaceError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidName(String)
    case noSuchNamespace(name: String, path: String)
    case noSuchProcess(Int32)
    case noSuchFile(String)
    /// The target exists but this process may not open or enter it.
    case notPermitted(String)
    /// The file is there but is not a network namespace; `found` says what it is ("a regular file", "a mount namespace").
    case notANetworkNamespace(path: String, found: String)
    case cannotOpen(path: String, error: SystemCallError)
    case cannotEnter(target: String, error: SystemCallError)

    public var description: String {
        switch self {
        case .invalidName(let name):
            "invalid --netns \"\(name)\": expected a name from `ip netns list` (letters, digits, . _ -) or a path to a namespace file"
        case .noSuchNamespace(let name, let path):
            "no network namespace \"\(name)\" (\(path) does not exist); list them with `ip netns list`"
        case .noSuchProcess(let pid):
            "no process \(pid): give the pid of a running process (`pgrep NAME`, or a container's `docker inspect -f '{{.State.Pid}}' NAME`)"
        case .noSuchFile(let path):
            "no namespace file \(path): give an existing file such as /proc/PID/ns/net or /run/netns/NAME"
        case .notPermitted(let target):
            "cannot open \(target): not allowed; run as root (sudo)"
        case .notANetworkNamespace(let path, let found):
            "\(path) is \(found), not a network namespace: give /run/netns/NAME, /proc/PID/ns/net or a bind mount of one"
        case .cannotOpen(let path, let error):
            "cannot open the network namespace at \(path): \(error.reason)"
        case .cannotEnter(let target, let error):
            error.errno == EPERM
                ? "no permission to enter \(target) (setns needs CAP_SYS_ADMIN): run as root (sudo)"
                : "cannot enter \(target): \(error)"
        }
    }
}

public enum NetworkNamespace {
    /// The inode number of this process's network namespace ("4026531840").
    public static func currentID() -> String { id(of: "self") }

    static func id(of pid: String) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/\(pid)/ns/net", &buffer, buffer.count - 1)
        guard count > 0 else { return "unknown" }
        let link = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // "net:[4026531840]"
        return String(link.filter(\.isNumber))
    }

    /// Whether this process shares PID 1's network namespace, i.e. the machine's real interfaces,
    /// where remote sessions such as SSH arrive. When PID 1's namespace cannot be read (some containers
    /// deny it), a namespace named by `ip netns` counts as private, anything else as initial.
    public static func isInitialNamespace(runner: any CommandRunner) -> Bool {
        let mine = id(of: "self")
        let initial = id(of: "1")
        if initial != "unknown" && mine != "unknown" { return mine == initial }
        let named = (try? runner.run(["ip", "netns", "identify"]))?.stdout
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return named.isEmpty
    }

    /// The names `ip netns list` shows: the files under /run/netns, sorted.
    public static func names() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: NetworkNamespaceTarget.namedDirectory)) ?? []
        return names.filter(NetworkNamespaceTarget.isValidName).sorted()
    }
}
