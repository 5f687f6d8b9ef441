import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// What `condition run` asks for beyond the sandbox itself: `capture` processes on the host end.
public struct SandboxRunRequest: Sendable {
    public var sandbox: SandboxOptions
    /// `capture` executable to spawn on the host interface for `--capture` / `--http`.
    public var captureExecutable: String?
    public var captureFile: String?
    public var printHTTP: Bool
    /// The `--http` capture prints JSON lines (`--json`).
    public var printJSON: Bool
    /// Give the sandbox's TLS key log to the `--http` capture as `--keylog FILE` (needs `sandbox.tlsKeyLog`
    /// and a `capture` that has the option).
    public var captureReadsKeyLog: Bool

    public init(sandbox: SandboxOptions, captureExecutable: String? = nil, captureFile: String? = nil,
                printHTTP: Bool = false, printJSON: Bool = false, captureReadsKeyLog: Bool = false) {
        self.sandbox = sandbox
        self.captureExecutable = captureExecutable
        self.captureFile = captureFile
        self.printHTTP = printHTTP
        self.printJSON = printJSON
        self.captureReadsKeyLog = captureReadsKeyLog
    }
}

/// Creates a sandbox, runs one command in it, and removes it, on every way out:
/// normal exit and crash of the command (waitpid), Ctrl-C/SIGTERM/SIGHUP to the owner (forwarded to the
/// command, then teardown), SIGKILL of the owner (the watchdog process notices the owner is gone within
/// 200 ms; failing that, the next run or `condition sandboxes` reaps records whose owner is dead).
public struct SandboxSession {
    public var settings: SandboxSettings
    public var runner: any CommandRunner
    /// Writes status lines (interface name, teardown problems) for the user.
    public var log: @Sendable (String) -> Void

    public init(settings: SandboxSettings, runner: any CommandRunner, log: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.runner = runner
        self.log = log
    }

    /// Runs the request. `prepare` runs on the fresh sandbox before anything is announced or started (the
    /// conditioner applies its profile there; an error aborts the run with everything removed). Returns the exit
    /// code to exit with: the command's, or 128 + the signal that killed it.
    public func run(_ request: SandboxRunRequest, prepare: (RunningSandbox) throws -> Void = { _ in }) throws -> Int32 {
        let catcher = try SignalCatcher(childExits: true)
        let sandbox = try RunningSandbox(request.sandbox, settings: settings, runner: runner)
        var captures: [pid_t] = []
        do {
            try prepare(sandbox)
            let identity = sandbox.identity
            log("sandbox \(identity.id): interface \(identity.hostInterface) (host \(identity.hostIPv4), "
                + "sandbox \(identity.namespaceIPv4)), profile \(request.sandbox.label)")
            log("watch it from another shell with: capture -i \(identity.hostInterface) --http")
            captures = try startCaptures(request, sandbox: sandbox)
            try sandbox.update { $0.capturePIDs = captures }
            if catcher.interrupted() {
                teardown(sandbox, captures: captures)
                return 130
            }
            let child = try sandbox.startCommand()
            let status = catcher.waitForwarding(to: child)
            sandbox.commandEnded()
            teardown(sandbox, captures: captures)
            if let file = request.captureFile { request.sandbox.invokingUser?.give(file) }
            return status.shellCode
        } catch {
            teardown(sandbox, captures: captures)
            throw error
        }
    }

    /// `capture` on the host end sees every packet the sandbox sends or receives, and nothing else.
    func startCaptures(_ request: SandboxRunRequest, sandbox: RunningSandbox) throws -> [pid_t] {
        guard request.captureFile != nil || request.printHTTP else { return [] }
        guard let capture = request.captureExecutable, FileManager.default.isExecutableFile(atPath: capture) else {
            throw SandboxError.missingProgram(request.captureExecutable ?? "capture",
                                              hint: "--capture and --http use the `capture` executable built next to `condition` (swift build)")
        }
        // One capture process does both (`--http -w FILE` prints exchanges and saves every packet): two would
        // each print "listening on" and their closing counts.
        var arguments = [capture, "-i", sandbox.identity.hostInterface]
        if request.printHTTP {
            arguments += ["--http", "-l"]
            if request.printJSON { arguments.append("--json") }
            if request.captureReadsKeyLog, let keyLog = sandbox.tlsKeyLogPath { arguments += ["--keylog", keyLog] }
        }
        if let file = request.captureFile {
            try? FileManager.default.removeItem(atPath: file)
            arguments += ["-w", file]
        }
        // The command starts once the capture says it is capturing (it creates the ready file when its handle is
        // live): none of the command's first packets is missed, however long the capture takes to start on a busy
        // machine.
        let ready = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-ready-\(sandbox.identity.id)").path
        unlink(ready)
        defer { unlink(ready) }
        arguments += ["--ready-file", ready]
        let options = SpawnOptions(stdin: .null, stdout: request.printHTTP ? .inherit : .null, grouping: .newProcessGroup)
        let pid = try ProcessSpawner.spawn(arguments, options: options).pid
        let deadline = Date().addingTimeInterval(10)
        var status: Int32 = 0
        while !FileManager.default.fileExists(atPath: ready) {
            if waitpid(pid, &status, WNOHANG) == pid {
                log("warning: capture (pid \(pid)) stopped at once with status \(ExitStatus(waitStatus: status).shellCode); "
                    + "see its message above. The command runs anyway.")
                return []
            }
            if Date() >= deadline {
                log("warning: capture is not capturing on \(sandbox.identity.hostInterface) after 10 s; "
                    + "the command's first packets may be missing")
                break
            }
            usleep(10_000)
        }
        return [pid]
    }

    /// Stops captures gently (SIGINT lets them flush), then removes the sandbox.
    func teardown(_ sandbox: RunningSandbox, captures: [pid_t]) {
        if !captures.isEmpty { usleep(200_000) } // the last packets still in flight to the capture handles
        for pid in captures { kill(pid, SIGINT) }
        for pid in captures where ProcessSpawner.waitForExit(pid, timeout: 3) == nil {
            kill(pid, SIGKILL)
            _ = ProcessSpawner.waitForExit(pid, timeout: 1)
        }
        try? sandbox.update { $0.capturePIDs = [] } // reaped above
        sandbox.remove()
    }
}
