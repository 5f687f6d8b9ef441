import Foundation
import Sandbox
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// What is applied to a sandbox's veth pair, kept in its registry record so that `apply --sandbox` can
/// switch in place (the plan builder's switch needs the old settings, and the profile file may have changed).
public struct SandboxConditions: Codable, Sendable, Equatable {
    public struct Direction: Codable, Sendable, Equatable {
        public var bitsPerSecond: UInt64
        public var delayMicroseconds: UInt64
        public var jitterMicroseconds: UInt64
        public var lossPercent: Double

        init(_ settings: LinkSettings) {
            bitsPerSecond = settings.bitsPerSecond
            delayMicroseconds = settings.delayMicroseconds
            jitterMicroseconds = settings.jitterMicroseconds
            lossPercent = settings.lossPercent
        }

        var settings: LinkSettings {
            LinkSettings(bitsPerSecond: bitsPerSecond, delayMicroseconds: delayMicroseconds,
                         jitterMicroseconds: jitterMicroseconds, lossPercent: lossPercent)
        }
    }

    public var name: String
    public var downlink: Direction
    public var uplink: Direction
    public var dnsDelayMicroseconds: UInt64
    /// Absent in records written before faults reached sandboxes.
    public var faults: ConnectionFaults?

    public init(_ profile: Profile) {
        name = profile.name
        downlink = Direction(profile.downlink)
        uplink = Direction(profile.uplink)
        dnsDelayMicroseconds = profile.dnsDelayMicroseconds
        faults = profile.faults?.isEmpty == false ? profile.faults : nil
    }

    public var profile: Profile {
        Profile(name: name, downlink: downlink.settings, uplink: uplink.settings,
                dnsDelayMicroseconds: dnsDelayMicroseconds, faults: faults)
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

/// A profile that needs netem on a kernel without it.
public struct SandboxNetemUnavailableError: Error, CustomStringConvertible {
    public var profile: String
    public var description: String {
        "profile \"\(profile)\" needs netem (delay, jitter, loss or DNS delay), and this kernel has no sch_netem "
            + "(`modprobe sch_netem` fails); nothing was changed. Bandwidth-only profiles work here; "
            + "for delay and loss use a kernel with netem (see `condition doctor`)."
    }
}

/// Conditions a sandbox with the conditioner's plan builder: the host end's egress is what the sandbox
/// receives (downlink), the namespace end's egress what it sends (uplink, with the DNS delay, since DNS
/// queries leave through it). No ifb: each direction already has an egress of its own. Connection faults are
/// the interface's fault table, made inside the sandbox's namespace on its end of the veth (where the command's
/// connections start and end); it goes with the namespace.
public enum SandboxConditioning {
    public static func applyPlan(_ profile: Profile, to identity: SandboxIdentity) throws -> [[String]] {
        let host = try InterfaceName(identity.hostInterface)
        let inner = try InterfaceName(identity.namespaceInterface)
        var commands: [[String]] = []
        let downlink = PlanBuilder.downlinkSpec(profile)
        if downlink.needsTree { commands += PlanBuilder.egressTree(device: host, spec: downlink) }
        let uplink = PlanBuilder.uplinkSpec(profile)
        if uplink.needsTree {
            commands += PlanBuilder.egressTree(device: inner, spec: uplink).map { inNamespace($0, identity) }
        }
        if let faults = profile.faults, faults.needsTable {
            commands.append(inNamespace(ConnectionFaults.createTable(faults, interface: inner, selection: .allIP), identity))
        }
        return commands
    }

    public static func switchPlan(from old: Profile, to new: Profile, on identity: SandboxIdentity) throws -> [[String]] {
        let host = try InterfaceName(identity.hostInterface)
        let inner = try InterfaceName(identity.namespaceInterface)
        var faults: [[String]] = []
        if old.faults != new.faults {
            if old.faults?.needsTable == true { faults.append(ConnectionFaults.deleteTable(inner)) }
            if let added = new.faults, added.needsTable {
                faults.append(ConnectionFaults.createTable(added, interface: inner, selection: .allIP))
            }
        }
        return PlanBuilder.switchEgress(device: host, from: PlanBuilder.downlinkSpec(old), to: PlanBuilder.downlinkSpec(new))
            + (PlanBuilder.switchEgress(device: inner, from: PlanBuilder.uplinkSpec(old), to: PlanBuilder.uplinkSpec(new)) + faults)
                .map { inNamespace($0, identity) }
    }

    /// `tc ...` becomes `tc -n NAMESPACE ...` (likewise for `ip`); `nft ...` becomes `ip netns exec NAMESPACE nft ...`
    /// (nft has no namespace option).
    static func inNamespace(_ command: [String], _ identity: SandboxIdentity) -> [String] {
        guard let program = command.first else { return command }
        if program == "nft" { return ["ip", "netns", "exec", identity.namespace] + command }
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

    /// Applies `profile` to a fresh sandbox; refuses netem profiles on a kernel without netem.
    public static func apply(_ profile: Profile, to identity: SandboxIdentity, runner: any CommandRunner) throws {
        if profile.needsNetem && !netemAvailable(in: identity, runner: runner) {
            throw SandboxNetemUnavailableError(profile: profile.name)
        }
        for command in try applyPlan(profile, to: identity) { try runner.check(command) }
    }

    /// What the veth pair carries of `profile`: all of it, but the DNS delay where `condition run`'s DNS forwarder
    /// holds the queries itself (`SandboxRecord.answersDNS`), which needs no netem.
    public static func treeProfile(_ profile: Profile, answersDNS: Bool?) -> Profile {
        guard answersDNS == true else { return profile }
        var profile = profile
        profile.dnsDelayMicroseconds = 0
        return profile
    }

    /// Applies `profile` to a fresh sandbox and records it there, so `apply --sandbox` can switch it later (the
    /// record keeps the whole profile; the forwarder, if there is one, reads its DNS delay from there).
    public static func apply(_ profile: Profile, to sandbox: RunningSandbox, runner: any CommandRunner) throws {
        try apply(treeProfile(profile, answersDNS: sandbox.record.answersDNS), to: sandbox.identity, runner: runner)
        try sandbox.update {
            $0.profile = profile.name
            $0.conditions = SandboxConditions(profile).recordText
        }
    }

    /// Switches a running sandbox from its recorded profile to `profile`, in place, and records it.
    public static func switchProfile(to profile: Profile, sandbox id: String, registry: SandboxRegistry,
                                     runner: any CommandRunner) throws -> SandboxRecord {
        guard geteuid() == 0 else { throw SandboxError.notRoot }
        return try registry.withLock {
            guard var record = registry.record(id: id), record.ownerIsAlive else {
                throw SandboxError.unknownSandbox(id)
            }
            try SandboxDNSAnswering.checkSwitch(to: profile, answersDNS: record.answersDNS)
            let new = treeProfile(profile, answersDNS: record.answersDNS)
            if new.needsNetem && !netemAvailable(in: record.identity, runner: runner) {
                throw SandboxNetemUnavailableError(profile: profile.name)
            }
            let old = treeProfile(SandboxConditions(recordText: record.conditions)?.profile ?? Profile(name: record.profile),
                                  answersDNS: record.answersDNS)
            for command in try switchPlan(from: old, to: new, on: record.identity) { try runner.check(command) }
            record.profile = profile.name
            record.conditions = SandboxConditions(profile).recordText
            try registry.save(record)
            return record
        }
    }
}
