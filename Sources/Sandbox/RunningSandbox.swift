import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where sandboxes are kept and how they are guarded; given by the executable.
public struct SandboxSettings: Sendable {
    public var registry: SandboxRegistry
    /// The host's resolver file, rewritten for the sandbox (see `SandboxResolverConfiguration`).
    public var resolvConfPath: String
    /// The argv of a detached watchdog for sandbox `id` in `registryDirectory` (see `SandboxReaper.watch`),
    /// started in a session of its own; nil starts none (then only a later run or `sandboxes` reaps).
    public var watchdogCommand: (@Sendable (_ id: String, _ registryDirectory: String) -> [String])?

    public init(registry: SandboxRegistry = SandboxRegistry(), resolvConfPath: String = "/etc/resolv.conf",
                watchdogCommand: (@Sendable (String, String) -> [String])? = nil) {
        self.registry = registry
        self.resolvConfPath = resolvConfPath
        self.watchdogCommand = watchdogCommand
    }
}

/// What one sandboxed command needs.
public struct SandboxOptions: Sendable {
    public var command: [String]
    /// Shown as the profile by `condition sandboxes`; "none" for a sandbox that nobody conditions.
    public var label: String
    /// The command's environment before the sandbox adds its own variables (the executable's environment).
    public var environment: [String: String]
    /// Run the command as this user again (under sudo).
    public var invokingUser: InvokingUser?
    /// Make a private TLS key log file and point SSLKEYLOGFILE and NODE_OPTIONS at it.
    public var tlsKeyLog: Bool
    /// Reject UDP port 443 so QUIC clients fall back to TCP.
    public var blockQUIC: Bool

    public init(command: [String], label: String = "none", environment: [String: String] = [:],
                invokingUser: InvokingUser? = nil, tlsKeyLog: Bool = false, blockQUIC: Bool = false) {
        self.command = command
        self.label = label
        self.environment = environment
        self.invokingUser = invokingUser
        self.tlsKeyLog = tlsKeyLog
        self.blockQUIC = blockQUIC
    }
}

/// A sandbox made for one command: a network namespace joined to the host by a veth pair (capture on
/// `identity.hostInterface`), recorded in the registry from before its first network object exists, so the
/// owner, its watchdog and a later reaper can all remove it. Used by `condition run` and `capture -- COMMAND`.
public final class RunningSandbox: @unchecked Sendable {
    public private(set) var record: SandboxRecord
    public var identity: SandboxIdentity { record.identity }
    /// The private TLS key log the command writes, when asked for.
    public let tlsKeyLogPath: String?
    public let options: SandboxOptions
    /// The host's resolver file as it was when the sandbox was made (where `answerDNS` forwards to).
    public let hostResolvConf: String
    public let registry: SandboxRegistry
    let runner: any CommandRunner
    private var removed = false

    /// Reaps sandboxes whose owner died, then creates a new one. Needs root. On any failure nothing is left.
    public init(_ options: SandboxOptions, settings: SandboxSettings, runner: any CommandRunner) throws {
        guard geteuid() == 0 else { throw SandboxError.notRoot }
        let registry = settings.registry
        SandboxReaper(registry: registry, runner: runner).reapStale()
        let forwarding = SandboxForwarding(registry: registry)
        let hostResolv = (try? String(contentsOfFile: settings.resolvConfPath, encoding: .utf8)) ?? ""
        record = try registry.withLock {
            let facts = try SandboxHostFacts.current(runner: runner)
            let identity = try registry.allocateIdentity(hostPrefixes: facts.ipv4Prefixes,
                                                         existingNamespaces: facts.namespaces)
            let resolver = SandboxResolverConfiguration(hostResolvConf: hostResolv, hostAddress: identity.hostIPv4)
            let plan = SandboxNetworkPlan(identity: identity, uplinkInterface: facts.defaultInterface,
                                          uplinkIPv6Interface: facts.defaultIPv6Interface,
                                          loopbackResolver: resolver.loopbackResolver, blockQUIC: options.blockQUIC)
            let record = SandboxRecord(identity: identity, profile: options.label, command: options.command,
                                       ownerPID: getpid(), ownerStartTime: ProcessTable.startTime(of: getpid()),
                                       uplinkInterface: facts.defaultInterface,
                                       uplinkIPv6Interface: facts.defaultIPv6Interface,
                                       scratchDirectory: options.tlsKeyLog
                                           ? registry.directory.appendingPathComponent("\(identity.id).files").path : nil)
            // Recorded first, so a kill at any later point is reaped.
            try registry.save(record)
            do {
                try SandboxLifecycle.create(plan, resolver: resolver, runner: runner)
                try forwarding.enable(ipv6: facts.defaultIPv6Interface != nil)
            } catch {
                SandboxReaper.removeFiles(of: record)
                registry.remove(id: identity.id)
                forwarding.restoreIfUnused(remainingSandboxes: registry.records().count)
                throw error
            }
            return record
        }
        self.registry = registry
        self.runner = runner
        self.options = options
        hostResolvConf = hostResolv
        do {
            tlsKeyLogPath = try record.scratchDirectory.map {
                try Self.makeKeyLog(in: $0, for: options.invokingUser)
            }
        } catch {
            tlsKeyLogPath = nil
            remove()
            throw error
        }
        if let watchdog = settings.watchdogCommand {
            _ = try? ProcessSpawner.spawn(watchdog(record.identity.id, registry.directory.path),
                                          options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null,
                                                                grouping: .newSession))
        }
    }

    /// An empty key log only the command's user (and root) can read: it holds the secrets of every connection.
    static func makeKeyLog(in directory: String, for user: InvokingUser?) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let path = directory + "/tls-keys.log"
        let fd = try SystemCall.retrying("open", subject: path) { open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600) }
        close(fd)
        user?.give(directory)
        user?.give(path)
        return path
    }

    /// Saves a change to the record (conditions applied, captures started).
    public func update(_ change: (inout SandboxRecord) -> Void) throws {
        change(&record)
        try registry.save(record)
    }

    /// `ip netns exec` (which bind-mounts /etc/netns/NAME/resolv.conf and execs in place, so the pid is the
    /// command's), then, under sudo, `setpriv` back to the invoking user.
    public var commandLine: [String] {
        ["ip", "netns", "exec", identity.namespace] + (options.invokingUser?.commandPrefix ?? []) + options.command
    }

    /// The caller's environment (under sudo with the invoking user's HOME, USER, LOGNAME, SHELL), plus
    /// TAPKIT_SANDBOX_ID / _INTERFACE / _HOST (the host end's address, where host loopback services are) and,
    /// with a key log, SSLKEYLOGFILE and NODE_OPTIONS.
    public var commandEnvironment: [String: String] {
        var environment = options.invokingUser?.environment(from: options.environment) ?? options.environment
        environment["TAPKIT_SANDBOX_ID"] = identity.id
        environment["TAPKIT_SANDBOX_INTERFACE"] = identity.hostInterface
        environment["TAPKIT_SANDBOX_HOST"] = identity.hostIPv4
        if let path = tlsKeyLogPath { environment = TLSKeyLogEnvironment.variables(keyLogPath: path, adding: environment) }
        return environment
    }

    /// Starts the command inside (in this process's group, so the terminal's Ctrl-C reaches it as it would
    /// without the sandbox) and records its pid.
    public func startCommand() throws -> pid_t {
        let child = try ProcessSpawner.spawn(commandLine, options: SpawnOptions(environment: commandEnvironment)).pid
        try? update { $0.childPID = child }
        return child
    }

    /// The command was reaped: its pid may be reused now, so teardown must not signal it.
    public func commandEnded() {
        try? update { $0.childPID = nil }
    }

    /// Removes the sandbox: every process left inside, recorded helper processes, network objects, files and the
    /// record. Safe to call more than once.
    public func remove() {
        guard !removed else { return }
        removed = true
        SandboxReaper(registry: registry, runner: runner).remove(record)
    }
}
