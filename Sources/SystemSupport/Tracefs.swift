#if canImport(Glibc)
import Glibc
#endif

/// The kernel's tracing file system (tracefs): dynamic uprobe events, private instances (a buffer, an event
/// filter by pid and a `trace_pipe` of their own), and the removal of both by name. Uprobe events are global
/// (`uprobe_events`), so each user names its group after itself and enables its events only in its own instance.
public struct Tracefs: Sendable {
    public static let standardMount = "/sys/kernel/tracing"
    public let root: String

    public init(root: String) { self.root = root }

    /// The mounted tracefs; with `mountIfAbsent`, mounts it at /sys/kernel/tracing first (and leaves it mounted:
    /// another capture may be using it by the time this one ends).
    public static func open(root: String = standardMount, mountIfAbsent: Bool) throws(TracefsError) -> Tracefs {
        let tracefs = Tracefs(root: root)
        if access(root + "/uprobe_events", F_OK) == 0 { return tracefs }
        guard access(root, F_OK) == 0 else { throw .notAvailable(reason: "\(root) does not exist (no tracing in this kernel)") }
        guard mountIfAbsent else { throw .notAvailable(reason: "tracefs is not mounted at \(root)") }
        if mount("nodev", root, "tracefs", 0, nil) != 0 {
            throw .system(SystemCallError(call: "mount", errno: errno, subject: "tracefs on \(root)"))
        }
        guard access(root + "/uprobe_events", F_OK) == 0 else {
            throw .notAvailable(reason: "\(root) has no uprobe_events: the kernel lacks CONFIG_UPROBE_EVENTS")
        }
        return tracefs
    }

    public func instancePath(_ name: String) -> String { "\(root)/instances/\(name)" }

    /// Adds a dynamic event (`p:GROUP/NAME PATH:OFFSET ARGS`). A definition the kernel refuses is an error with the
    /// kernel's own words from `error_log`.
    public func addUprobe(_ definition: String) throws(TracefsError) {
        do {
            try append(definition + "\n", to: root + "/uprobe_events")
        } catch {
            throw .refused(definition: definition, kernel: lastErrorLogLine(), error: error)
        }
    }

    /// The events of `group` defined now in `uprobe_events`, as `GROUP/NAME`.
    public func uprobeEvents(group: String) -> [String] {
        (try? read(root + "/uprobe_events"))?.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let first = words.first, let colon = first.firstIndex(of: ":") else { return nil }
            let name = first[first.index(after: colon)...]
            return name.hasPrefix(group + "/") ? String(name) : nil
        } ?? []
    }

    public func makeInstance(_ name: String) throws(TracefsError) -> String {
        let path = instancePath(name)
        if mkdir(path, 0o700) != 0 {
            throw .system(SystemCallError(call: "mkdir", errno: errno, subject: path))
        }
        return path
    }

    /// Disables everything in the instance `name` and removes it, then removes every uprobe event of `group`. Each
    /// step tolerates its object being gone, so the owner, a watchdog and a reaper can all call it.
    public func remove(instance name: String, group: String) {
        let path = instancePath(name)
        if access(path, F_OK) == 0 {
            try? append("0\n", to: path + "/events/enable")
            try? append("0\n", to: path + "/tracing_on")
            // rmdir fails with EBUSY while a reader still has trace_pipe open; that reader is ours and is
            // closing, so give it a moment.
            for _ in 0..<50 {
                if rmdir(path) == 0 || errno == ENOENT { break }
                usleep(20_000)
            }
        }
        for event in uprobeEvents(group: group) {
            for _ in 0..<50 {
                if (try? append("-:\(event)\n", to: root + "/uprobe_events")) != nil { break }
                usleep(20_000)
            }
        }
    }

    /// Writes `text` to a tracefs file in one `write` (tracefs parses each write as one command).
    public func append(_ text: String, to path: String) throws(SystemCallError) {
        let fd = try SystemCall.retrying("open", subject: path) { Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = try SystemCall.retrying("write", subject: path) { bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        guard written == bytes.count else { throw SystemCallError(call: "write", errno: EIO, subject: path) }
    }

    /// Reads a small tracefs file whole.
    public func read(_ path: String) throws(SystemCallError) -> String {
        let fd = try SystemCall.retrying("open", subject: path) { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = try SystemCall.retrying("read", subject: path) { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if count == 0 { break }
            result += buffer[..<count]
            if result.count > 16 << 20 { break }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private func lastErrorLogLine() -> String? {
        guard let log = try? read(root + "/error_log") else { return nil }
        let lines = log.split(separator: "\n").suffix(3).map { $0.trimmingCharacters() }
        return lines.isEmpty ? nil : lines.joined(separator: " / ")
    }
}

public enum TracefsError: Error, CustomStringConvertible, Equatable {
    case notAvailable(reason: String)
    case refused(definition: String, kernel: String?, error: SystemCallError)
    case system(SystemCallError)

    public var description: String {
        switch self {
        case .notAvailable(let reason): "tracefs: \(reason)"
        case .refused(let definition, let kernel, let error):
            "tracefs refused the uprobe \"\(definition)\": \(error.reason)" + (kernel.map { " (error_log: \($0))" } ?? "")
        case .system(let error): "tracefs: \(error)"
        }
    }
}

private extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
