import Foundation
import Sandbox
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// What is applied to a sandbox's veth pair, kept in its registry record so that `apply --sandbox` can
/// switch in place (the plan builder's switch needs the old settings, and the profile file may have changed),
/// and so that the sandbox's user-space engine follows the profile.
public struct SandboxConditions: Codable, Sendable, Equatable {
    public var name: String
    /// Records of earlier versions kept four of these fields; the others then read as zero.
    public var downlink: LinkSettings
    public var uplink: LinkSettings
    public var dnsDelayMicroseconds: UInt64
    /// Absent in records written before faults reached sandboxes.
    public var faults: ConnectionFaults?
    /// What carries delay and loss here: netem, or the user-space engine (`.userspace`: its table, queue rules and
    /// process are in the sandbox's namespace, and stay until the sandbox goes). nil while only htb was needed (and
    /// in records of earlier versions, which knew netem alone).
    public var engine: ConditioningEngine?

    public init(_ profile: Profile, engine: ConditioningEngine? = nil) {
        name = profile.name
        downlink = profile.downlink
        uplink = profile.uplink
        dnsDelayMicroseconds = profile.dnsDelayMicroseconds
        faults = profile.faults?.isEmpty == false ? profile.faults : nil
        self.engine = engine
    }

    public var profile: Profile {
        Profile(name: name, downlink: downlink, uplink: uplink, dnsDelayMicroseconds: dnsDelayMicroseconds, faults: faults)
    }

    /// The form kept in a sandbox's registry record (which does not know the conditioner's types).
    public var recordText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    public init?(recordText: String?) {
        guard let recordText, let decoded = try? JSONDecoder().decode(Self.self, from: Data(recordText.utf8)) else {
            return nil
        }
        self = decoded
    }
}

/// Conditions a sandbox with the conditioner's plan builder: the host end's egress is what the sandbox
/// receives (downlink), the namespace end's egress what it sends (uplink, with the DNS delay, since DNS
/// queries leave through it). No ifb: each direction already has an egress of its own. Connection faults are
/// the interface's fault table, made inside the sandbox's namespace on its end of the veth (where the command's
/// connections start and end); it goes with the namespace.
///
/// Where the kernel has no netem, delay, jitter, loss and reordering are the user-space engine's, as on an
/// interface (`UserspaceEngine`), run inside the sandbox's namespace on its end of the veth: its nftables table
/// and queue rules live in the namespace, so they go with it, and its process (`condition __sandbox-engine`)
/// follows the profile in the sandbox's record and stops when the sandbox goes (and is stopped with everything
/// else in the namespace by the sandbox's teardown). The htb trees are the same, with the rates alone.
public enum SandboxConditioning {
    /// What `apply` runs on a fresh sandbox. `engineStart` (`engineStartCommand`): the user-space engine carries
    /// delay and loss, started before its table and queue rules, and htb carries only the rates.
    public static func applyPlan(_ profile: Profile, to identity: SandboxIdentity, engineStart: [String]? = nil) throws -> [[String]] {
        let host = try InterfaceName(identity.hostInterface)
        let inner = try InterfaceName(identity.namespaceInterface)
        let tree = engineStart == nil ? profile : UserspaceEngine.rateOnly(profile)
        var commands: [[String]] = engineStart.map { engineCommands(profile, identity: identity, inner: inner, start: $0) } ?? []
        let downlink = PlanBuilder.downlinkSpec(tree)
        if downlink.needsTree { commands += PlanBuilder.egressTree(device: host, spec: downlink) }
        let uplink = PlanBuilder.uplinkSpec(tree)
        if uplink.needsTree {
            commands += PlanBuilder.egressTree(device: inner, spec: uplink).map { inNamespace($0, identity) }
        }
        if let faults = profile.faults, faults.needsTable {
            commands.append(inNamespace(ConnectionFaults.createTable(faults, interface: inner, selection: .allIP), identity))
        }
        return commands
    }

    /// Switches in place. `engines`: what carried the old profile's delay and loss, and what carries the new one's;
    /// once the user-space engine runs it stays (its table's rules are replaced), and `engineStart` starts it when
    /// it did not run yet, or no longer runs (it died; its table and rules are still there), before anything else
    /// changes, so a failure to start leaves the old profile as it was.
    public static func switchPlan(from old: Profile, to new: Profile, on identity: SandboxIdentity,
                                  engines: (old: ConditioningEngine?, new: ConditioningEngine?) = (nil, nil),
                                  engineStart: [String]? = nil) throws -> [[String]] {
        let host = try InterfaceName(identity.hostInterface)
        let inner = try InterfaceName(identity.namespaceInterface)
        let oldTree = engines.old == .userspace ? UserspaceEngine.rateOnly(old) : old
        let newTree = engines.new == .userspace ? UserspaceEngine.rateOnly(new) : new
        var engine: [[String]] = []
        if engines.old == .userspace {
            engine = (engineStart.map { [$0] } ?? []) + [inNamespace(UserspaceEngine.switchTable(to: new, interface: inner), identity)]
        } else if engines.new == .userspace, let engineStart {
            engine = engineCommands(new, identity: identity, inner: inner, start: engineStart)
        }
        var faults: [[String]] = []
        if old.faults != new.faults {
            if old.faults?.needsTable == true { faults.append(ConnectionFaults.deleteTable(inner)) }
            if let added = new.faults, added.needsTable {
                faults.append(ConnectionFaults.createTable(added, interface: inner, selection: .allIP))
            }
        }
        return engine
            + PlanBuilder.switchEgress(device: host, from: PlanBuilder.downlinkSpec(oldTree), to: PlanBuilder.downlinkSpec(newTree))
            + (PlanBuilder.switchEgress(device: inner, from: PlanBuilder.uplinkSpec(oldTree), to: PlanBuilder.uplinkSpec(newTree)) + faults)
                .map { inNamespace($0, identity) }
    }

    /// The engine first (it binds its queues, so nothing queued is ever let through unheld), then its table and
    /// the queue rules that feed it, all in the namespace.
    static func engineCommands(_ profile: Profile, identity: SandboxIdentity, inner: InterfaceName, start: [String]) -> [[String]] {
        [start, inNamespace(UserspaceEngine.createTable(profile, interface: inner, selection: .allIP), identity)]
            + UserspaceEngine.queueRules(inner).map { inNamespace($0, identity) }
    }

    /// Takes down what `engineCommands` made in the namespace (after a failed switch; teardown takes the namespace).
    static func engineRemoval(identity: SandboxIdentity, inner: InterfaceName) -> [[String]] {
        UserspaceEngine.queueRules(inner).map { inNamespace(UserspaceEngine.deleting($0), identity) }
            + [inNamespace(UserspaceEngine.deleteTable(inner), identity)]
    }

    /// `tc ...` becomes `tc -n NAMESPACE ...` (likewise for `ip`); `nft`, `iptables-nft` and `ip6tables-nft` get
    /// `ip netns exec NAMESPACE` in front (they have no namespace option).
    static func inNamespace(_ command: [String], _ identity: SandboxIdentity) -> [String] {
        guard let program = command.first else { return command }
        if ["nft", "iptables-nft", "ip6tables-nft"].contains(program) { return ["ip", "netns", "exec", identity.namespace] + command }
        guard program == "tc" || program == "ip" else { return command }
        return [program, "-n", identity.namespace] + command.dropFirst()
    }

    /// Whether netem can be created here, tried for real on the sandbox namespace's own loopback (which
    /// nothing else uses), so the answer is the kernel's, not a guess from module lists.
    public static func netemAvailable(in identity: SandboxIdentity, runner: any CommandRunner) -> Bool {
        guard let result = try? runner.run(["tc", "-n", identity.namespace, "qdisc", "add", "dev", "lo", "root",
                                            "handle", "7ad0:", "netem", "delay", "1ms"]), result.status == 0
        else { return false }
        _ = try? runner.run(["tc", "-n", identity.namespace, "qdisc", "del", "dev", "lo", "root"])
        return true
    }

    /// What carries the delay and loss of `profile` (as the veth pair carries it: `treeProfile`) in a sandbox whose
    /// engine so far is `current`: nil while htb alone does (bandwidth only); netem where the kernel has it; else
    /// the user-space engine, or the one `requested`. Once chosen, an engine stays the sandbox's engine. Throws,
    /// before anything changes, when the engine cannot carry the profile.
    public static func engine(for profile: Profile, current: ConditioningEngine?, in identity: SandboxIdentity,
                              runner: any CommandRunner, requested: EngineRequest = .auto) throws -> ConditioningEngine? {
        try requested.engine(for: profile, active: current,
                             remedy: "A sandbox keeps its engine while its command runs: start the command again with "
                                + "`condition run --engine \(requested.rawValue)`",
                             netemAvailable: { netemAvailable(in: identity, runner: runner) },
                             userspaceAvailable: { LiveKernelSupport(runner: runner).userspaceEngineAvailable() })
    }

    /// What the veth pair carries of `profile`: all of it, but the DNS delay where `condition run`'s DNS forwarder
    /// holds the queries itself (`SandboxRecord.answersDNS`), which needs no netem.
    public static func treeProfile(_ profile: Profile, answersDNS: Bool?) -> Profile {
        guard answersDNS == true else { return profile }
        var profile = profile
        profile.dnsDelayMicroseconds = 0
        return profile
    }

    /// The `condition` executable the user-space engine runs as: this one, or the one beside `capture`.
    public static var defaultEngineExecutable: String {
        let current = URL(fileURLWithPath: RevertScheduler.currentExecutable())
        return current.lastPathComponent == "condition" ? current.path
            : current.deletingLastPathComponent().appendingPathComponent("condition").path
    }

    /// Starts the sandbox's user-space engine (run in the host's namespace; it enters the sandbox's itself) and
    /// returns once it has bound its queues, or fails saying why. See `SandboxEngine`.
    public static func engineStartCommand(executable: String, sandbox id: String, registry: SandboxRegistry) -> [String] {
        SandboxEngine.command(.start, id: id, registry: registry, executable: executable)
    }

    /// Applies `profile` to a fresh sandbox and records it there, so `apply --sandbox` can switch it later (the
    /// record keeps the whole profile; the forwarder, if there is one, reads its DNS delay from there, and the
    /// user-space engine its settings). Returns what carries delay and loss (nil: nothing needs to).
    @discardableResult
    public static func apply(_ profile: Profile, to sandbox: RunningSandbox, runner: any CommandRunner,
                             engine requested: EngineRequest = .auto,
                             engineExecutable: String = defaultEngineExecutable) throws -> ConditioningEngine? {
        let tree = treeProfile(profile, answersDNS: sandbox.record.answersDNS)
        let engine = try engine(for: tree, current: nil, in: sandbox.identity, runner: runner, requested: requested)
        // Recorded first: the engine reads its settings from the record.
        try sandbox.update {
            $0.profile = profile.name
            $0.conditions = SandboxConditions(profile, engine: engine).recordText
        }
        let start = engine == .userspace
            ? engineStartCommand(executable: engineExecutable, sandbox: sandbox.identity.id, registry: sandbox.registry) : nil
        for command in try applyPlan(tree, to: sandbox.identity, engineStart: start) { try runner.check(command) }
        return engine
    }

    /// A fresh sandbox conditioned for its command: TapKit's answer to its DNS when the profile needs one (stop it
    /// after the command), and what to tell the user before the command starts.
    public struct Conditioned {
        public var dns: SandboxDNSAnswering?
        public var notices: [String]
    }

    /// What `condition run` and `capture --profile -- COMMAND` both do before the command starts: TapKit answers the
    /// command's DNS when the profile has DNS faults or a DNS delay (it marks the record, so `apply` then leaves the
    /// DNS delay to it and needs no netem for it), then the profile is applied. On failure the forwarder is stopped;
    /// the caller removes the sandbox.
    public static func condition(_ sandbox: RunningSandbox, for profile: Profile, runner: any CommandRunner,
                                 engine requested: EngineRequest = .auto) throws -> Conditioned {
        let dns = try SandboxDNSAnswering.start(for: profile, in: sandbox, runner: runner)
        do {
            var notices = dns.map { [$0.announcement] } ?? []
            if try apply(profile, to: sandbox, runner: runner, engine: requested) == .userspace {
                notices.append("delay and loss of \"\(profile.name)\" by the \(ConditioningEngine.userspace.summary) engine in the "
                               + "sandbox: " + (requested == .userspace ? "--engine userspace" : "this kernel has no netem"))
            }
            return Conditioned(dns: dns, notices: notices)
        } catch {
            _ = dns?.stop()
            throw error
        }
    }

    /// Switches a running sandbox from its recorded profile to `profile`, in place, and records it.
    public static func switchProfile(to profile: Profile, sandbox id: String, registry: SandboxRegistry,
                                     runner: any CommandRunner, engine requested: EngineRequest = .auto,
                                     engineExecutable: String = defaultEngineExecutable) throws -> SandboxRecord {
        guard geteuid() == 0 else { throw SandboxError.notRoot }
        return try registry.withLock {
            guard var record = registry.record(id: id), record.ownerIsAlive else {
                throw SandboxError.unknownSandbox(id)
            }
            try SandboxDNSAnswering.checkSwitch(to: profile, answersDNS: record.answersDNS)
            let previous = record
            let recorded = SandboxConditions(recordText: record.conditions)
            let old = treeProfile(recorded?.profile ?? Profile(name: record.profile), answersDNS: record.answersDNS)
            let new = treeProfile(profile, answersDNS: record.answersDNS)
            let engines = (old: recorded?.engine, new: try engine(for: new, current: recorded?.engine, in: record.identity,
                                                                  runner: runner, requested: requested))
            // Started when the sandbox first needs it, and again if it is not running (it and its supervisor were
            // killed, or the supervisor gave up restarting it: `condition sandboxes` says so); never beside a running
            // engine, nor one whose supervisor is restarting it (the supervisor's pid keeps the report running).
            let running = engines.old == .userspace && SandboxEngine.status(of: record, registry: registry)?.running == true
            let start = engines.new == .userspace && !running
                ? engineStartCommand(executable: engineExecutable, sandbox: id, registry: registry) : nil
            let plan = try switchPlan(from: old, to: new, on: record.identity, engines: engines, engineStart: start)
            // Recorded first: a running engine follows the record, and one started here reads it.
            record.profile = profile.name
            record.conditions = SandboxConditions(profile, engine: engines.new).recordText
            try registry.save(record)
            do {
                for command in plan { try runner.check(command) }
            } catch {
                // Back to the old record (an engine started here sees it and stops), and its table and rules go.
                try? registry.save(previous)
                if start != nil, engines.old != .userspace, let inner = try? InterfaceName(record.identity.namespaceInterface) {
                    for command in engineRemoval(identity: record.identity, inner: inner) { _ = try? runner.run(command) }
                }
                throw error
            }
            return record
        }
    }
}
