import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about processes: whether one is still the process we recorded (pid reuse guard), and
/// this process's own descriptors.
public enum ProcessTable {
    /// Whether `pid` is alive and is still the process that started at `startTime`. A zombie no longer counts.
    public static func isAlive(pid: pid_t, startTime: UInt64?) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        if state(of: pid) == "Z" { return false }
        guard let startTime else { return true }
        return self.startTime(of: pid) == startTime
    }

    /// Field 22 of /proc/PID/stat: the start time in clock ticks since boot.
    public static func startTime(of pid: pid_t) -> UInt64? {
        statFields(of: pid).flatMap { $0.count > 19 ? UInt64($0[19]) : nil }
    }

    /// Field 3 of /proc/PID/stat: R, S, D, Z, T, ...
    public static func state(of pid: pid_t) -> String? {
        statFields(of: pid).flatMap { $0.first }
    }

    /// The fields after the parenthesised command name (which may itself contain spaces).
    private static func statFields(of pid: pid_t) -> [String]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ").map(String.init)
    }

    /// This process's open descriptors.
    public static func openDescriptors() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap(Int32.init).filter { fcntl($0, F_GETFD) >= 0 }
    }

    /// Sets FD_CLOEXEC on every open descriptor above standard error, so a program started by other means than
    /// `ProcessSpawner` (a detached watchdog) inherits nothing of ours.
    public static func markDescriptorsCloseOnExec() {
        for fd in openDescriptors() where fd > 2 {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// SIGTERM to each live pid, up to `grace` seconds for them to go, then SIGKILL for whatever is left.
    public static func terminate(_ pids: [pid_t], grace: Double = 1) {
        let live = pids.filter { $0 > 0 && kill($0, 0) == 0 }
        guard !live.isEmpty else { return }
        live.forEach { kill($0, SIGTERM) }
        let deadline = Date().addingTimeInterval(grace)
        while Date() < deadline, live.contains(where: { isAlive(pid: $0, startTime: nil) }) {
            usleep(50_000)
        }
        live.forEach { kill($0, SIGKILL) }
    }
}
