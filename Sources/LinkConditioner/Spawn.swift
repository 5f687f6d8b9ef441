#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program with posix_spawn and waitpid. Foundation's `Process` is not used: it needs a CFSocket
/// wakeup pair that cannot be created in a network namespace whose loopback is down, and then hangs in
/// `waitUntilExit` (seen with `ip netns exec NS condition ...` on a fresh namespace).
enum Spawn {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `path` with `arguments` (argv[1...]), standard input from /dev/null, and returns the exit status
    /// (128 + signal when killed) with everything it printed. With `captureOutput` false its output goes to
    /// /dev/null. Signals this process ignores or blocks are restored to default for the child.
    static func run(path: String, arguments: [String], captureOutput: Bool = true) throws -> (status: Int32, stdout: [UInt8], stderr: [UInt8]) {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else {
                throw Failure(description: "pipe failed: \(String(cString: strerror(errno)))")
            }
            // Our ends must not leak into other children (they would hold the pipe open).
            for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        defer {
            for fd in outPipe + errPipe where fd >= 0 { close(fd) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(path): \(String(cString: strerror(spawned)))")
        }

        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        if captureOutput {
            close(outPipe[1]); outPipe[1] = -1
            close(errPipe[1]); errPipe[1] = -1
            drain(out: outPipe[0], err: errPipe[0], stdout: &stdout, stderr: &stderr)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure(description: "waitpid failed: \(String(cString: strerror(errno)))") }
        }
        let signal = status & 0x7f
        let exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return (exitStatus, stdout, stderr)
    }

    /// Reads both pipes until both are closed, so a child writing a lot to one never blocks.
    private static func drain(out: Int32, err: Int32, stdout: inout [UInt8], stderr: inout [UInt8]) {
        var fds = [pollfd(fd: out, events: Int16(POLLIN), revents: 0), pollfd(fd: err, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while fds.contains(where: { $0.fd >= 0 }) {
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if index == 0 { stdout.append(contentsOf: buffer[0..<count]) } else { stderr.append(contentsOf: buffer[0..<count]) }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    fds[index].fd = -1
                }
            }
        }
    }
}
