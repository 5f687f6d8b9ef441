import Foundation
import SystemSupport
import Testing

@Suite("spawning and exit statuses")
struct SpawnTests {
    @Test("run captures both streams and the exit code")
    func runCaptures() throws {
        let result = try ProcessSpawner.run(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(result.status == .exited(3))
        #expect(String(decoding: result.stdout, as: UTF8.self) == "out\n")
        #expect(String(decoding: result.stderr, as: UTF8.self) == "err\n")
    }

    @Test("a signal death is 128 + N, as shells report it, and said in words")
    func signalled() throws {
        let result = try ProcessSpawner.run(["/bin/sh", "-c", "kill -TERM $$"])
        #expect(result.status == .signalled(SIGTERM))
        #expect(result.status.shellCode == 128 + SIGTERM)
        #expect("\(result.status)" == "killed by signal 15")
        #expect("\(ExitStatus.exited(1))" == "exited with status 1")
    }

    @Test("a program that is not there is a typed error naming the call and the program")
    func missingProgram() {
        #expect(throws: SystemCallError(call: "posix_spawnp", errno: ENOENT, subject: "tkx-no-such-program")) {
            try ProcessSpawner.spawn(["tkx-no-such-program"])
        }
        let error = SystemCallError(call: "open", errno: EACCES, subject: "/run/x.lock")
        #expect(error.description == "open /run/x.lock failed: Permission denied (errno 13)")
    }

    @Test("the child gets only standard descriptors, and a large output does not block")
    func descriptorsAndLargeOutput() throws {
        let fds = try SystemCall.makePipe()
        defer { fds.forEach { close($0) } }
        // Without close-on-exec, the pipe would be open in the child as fds[0].
        _ = fcntl(fds[0], F_SETFD, 0)
        let listing = try ProcessSpawner.run(["/bin/sh", "-c", "ls /proc/self/fd | wc -l; head -c 300000 /dev/zero"])
        let text = String(decoding: listing.stdout.prefix { $0 != 0x0a }, as: UTF8.self)
        // 0, 1, 2 and the one ls opens to read the directory.
        #expect(Int(text.trimmingCharacters(in: .whitespaces)) == 4, "\(text)")
        #expect(listing.stdout.count == text.utf8.count + 1 + 300_000)
    }

    @Test("waitForExit with a timeout returns nil for a child still running")
    func waitTimeout() throws {
        let child = try ProcessSpawner.spawn(["sleep", "5"], options: SpawnOptions(stdin: .null))
        #expect(ProcessSpawner.waitForExit(child.pid, timeout: 0.1) == nil)
        #expect(ProcessTable.isAlive(pid: child.pid, startTime: ProcessTable.startTime(of: child.pid)))
        kill(child.pid, SIGKILL)
        #expect(try ProcessSpawner.waitForExit(child.pid) == .signalled(SIGKILL))
        #expect(!ProcessTable.isAlive(pid: child.pid, startTime: nil))
    }
}

@Suite("locks, signals and command lookup")
struct PlumbingTests {
    @Test("a lock held here keeps another process out, and is released after the body")
    func fileLock() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-lock-\(UUID().uuidString)").path
        defer { unlink(path) }
        let inside = try FileLock.withExclusiveLock(path: path) {
            try ProcessSpawner.run(["flock", "-n", path, "true"]).status
        }
        #expect(inside == .exited(1))
        #expect(try ProcessSpawner.run(["flock", "-n", path, "true"]).status == .exited(0))
    }

    @Test("a lock file that cannot be opened is an error naming open and the path, never a silent go-ahead")
    func lockFailure() {
        #expect(throws: SystemCallError(call: "open", errno: ENOENT, subject: "/nonexistent-tkx/x.lock")) {
            try FileLock.withExclusiveLock(path: "/nonexistent-tkx/x.lock") {}
        }
    }

    @Test("the catcher wakes a wait on a signal that arrived before it, and forwards to a child")
    func signals() throws {
        let catcher = try SignalCatcher(signals: [SIGUSR1], childExits: true)
        kill(getpid(), SIGUSR1)
        let started = Date()
        #expect(catcher.wait(until: Date().addingTimeInterval(5)) == SIGUSR1)
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(catcher.wait(until: Date().addingTimeInterval(0.1)) == nil)

        let child = try ProcessSpawner.spawn(["sleep", "5"], options: SpawnOptions(stdin: .null))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { kill(getpid(), SIGUSR1) }
        #expect(catcher.waitForwarding(to: child.pid) == .signalled(SIGUSR1))
    }

    @Test("command lookup answers as a shell: 127 not found, 126 not executable")
    func lookup() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-path-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("plain").path
        _ = FileManager.default.createFile(atPath: plain, contents: Data("echo\n".utf8), attributes: [.posixPermissions: 0o644])
        let shell = ExecutableLookup.resolve("sh", searchPath: "/tkx-nowhere:/usr/bin:/bin")
        #expect(shell == .found("/usr/bin/sh") || shell == .found("/bin/sh"), "\(shell)")
        #expect(ExecutableLookup.resolve("tkx-missing", searchPath: "/usr/bin").shellStatus == 127)
        #expect(ExecutableLookup.resolve("tkx-missing", searchPath: "/usr/bin").message == "tkx-missing: command not found")
        #expect(ExecutableLookup.resolve("/tkx/missing", searchPath: "").message == "/tkx/missing: No such file or directory")
        #expect(ExecutableLookup.resolve(directory.path, searchPath: "").shellStatus == 126)
        #expect(ExecutableLookup.resolve("plain", searchPath: directory.path)
                == .notExecutable(path: plain, reason: "Permission denied"))
    }
}

@Suite("Foundation's file errors in words")
struct SystemReasonTests {
    /// Foundation on Linux reports these as NSCocoaErrorDomain 256 (or 4) over a Swift POSIXError: users must see
    /// the errno's words, never "The operation could not be completed".
    @Test(arguments: [("/tmp", "Is a directory"), ("/nonexistent-tapkit/file", "No such file or directory")])
    func readingSaysTheErrno(path: String, words: String) throws {
        let error = try #require(throws: (any Error).self) { try Data(contentsOf: URL(fileURLWithPath: path)) }
        #expect(systemReason(error) == words)
    }
}
