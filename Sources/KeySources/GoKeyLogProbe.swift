import Foundation
import SystemSupport

/// The Go key source: uprobes on `crypto/tls.(*Config).writeKeyLog` in the binaries a command runs, read through a
/// private tracefs instance whose event pid filter holds the command's process tree, turned into key log lines.
///
/// The uprobe events are global (`uprobe_events`), defined in a group of their own (`group`) and enabled only in the
/// instance, whose `set_event_pid` starts as the capturing process's own threads with `options/event-fork` on: every
/// process and thread they fork from then on (the command, its children, their threads) is in the filter, and
/// nothing else is, so another program running the same binary is never read. With `followExecs`, the instance also
/// has `sched:sched_process_exec`, and each binary the tree executes is probed as it is seen (see docs/tls.md for
/// the race that leaves).
public final class GoKeyLogProbe: @unchecked Sendable {
    /// What the source did with a binary, or could not do: typed facts, worded by the executable.
    public enum Notice: Sendable, Equatable {
        case probing(path: String, version: String, foundIn: GoKeyLogTarget.Found)
        case notProbed(path: String, reason: GoBinaryError)
        case cannotRead(path: String, reason: String)
        case probeRefused(path: String, reason: String)
        case unreadableEvent(reason: String)
    }

    public let tracefs: Tracefs
    public let instance: String
    public let group: String
    private let instancePath: String
    private let lines: @Sendable (String) -> Void
    private let notices: @Sendable (Notice) -> Void
    private let lock = NSLock()
    private var probed: Set<String> = []
    private var eventCount = 0
    private var stopping = false
    private var stopped = false
    private var pipe: Int32 = -1
    private var reader: JoinableThread?

    /// Makes the instance and its pid filter (`followPIDs`: the threads whose descendants are the command) and
    /// starts reading its `trace_pipe`. Nothing is probed until `probe(binary:)` or an exec is seen.
    public init(tracefs: Tracefs, instance: String, group: String, followPIDs: [pid_t], followExecs: Bool,
                lines: @escaping @Sendable (String) -> Void, notices: @escaping @Sendable (Notice) -> Void) throws {
        self.tracefs = tracefs
        self.instance = instance
        self.group = group
        self.lines = lines
        self.notices = notices
        tracefs.remove(instance: instance, group: group)  // a leftover of a killed capture with this name
        instancePath = try tracefs.makeInstance(instance)
        do {
            try tracefs.append("1\n", to: instancePath + "/options/event-fork")
            try tracefs.append(followPIDs.map(String.init).joined(separator: " ") + "\n", to: instancePath + "/set_event_pid")
            if followExecs { try tracefs.append("1\n", to: instancePath + "/events/sched/sched_process_exec/enable") }
            pipe = try SystemCall.retrying("open", subject: instancePath + "/trace_pipe") {
                open(instancePath + "/trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            }
            reader = try JoinableThread { [self] in readLoop() }
        } catch {
            if pipe >= 0 { close(pipe) }
            tracefs.remove(instance: instance, group: group)
            throw error
        }
    }

    deinit { stop() }

    /// The threads of this process now: with event-fork, whatever they start is followed.
    public static func ownThreads() -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let threads = tasks.compactMap { pid_t($0) }
        return threads.isEmpty ? [getpid()] : threads
    }

    /// Probes `writeKeyLog` in the binary at `path` (once per file), or says why not.
    public func probe(binary path: String) {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        lock.lock()
        let new = !stopping && probed.insert(resolved).inserted
        let number = eventCount
        if new { eventCount += 1 }
        lock.unlock()
        guard new else { return }
        let bytes: [UInt8]
        do {
            let mapped = try Data(contentsOf: URL(fileURLWithPath: resolved), options: .alwaysMapped)
            // Shells, curl, a browser: looked at through the mapping, never copied.
            guard Self.mayBeGo(mapped) else {
                notices(.notProbed(path: resolved, reason: .notGo))
                return
            }
            bytes = [UInt8](mapped)
        } catch {
            notices(.cannotRead(path: resolved, reason: "\(error.localizedDescription)"))
            return
        }
        let target: GoKeyLogTarget
        do {
            target = try GoKeyLogTarget.locate(in: bytes)
        } catch {
            notices(.notProbed(path: resolved, reason: error))
            return
        }
        let event = "keylog_\(number)"
        let definition = "p:\(group)/\(event) \(resolved):0x\(String(target.fileOffset, radix: 16)) \(GoKeyLogEvent.fetchArguments)"
        do {
            try tracefs.addUprobe(definition)
            try tracefs.append("1\n", to: "\(instancePath)/events/\(group)/\(event)/enable")
        } catch {
            notices(.probeRefused(path: resolved, reason: "\(error)"))
            return
        }
        notices(.probing(path: resolved, version: target.version.text, foundIn: target.foundIn))
    }

    private func isProbed(_ path: String) -> Bool {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        lock.lock()
        defer { lock.unlock() }
        return probed.contains(resolved)
    }

    /// Stops reading (after what the kernel holds now is read), disables and removes the instance and every event
    /// of the group. Safe to call more than once.
    public func stop() {
        lock.lock()
        let first = !stopping
        stopping = true
        lock.unlock()
        guard first else { return }
        reader?.join()
        if pipe >= 0 { close(pipe) }
        pipe = -1
        tracefs.remove(instance: instance, group: group)
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var partial: [UInt8] = []
        var draining = false
        while true {
            var descriptor = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 50)
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { read(pipe, $0.baseAddress, $0.count) }
                if count > 0 {
                    partial += buffer[..<count]
                    if let last = partial.lastIndex(of: UInt8(ascii: "\n")) {
                        for line in partial[...last].split(separator: UInt8(ascii: "\n")) { handle(line) }
                        partial.removeSubrange(...last)
                    }
                    continue
                }
            }
            // Nothing more to read now: leave when asked to, after one last empty poll.
            if isStopping {
                if draining { return }
                draining = true
            }
        }
    }

    private func handle(_ bytes: ArraySlice<UInt8>) {
        let line = String(decoding: bytes, as: UTF8.self)
        if let range = line.range(of: ": keylog_") {
            guard let fields = line[range.upperBound...].firstIndex(of: ":") else { return }
            do {
                lines(try GoKeyLogEvent.keyLogLine(fromFields: line[line.index(after: fields)...]))
            } catch {
                notices(.unreadableEvent(reason: error.description))
            }
        } else if let range = line.range(of: "sched_process_exec: filename=") {
            let rest = line[range.upperBound...]
            let filename = String(rest.prefix { $0 != " " })
            let pid = rest.range(of: " pid=").flatMap { Int32(rest[$0.upperBound...].prefix { $0.isNumber }) }
            guard let path = Self.executable(named: filename, pid: pid), !isProbed(path) else { return }
            // A binary not seen before: the process waits (SIGSTOP) while its file is read and probed, so its first
            // handshake, a round trip away at least, cannot pass before the probe is there. It continues at once
            // for a binary seen before, which is already probed or known not to be Go.
            if let pid { kill(pid, SIGSTOP) }
            defer { if let pid { kill(pid, SIGCONT) } }
            probe(binary: path)
        }
    }

    /// Whether a file may be a Go binary, from its section names alone: false for a non-ELF file and for an ELF
    /// file whose section headers name neither `.go.buildinfo` nor `.gopclntab`; true when it has no section
    /// headers (the full reader then looks for the tables by their magic).
    static func mayBeGo(_ file: Data) -> Bool {
        func integer(_ at: Int, _ size: Int) -> Int? {
            guard at >= 0, at + size <= file.count else { return nil }
            var value = 0
            for index in (0..<size).reversed() { value = value << 8 | Int(file[file.startIndex + at + index]) }
            return value
        }
        guard file.count >= 64, file.prefix(4) == Data([0x7f, 0x45, 0x4c, 0x46]), file[file.startIndex + 4] == 2,
              let sections = integer(40, 8), let count = integer(60, 2), let names = integer(62, 2),
              let entrySize = integer(58, 2), entrySize >= 64, sections > 0, count > 0, sections < file.count
        else { return file.count >= 64 && file.prefix(4) == Data([0x7f, 0x45, 0x4c, 0x46]) }
        guard names < count, let tableOffset = integer(sections + names * entrySize + 24, 8),
              let tableSize = integer(sections + names * entrySize + 32, 8), tableSize < 1 << 20,
              tableOffset >= 0, tableOffset + tableSize <= file.count else { return true }
        let table = file[(file.startIndex + tableOffset)..<(file.startIndex + tableOffset + tableSize)]
        return table.range(of: Data(".go.buildinfo".utf8)) != nil || table.range(of: Data(".gopclntab".utf8)) != nil
    }

    /// The file an exec event names, as a path in this mount namespace: absolute as given, else the process's
    /// `/proc/PID/exe` while it runs, else resolved against its working directory.
    static func executable(named filename: String, pid: pid_t?) -> String? {
        if filename.hasPrefix("/") { return filename }
        if let pid {
            if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") { return exe }
            if let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") {
                return cwd + "/" + filename
            }
        }
        return nil
    }
}

/// Appends key log lines to a file in one `write` each (`O_APPEND`), as a program writing `SSLKEYLOGFILE` does, so
/// the lines a probe reads reach the key log follower, `-w`'s Decryption Secrets Blocks and the closing read
/// exactly as the program's own would.
public final class KeyLogAppender: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()

    public init(path: String) throws(SystemCallError) {
        fd = try SystemCall.retrying("open", subject: path) { open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600) }
    }

    deinit { close(fd) }

    public func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        lock.lock()
        defer { lock.unlock() }
        _ = try? SystemCall.retrying("write") { bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
    }
}
