import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `condition run` asks for.
public struct SandboxRunRequest: Sendable {
    public var command: [String]
    /// `capture` executable to spawn on the host interface for `--capture` / `--http`.
    public var captureExecutable: String?
    public var captureFile: String?
    public var printHTTP: Bool
    /// The `condition` executable, re-run as `__sandbox-watchdog ID`.
    public var watchdogExecutable: String?

    public init(command: [String], captureExecutable: String? = nil, captureFile: String? = nil,
                printHTTP: Bool = false, watchdogExecutable: String? = nil) {
        self.command = command
        self.captureExecutable = captureExecutable
        self.captureFile = captureFile
        self.printHTTP = printHTTP
        self.watchdogExecutable = watchdogExecutable
    }
}

/// Creates a sandbox, runs one command in it, and removes it, on every way out:
/// normal exit and crash of the command (waitpid), Ctrl-C/SIGTERM/SIGHUP to `condition` (forwarded to the
/// command, then teardown), SIGKILL of `condition` (the watchdog process notices the owner is gone within
/// 200 ms; failing that, the next `condition run`/`sandboxes` reaps records whose owner is dead).
public struct SandboxSession {
    public var registry: SandboxRegistry
    /// Writes status lines (interface name, teardown problems) for the user.
    public var log: @Sendable (String) -> Void

    public init(registry: SandboxRegistry = .standard, log: @escaping @Sendable (String) -> Void) {
        self.registry = registry
        self.log = log
    }

    /// Runs the request with `profile` on the veth ends (applied before the command starts; an error aborts the
    /// run with everything removed). Returns the exit code to exit with.
    public func run(_ request: SandboxRunRequest, profile: Profile, runner: any CommandRunner = ProcessRunner()) throws -> Int32 {
        guard geteuid() == 0 else { throw SandboxError.notRoot }
        let relay = SandboxSignalRelay()
        try reapStale()

        let forwarding = SandboxForwarding(registry: registry)
        // TAPKIT_RESOLV_CONF stands in for the host's file (tests, or a resolver setup kept elsewhere).
        let resolvPath = ProcessInfo.processInfo.environment["TAPKIT_RESOLV_CONF"] ?? "/etc/resolv.conf"
        let hostResolv = (try? String(contentsOfFile: resolvPath, encoding: .utf8)) ?? ""
        var record: SandboxRecord = try registry.withLock {
            let facts = try SandboxHostFacts.current(runner: runner)
            let identity = try registry.allocateIdentity(hostPrefixes: facts.ipv4Prefixes,
                                                         existingNamespaces: facts.namespaces)
            let resolver = SandboxResolverConfiguration(hostResolvConf: hostResolv, hostAddress: identity.hostIPv4)
            let plan = SandboxNetworkPlan(identity: identity, uplinkInterface: facts.defaultInterface,
                                          uplinkIPv6Interface: facts.defaultIPv6Interface,
                                          loopbackResolver: resolver.loopbackResolver)
            let record = SandboxRecord(identity: identity, profile: profile.name, command: request.command,
                                       ownerPID: getpid(), ownerStartTime: SandboxProcesses.startTime(of: getpid()),
                                       uplinkInterface: facts.defaultInterface,
                                       uplinkIPv6Interface: facts.defaultIPv6Interface)
            // Recorded first, so a kill at any later point is reaped.
            try registry.save(record)
            do {
                try SandboxLifecycle.create(plan, resolver: resolver, runner: runner)
                try forwarding.enable(ipv6: facts.defaultIPv6Interface != nil)
            } catch {
                registry.remove(id: identity.id)
                forwarding.restoreIfUnused(remainingSandboxes: registry.records().count)
                throw error
            }
            return record
        }
        let identity = record.identity
        var captures: [pid_t] = []

        do {
            if let watchdog = request.watchdogExecutable {
                _ = try? SandboxProcesses.spawn([watchdog, "__sandbox-watchdog", identity.id],
                                                stdout: .null, stderr: .null, stdinNull: true, newSession: true)
            }
            log("sandbox \(identity.id): interface \(identity.hostInterface) (host \(identity.hostIPv4), "
                + "sandbox \(identity.namespaceIPv4)), profile \(profile.name)")
            log("watch it from another shell with: capture -i \(identity.hostInterface) --http")
            try SandboxConditioning.apply(profile, to: identity, runner: runner)
            record.conditions = SandboxConditions(profile)
            captures = try startCaptures(request, on: identity.hostInterface)
            record.capturePIDs = captures
            try registry.save(record)
            if relay.interrupted() {
                teardown(record, captures: captures)
                return 130
            }
            let child = try SandboxProcesses.spawn(commandLine(for: request.command, in: identity),
                                                   environment: Self.userEnvironment(identity: identity))
            record.childPID = child
            try? registry.save(record)
            let status = relay.waitForwarding(to: child)
            record.childPID = nil // reaped: its pid may be reused now
            teardown(record, captures: captures)
            if let file = request.captureFile { Self.giveToInvokingUser(file) }
            return SandboxProcesses.exitCode(fromWaitStatus: status)
        } catch {
            teardown(record, captures: captures)
            throw error
        }
    }

    /// `ip netns exec` (which bind-mounts /etc/netns/NAME/resolv.conf and execs in place, so the pid is the
    /// command's), then, when `condition` runs under sudo, `setpriv` back to the invoking user.
    func commandLine(for command: [String], in identity: SandboxIdentity) -> [String] {
        var argv = ["ip", "netns", "exec", identity.namespace]
        let environment = ProcessInfo.processInfo.environment
        if geteuid() == 0, let uid = environment["SUDO_UID"], let gid = environment["SUDO_GID"],
           uid != "0", UInt32(uid) != nil, UInt32(gid) != nil {
            argv += ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--"]
        }
        return argv + command
    }

    /// The caller's environment; under sudo, HOME/USER/LOGNAME/SHELL are those of the invoking user.
    /// Plus TAPKIT_SANDBOX_ID / _INTERFACE / _HOST (the host end's address, where host loopback services are).
    static func userEnvironment(identity: SandboxIdentity) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["TAPKIT_SANDBOX_ID"] = identity.id
        environment["TAPKIT_SANDBOX_INTERFACE"] = identity.hostInterface
        environment["TAPKIT_SANDBOX_HOST"] = identity.hostIPv4
        guard let uidText = environment["SUDO_UID"], let uid = uid_t(uidText), uid != 0,
              let entry = getpwuid(uid) else { return environment }
        environment["HOME"] = String(cString: entry.pointee.pw_dir)
        environment["USER"] = String(cString: entry.pointee.pw_name)
        environment["LOGNAME"] = String(cString: entry.pointee.pw_name)
        environment["SHELL"] = String(cString: entry.pointee.pw_shell)
        return environment
    }

    /// Under sudo, the pcap belongs to the user who asked for it, not to root.
    static func giveToInvokingUser(_ path: String) {
        let environment = ProcessInfo.processInfo.environment
        guard geteuid() == 0, let uid = environment["SUDO_UID"].flatMap(uid_t.init),
              let gid = environment["SUDO_GID"].flatMap(gid_t.init), uid != 0 else { return }
        _ = chown(path, uid, gid)
    }

    /// `capture` on the host end sees every packet the sandbox sends or receives, and nothing else.
    func startCaptures(_ request: SandboxRunRequest, on interface: String) throws -> [pid_t] {
        guard request.captureFile != nil || request.printHTTP else { return [] }
        guard let capture = request.captureExecutable, FileManager.default.isExecutableFile(atPath: capture) else {
            throw SandboxError.missingProgram(request.captureExecutable ?? "capture",
                                              hint: "--capture and --http use the `capture` executable built next to `condition` (swift build)")
        }
        var pids: [pid_t] = []
        if let file = request.captureFile {
            try? FileManager.default.removeItem(atPath: file)
            pids.append(try SandboxProcesses.spawn([capture, "-i", interface, "-w", file], stdout: .null,
                                                   stdinNull: true, newProcessGroup: true))
            // The file appears once the handle is live; wait for it so the command's first packets are in it.
            let deadline = Date().addingTimeInterval(5)
            while !FileManager.default.fileExists(atPath: file), Date() < deadline { usleep(20_000) }
            if !FileManager.default.fileExists(atPath: file) {
                log("warning: capture has not created \(file) yet; the first packets may be missing")
            }
        }
        if request.printHTTP {
            pids.append(try SandboxProcesses.spawn([capture, "-i", interface, "--http", "-l"], stdinNull: true,
                                                   newProcessGroup: true))
            usleep(300_000)
        }
        for pid in pids {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                log("warning: capture (pid \(pid)) stopped at once with status \(SandboxProcesses.exitCode(fromWaitStatus: status)); "
                    + "see its message above. The command runs anyway.")
            }
        }
        return pids.filter { kill($0, 0) == 0 }
    }

    /// Stops captures gently (SIGINT lets them flush), then removes the sandbox under the registry lock.
    func teardown(_ record: SandboxRecord, captures: [pid_t]) {
        if !captures.isEmpty { usleep(200_000) } // the last packets still in flight to the capture handles
        for pid in captures { kill(pid, SIGINT) }
        for pid in captures where SandboxProcesses.wait(pid: pid, timeout: 3) == nil {
            kill(pid, SIGKILL)
            _ = SandboxProcesses.wait(pid: pid, timeout: 1)
        }
        var record = record
        record.capturePIDs = [] // reaped above
        Self.remove(record, registry: registry)
    }

    static func remove(_ record: SandboxRecord, registry: SandboxRegistry) {
        _ = try? registry.withLock {
            SandboxLifecycle.destroy(record.identity, pids: [record.childPID].compactMap { $0 } + record.capturePIDs)
            registry.remove(id: record.identity.id)
            SandboxForwarding(registry: registry).restoreIfUnused(remainingSandboxes: registry.records().count)
        }
    }

    /// Removes sandboxes whose owning `condition` is gone (killed with SIGKILL, or the machine's watchdog
    /// also died). Returns the ids removed.
    @discardableResult
    public func reapStale() throws -> [String] {
        guard geteuid() == 0 else { return [] }
        let stale = registry.records().filter { !$0.ownerIsAlive }
        for record in stale { Self.remove(record, registry: registry) }
        return stale.map(\.identity.id)
    }

    /// The watchdog: polls the owner every 200 ms; when it is gone and the record is still there, tears down.
    public static func watch(id: String, registry: SandboxRegistry = .standard) {
        while true {
            guard let record = registry.record(id: id) else { return }
            if !record.ownerIsAlive {
                remove(record, registry: registry)
                return
            }
            usleep(200_000)
        }
    }
}
