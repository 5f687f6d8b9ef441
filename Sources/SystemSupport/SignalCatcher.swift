import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Turns signals into bytes on a pipe (the only async-signal-safe thing its handler does), so one loop can wait
/// for a deadline, forward signals to a child, and notice the child's exit, without a signal ever killing this
/// process half-way through a change.
///
/// This is the project's one signal mechanism outside the capture loop. A C signal handler cannot capture
/// context, so the pipe's write end lives in one atomic owned by this type; one catcher is active at a time
/// (a new one takes over the handler).
public final class SignalCatcher: @unchecked Sendable {
    public struct Caught: Equatable, Sendable {
        public var signal: Int32
        /// Sent by the kernel for the terminal (Ctrl-C, hangup): every process of the foreground process group
        /// got its own copy, so forwarding it to a child in that group would deliver it twice.
        public var fromTerminal: Bool
    }

    /// Signals that end a foreground program; `condition run` and `capture -- COMMAND` forward these.
    public static let terminating: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    private static let writeEnd = Atomic<Int32>(-1)
    private let readEnd: Int32
    private let writeEndOwned: Int32
    private let signals: [Int32]
    /// Terminating signals drained by `interrupted()` and not yet handed to anyone.
    public private(set) var pending: [Int32] = []

    /// Catches `signals` (and SIGCHLD when `childExits`) from now on, unblocking them in case a parent started
    /// us with them blocked (Foundation's `Process` does).
    public init(signals: [Int32] = SignalCatcher.terminating, childExits: Bool = false) throws(SystemCallError) {
        let fds = try SystemCall.makePipe(nonBlocking: true)
        readEnd = fds[0]
        writeEndOwned = fds[1]
        self.signals = signals + (childExits ? [SIGCHLD] : [])
        Self.writeEnd.store(fds[1], ordering: .sequentiallyConsistent)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { signal, info, _ in
            let fromKernel: UInt8 = (info?.pointee.si_code ?? 0) == 0x80 ? 1 : 0 // SI_KERNEL
            var message: (UInt8, UInt8) = (UInt8(truncatingIfNeeded: signal), fromKernel)
            let fd = SignalCatcher.writeEnd.load(ordering: .sequentiallyConsistent)
            if fd >= 0 { _ = withUnsafeBytes(of: &message) { write(fd, $0.baseAddress, 2) } }
        }
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in self.signals {
            sigaction(signal, &action, nil)
            sigaddset(&unblock, signal)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    deinit {
        _ = Self.writeEnd.compareExchange(expected: writeEndOwned, desired: -1, ordering: .sequentiallyConsistent)
        for signal in signals { Glibc.signal(signal, SIG_DFL) }
        close(readEnd)
        close(writeEndOwned)
    }

    /// What arrived so far, without blocking.
    public func drain() -> [Caught] {
        var received: [Caught] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            var index = 0
            while index + 1 < count {
                received.append(Caught(signal: Int32(buffer[index]), fromTerminal: buffer[index + 1] == 1))
                index += 2
            }
        }
        return received
    }

    /// Whether a terminating signal has arrived (checked between setup steps); it stays pending.
    public func interrupted() -> Bool {
        pending += drain().map(\.signal).filter { $0 != SIGCHLD }
        return !pending.isEmpty
    }

    /// Sleeps until `deadline` or until a signal other than SIGCHLD arrives (also one that came before this
    /// call); returns the signal, or nil at the deadline.
    public func wait(until deadline: Date) -> Int32? {
        while true {
            if interrupted() { return pending.removeFirst() }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, Int32(min(left * 1000, 1000).rounded(.up)))
        }
    }

    /// Waits for `pid` (our child) to exit, forwarding signals to it: those pending, and those arriving that the
    /// terminal did not already deliver to it. `onSignal` hears of each one (e.g. to stop a capture later).
    public func waitForwarding(to pid: pid_t, onSignal: (Int32) -> Void = { _ in }) -> ExitStatus {
        for signal in pending {
            kill(pid, signal)
            onSignal(signal)
        }
        pending.removeAll()
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return ExitStatus(waitStatus: status) }
            if result < 0 && errno != EINTR { return .exited(0) }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 250)
            for caught in drain() where caught.signal != SIGCHLD {
                if !caught.fromTerminal { kill(pid, caught.signal) }
                onSignal(caught.signal)
            }
        }
    }
}
