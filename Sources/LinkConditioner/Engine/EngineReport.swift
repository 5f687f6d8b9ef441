import Foundation

/// What the user-space engine says about itself, once a second, in `<netns>-<iface>.engine` beside the record:
/// `status` shows it (and whether its process still runs).
public struct EngineReport: Codable, Sendable, Equatable {
    /// The supervising `condition __engine` (`__sandbox-engine`) process; the engine's own pid once a sandbox's
    /// engine has lost its supervisor, or when nothing is left but the supervisor's last word (`error`).
    public var pid: Int32
    /// The engine process itself (the supervisor's child); nil in reports written before it was recorded.
    public var worker: Int32? = nil
    /// How many times a sandbox's supervisor started its engine again after it died (nil: never).
    public var restarts: Int? = nil
    /// Packets held for a delay, let through at once (reordering), and dropped (correlated loss) so far.
    public var delayed: UInt64 = 0
    public var passed: UInt64 = 0
    public var dropped: UInt64 = 0
    public var error: String? = nil

    public init(pid: Int32, worker: Int32? = nil, restarts: Int? = nil, delayed: UInt64 = 0, passed: UInt64 = 0,
                dropped: UInt64 = 0, error: String? = nil) {
        self.pid = pid
        self.worker = worker
        self.restarts = restarts
        self.delayed = delayed
        self.passed = passed
        self.dropped = dropped
        self.error = error
    }

    /// The report in `file`, if the engine wrote one (and it reads as one).
    public static func read(from file: URL) -> EngineReport? {
        (try? Data(contentsOf: file)).flatMap { try? JSONDecoder().decode(EngineReport.self, from: $0) }
    }

    /// Replaces `file` with this report, atomically, so a reader never sees half of one (best effort: a report
    /// that cannot be written only leaves the last one in place).
    public func write(to file: URL) {
        if let data = try? JSONEncoder().encode(self) { try? data.write(to: file, options: .atomic) }
    }

    /// Whether either process still runs as this engine: its command line is `condition __engine ... --id ENGINE_ID`
    /// (`condition __sandbox-engine --sandbox ID ...` for a sandbox's, whose id is the sandbox's).
    /// A killed process's pid is not enough: it answers `kill(pid, 0)` as a zombie until reaped (a container's pid 1
    /// may never reap it), and may be reused.
    public func isRunning(engineID: String) -> Bool {
        [pid, worker].compactMap { $0 }.contains { pid in
            guard let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            let words = line.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return (words.contains("__engine") || words.contains(SandboxEngine.commandName)) && words.contains(engineID)
        }
    }
}
