import Foundation
#if canImport(Glibc)
import Glibc
#endif

// The write end of the self-pipe the signal handler reports into; set once before handlers are installed.
nonisolated(unsafe) private var relayWriteFD: Int32 = -1

/// Turns SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGCHLD into bytes on a pipe (the only async-signal-safe thing
/// a handler does here), so one loop can both forward signals to the command under test and notice its exit.
public final class SandboxSignalRelay: @unchecked Sendable {
    public static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    private var readFD: Int32 = -1
    /// Signals that arrived before there was a child to forward them to.
    public private(set) var pending: [Int32] = []

    public init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readFD = fds[0]
        relayWriteFD = fds[1]
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { signal, info, _ in
            // Byte 2 says whether the terminal (the kernel) sent it: then the child, being in the same
            // foreground process group, already got its own copy and must not get a second one.
            let fromKernel: UInt8 = (info?.pointee.si_code ?? 0) == 0x80 ? 1 : 0 // SI_KERNEL
            var message: (UInt8, UInt8) = (UInt8(truncatingIfNeeded: signal), fromKernel)
            _ = withUnsafeBytes(of: &message) { write(relayWriteFD, $0.baseAddress, 2) }
        }
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        for signal in Self.forwarded + [SIGCHLD] { sigaction(signal, &action, nil) }
        // A parent may have started us with these blocked (Foundation's Process does); they must arrive.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in Self.forwarded + [SIGCHLD] { sigaddset(&unblock, signal) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// Reads what the handler reported so far, without blocking.
    private func drain() -> [(signal: Int32, fromTerminal: Bool)] {
        var received: [(Int32, Bool)] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readFD, &buffer, buffer.count)
            guard count > 0 else { break }
            var index = 0
            while index + 1 < count {
                received.append((Int32(buffer[index]), buffer[index + 1] == 1))
                index += 2
            }
        }
        return received
    }

    /// Whether a terminating signal has arrived (checked between setup steps).
    public func interrupted() -> Bool {
        pending += drain().map(\.signal).filter { $0 != SIGCHLD }
        return !pending.isEmpty
    }

    /// Waits for `pid` to exit, forwarding signals to it; returns its wait status.
    public func waitForwarding(to pid: pid_t) -> Int32 {
        for signal in pending { kill(pid, signal) }
        pending.removeAll()
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return status }
            if result < 0 && errno != EINTR { return 0 }
            var poller = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 250)
            for (signal, fromTerminal) in drain() where signal != SIGCHLD && !fromTerminal {
                kill(pid, signal)
            }
        }
    }
}
