import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a child is started: where its standard streams go, its environment, and whether it leaves our process
/// group or session.
public struct SpawnOptions: Sendable {
    public enum Input: Sendable {
        case inherit, null
        /// A pipe whose write end `SpawnedProcess.stdin` returns (the caller writes and closes it).
        case pipe
    }
    public enum Output: Sendable { case inherit, null, pipe }
    public enum Grouping: Sendable {
        case inherit
        /// The child leads its own process group, so a terminal's Ctrl-C does not reach it.
        case newProcessGroup
        /// The child is detached from the terminal in a session of its own (watchdogs).
        case newSession
    }

    public var stdin: Input
    public var stdout: Output
    public var stderr: Output
    /// nil: this process's environment.
    public var environment: [String: String]?
    public var grouping: Grouping

    public init(stdin: Input = .inherit, stdout: Output = .inherit, stderr: Output = .inherit,
                environment: [String: String]? = nil, grouping: Grouping = .inherit) {
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.environment = environment
        self.grouping = grouping
    }
}

/// A started child: its pid and, for `.pipe` outputs, the read ends (owned by the caller).
public struct SpawnedProcess: Sendable {
    public var pid: pid_t
    public var stdout: Int32?
    public var stderr: Int32?
    /// The write end of standard input, for `.pipe` input.
    public var stdin: Int32? = nil
}

/// The one posix_spawn wrapper. Foundation's `Process` is not used: it needs a CFSocket wakeup pair that cannot
/// be created in a network namespace whose loopback is down, and then hangs in `waitUntilExit` (seen with
/// `ip netns exec NS condition ...` on a fresh namespace); nor does it expose process groups, sessions and
/// signal dispositions, which sandboxes need.
public enum ProcessSpawner {
    /// Starts `argv` (looked up on PATH when it has no slash). Only standard input, output and error reach the
    /// child, and it starts with default signal dispositions and nothing blocked, whatever this process set up.
    /// Throws `SystemCallError` with call "posix_spawnp" and errno ENOENT (not found) or EACCES (not executable)
    /// when the program cannot be started.
    public static func spawn(_ argv: [String], options: SpawnOptions = SpawnOptions()) throws(SystemCallError) -> SpawnedProcess {
        precondition(!argv.isEmpty, "spawn needs a program")
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        var inPipe: [Int32] = [-1, -1]
        func closeAll() { for fd in outPipe + errPipe + inPipe where fd >= 0 { close(fd) } }
        if case .pipe = options.stdout { outPipe = try SystemCall.makePipe() }
        if case .pipe = options.stderr {
            do { errPipe = try SystemCall.makePipe() } catch { closeAll(); throw error }
        }
        if case .pipe = options.stdin {
            do { inPipe = try SystemCall.makePipe() } catch { closeAll(); throw error }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch options.stdin {
        case .inherit: break
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .pipe: posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        }
        switch options.stdout {
        case .inherit: break
        case .null: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .pipe: posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        }
        switch options.stderr {
        case .inherit: break
        case .null: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .pipe: posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        }
        // As with sudo: a descriptor our own parent leaked to us (a pipe, Foundation's exit-notification socket)
        // must not outlive us in the command, a watchdog or a capture.
        closeFrom3(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        switch options.grouping {
        case .inherit: break
        case .newSession: flags |= 0x80 // POSIX_SPAWN_SETSID (glibc 2.26+)
        case .newProcessGroup:
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = options.environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            cArguments.forEach { free($0) }
            cEnvironment?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let code = cEnvironment.map { posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, $0) }
            ?? posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, environ)
        // The child has its copies of the write ends; ours must go so reads see end of file.
        for fd in [outPipe[1], errPipe[1], inPipe[0]] where fd >= 0 { close(fd) }
        guard code == 0 else {
            for fd in [outPipe[0], errPipe[0], inPipe[1]] where fd >= 0 { close(fd) }
            throw SystemCallError(call: "posix_spawnp", errno: code, subject: argv[0])
        }
        return SpawnedProcess(pid: pid, stdout: outPipe[0] >= 0 ? outPipe[0] : nil,
                              stderr: errPipe[0] >= 0 ? errPipe[0] : nil, stdin: inPipe[1] >= 0 ? inPipe[1] : nil)
    }

    /// Replaces this process with `argv` (looked up on PATH when it has no slash), as a shell's `exec` does: the same
    /// pid, terminal and process group, so the new program gets Ctrl-C and its exit status is ours. As with `spawn`,
    /// only standard input, output and error are passed on, and it starts with default signal dispositions and
    /// nothing blocked. Returns only by throwing `SystemCallError` (call "execvp").
    public static func replaceProcess(with argv: [String]) throws(SystemCallError) -> Never {
        precondition(!argv.isEmpty, "exec needs a program")
        ProcessTable.markDescriptorsCloseOnExec()
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { Glibc.signal(signal, SIG_DFL) }
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
        let cArguments = argv.map { strdup($0) } + [nil]
        execvp(argv[0], cArguments)
        let code = errno
        cArguments.forEach { free($0) }
        throw SystemCallError(call: "execvp", errno: code, subject: argv[0])
    }

    /// Runs `argv` to completion with standard input from /dev/null and returns how it ended with everything it
    /// printed (`captureOutput` false sends its output to /dev/null instead).
    public static func run(_ argv: [String], captureOutput: Bool = true) throws(SystemCallError)
        -> (status: ExitStatus, stdout: [UInt8], stderr: [UInt8]) {
        let output: SpawnOptions.Output = captureOutput ? .pipe : .null
        return try finish(spawn(argv, options: SpawnOptions(stdin: .null, stdout: output, stderr: output)), input: [])
    }

    /// For a child started with `.pipe` for all three streams: writes `input` to its standard input, closes it, and
    /// collects its output until it exits. Streams that are not pipes are skipped (`run` finishes this way too).
    /// A child that is gone before reading everything costs no SIGPIPE here (blocked while writing, and a pending
    /// one taken back): the write just stops.
    public static func finish(_ child: SpawnedProcess, input: [UInt8]) throws(SystemCallError)
        -> (status: ExitStatus, stdout: [UInt8], stderr: [UInt8]) {
        if let fd = child.stdin {
            var block = sigset_t(), previous = sigset_t()
            sigemptyset(&block)
            sigaddset(&block, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &block, &previous)
            var offset = 0
            while offset < input.count {
                let written = input.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
            close(fd)
            var pending = sigset_t()
            sigpending(&pending)
            if sigismember(&pending, SIGPIPE) == 1 {
                var zero = timespec(tv_sec: 0, tv_nsec: 0)
                _ = sigtimedwait(&block, nil, &zero)
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        if let out = child.stdout, let err = child.stderr {
            drain(out: out, err: err, stdout: &stdout, stderr: &stderr)
            close(out)
            close(err)
        }
        return (try waitForExit(child.pid), stdout, stderr)
    }

    /// Blocks until `pid` (our child) exits.
    public static func waitForExit(_ pid: pid_t) throws(SystemCallError) -> ExitStatus {
        var status: Int32 = 0
        try SystemCall.retrying("waitpid", subject: "\(pid)") { waitpid(pid, &status, 0) }
        return ExitStatus(waitStatus: status)
    }

    /// Waits up to `timeout` seconds for `pid` (our child) to exit; nil if it is still running (or not ours).
    public static func waitForExit(_ pid: pid_t, timeout: Double) -> ExitStatus? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        repeat {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return ExitStatus(waitStatus: status) }
            if result < 0 && errno != EINTR { return nil }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    /// Reads both pipes until both are closed, so a child writing a lot to one never blocks.
    private static func drain(out: Int32, err: Int32, stdout: inout [UInt8], stderr: inout [UInt8]) {
        var fds = [pollfd(fd: out, events: Int16(POLLIN), revents: 0), pollfd(fd: err, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while fds.contains(where: { $0.fd >= 0 }) {
            guard (try? SystemCall.retrying("poll", { poll(&fds, nfds_t(fds.count), -1) })) != nil else { return }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let fd = fds[index].fd
                let count = (try? SystemCall.retrying("read") { buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }) ?? 0
                if count > 0 {
                    if index == 0 { stdout.append(contentsOf: buffer[0..<count]) } else { stderr.append(contentsOf: buffer[0..<count]) }
                } else {
                    fds[index].fd = -1
                }
            }
        }
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module does not export;
    /// before that, each descriptor open now.
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
            if closeFrom(&actions, 3) == 0 { return }
        }
        for fd in ProcessTable.openDescriptors() where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}
