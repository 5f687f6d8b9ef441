import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starting and watching processes without a shell, with the control a sandbox needs over process groups,
/// sessions and signal dispositions (which Foundation's `Process` does not expose).
public enum SandboxProcesses {
    public enum Output: Sendable { case inherit, null }

    /// Starts `argv` (looked up on PATH when it has no slash) and returns its pid.
    /// - newProcessGroup: the child leads its own group, so a terminal's Ctrl-C does not reach it.
    /// - newSession: the child is detached from the terminal (watchdogs).
    public static func spawn(_ argv: [String], environment: [String: String]? = nil,
                             stdout: Output = .inherit, stderr: Output = .inherit, stdinNull: Bool = false,
                             newProcessGroup: Bool = false, newSession: Bool = false) throws -> pid_t {
        precondition(!argv.isEmpty)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if stdinNull { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        if case .null = stdout { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
        if case .null = stderr { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        // Nothing but standard input, output and error goes through, as with sudo: a descriptor our own parent
        // leaked to us (a pipe, Foundation's exit-notification socket) must not outlive us in the command,
        // the watchdog or a capture.
        closeFrom3(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with default dispositions and nothing blocked, whatever this process set up.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession {
            flags |= 0x80 // POSIX_SPAWN_SETSID (glibc 2.26+)
        } else if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let environment = environment ?? ProcessInfo.processInfo.environment
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        guard code == 0 else { throw SandboxError.spawnFailed(command: argv, errno: code) }
        return pid
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module does not export;
    /// before that, each descriptor open now.
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
            if closeFrom(&actions, 3) == 0 { return }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd > 2 && fcntl(fd, F_GETFD) >= 0 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    /// Whether `pid` is alive and is still the process that started at `startTime` (guards against reuse).
    public static func isAlive(pid: pid_t, startTime: UInt64?) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let startTime else { return true }
        guard let current = self.startTime(of: pid) else { return false }
        // A zombie still answers kill(0); it no longer counts as running.
        if state(of: pid) == "Z" { return false }
        return current == startTime
    }

    /// Field 22 of /proc/PID/stat: the start time in clock ticks since boot.
    public static func startTime(of pid: pid_t) -> UInt64? {
        statFields(of: pid).flatMap { $0.count > 19 ? UInt64($0[19]) : nil }
    }

    static func state(of pid: pid_t) -> String? {
        statFields(of: pid).flatMap { $0.first }
    }

    /// The fields after the parenthesised command name (which may itself contain spaces).
    private static func statFields(of pid: pid_t) -> [String]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ").map(String.init)
    }

    /// Waits up to `timeout` seconds for `pid` (our child) to exit; returns its wait status, or nil.
    public static func wait(pid: pid_t, timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        repeat {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return status }
            if result < 0 { return nil }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    /// Shell convention: the exit code, or 128 + the signal that killed it.
    public static func exitCode(fromWaitStatus status: Int32) -> Int32 {
        let signal = status & 0x7f
        if signal == 0 { return (status >> 8) & 0xff }
        return 128 + signal
    }
}
