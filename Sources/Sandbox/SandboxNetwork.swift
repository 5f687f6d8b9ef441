import Foundation
import SystemSupport

/// The `ip` and `nft` commands that wire a sandbox's namespace to the host, and the teardown that removes
/// them. Setup is a plain list (printable, testable without root); teardown works from the identity alone and
/// tolerates any part being already gone, so the owner, its watchdog and a later reaper can all run it.
public struct SandboxNetworkPlan: Sendable, Equatable {
    public var identity: SandboxIdentity
    /// Masquerade out of this interface (the host's IPv4 default route), if any.
    public var uplinkInterface: String?
    public var uplinkIPv6Interface: String?
    /// Loopback address DNS on the host end is sent to (see `SandboxResolverConfiguration`).
    public var loopbackResolver: String?
    /// Reject the sandbox's UDP to port 443 (QUIC), so clients fall back to TCP, where TLS can be decrypted.
    public var blockQUIC: Bool

    public init(identity: SandboxIdentity, uplinkInterface: String?, uplinkIPv6Interface: String?,
                loopbackResolver: String?, blockQUIC: Bool = false) {
        self.identity = identity
        self.uplinkInterface = uplinkInterface
        self.uplinkIPv6Interface = uplinkIPv6Interface
        self.loopbackResolver = loopbackResolver
        self.blockQUIC = blockQUIC
    }

    public var setupCommands: [[String]] {
        let id = identity
        let ns = id.namespace, host = id.hostInterface, inner = id.namespaceInterface
        var commands: [[String]] = [
            ["ip", "netns", "add", ns],
            ["ip", "link", "add", host, "address", id.hostMAC, "type", "veth",
             "peer", "name", inner, "address", id.namespaceMAC, "netns", ns],
            ["ip", "addr", "add", "\(id.hostIPv4)/\(SandboxIdentity.ipv4PrefixLength)", "dev", host],
            ["ip", "-6", "addr", "add", "\(id.hostIPv6)/\(SandboxIdentity.ipv6PrefixLength)", "dev", host, "nodad"],
            // Lets DNAT to the host's 127.0.0.0/8 route packets that arrive on this veth (see nftCommands).
            ["sysctl", "-q", "-w", "net.ipv4.conf.\(host).route_localnet=1"],
            ["ip", "link", "set", host, "up"],
            ["ip", "-n", ns, "link", "set", "lo", "up"],
            ["ip", "-n", ns, "addr", "add", "\(id.namespaceIPv4)/\(SandboxIdentity.ipv4PrefixLength)", "dev", inner],
            ["ip", "-n", ns, "-6", "addr", "add", "\(id.namespaceIPv6)/\(SandboxIdentity.ipv6PrefixLength)",
             "dev", inner, "nodad"],
            ["ip", "-n", ns, "link", "set", inner, "up"],
            ["ip", "-n", ns, "route", "add", "default", "via", id.hostIPv4, "dev", inner],
            ["ip", "-n", ns, "-6", "route", "add", "default", "via", id.hostIPv6, "dev", inner],
            ["ip", "neigh", "replace", id.namespaceIPv4, "lladdr", id.namespaceMAC, "dev", host, "nud", "permanent"],
            ["ip", "-6", "neigh", "replace", id.namespaceIPv6, "lladdr", id.namespaceMAC, "dev", host, "nud", "permanent"],
            ["ip", "-n", ns, "neigh", "replace", id.hostIPv4, "lladdr", id.hostMAC, "dev", inner, "nud", "permanent"],
            ["ip", "-n", ns, "-6", "neigh", "replace", id.hostIPv6, "lladdr", id.hostMAC, "dev", inner,
             "nud", "permanent"],
        ]
        commands += nftCommands
        return commands
    }

    /// One table per sandbox, so teardown is a single `delete table` that cannot touch anyone else's rules.
    /// - postrouting: masquerade the sandbox's subnets out of the host's default-route interfaces.
    /// - prerouting: connections from the sandbox to the host end's IPv4 address go to 127.0.0.1 (with
    ///   route_localnet on the veth), so services listening on the host's loopback are reachable; port 53 goes
    ///   to the host's loopback resolver when it has one (systemd-resolved's 127.0.0.53).
    public var nftCommands: [[String]] {
        let id = identity, table = id.nftTable, host = id.hostInterface
        var commands: [[String]] = [
            ["nft", "add", "table", "inet", table],
            ["nft", "add", "chain", "inet", table, "prerouting",
             "{", "type", "nat", "hook", "prerouting", "priority", "-100", ";", "}"],
            ["nft", "add", "chain", "inet", table, "postrouting",
             "{", "type", "nat", "hook", "postrouting", "priority", "100", ";", "}"],
        ]
        if let resolver = loopbackResolver {
            for proto in ["udp", "tcp"] {
                commands.append(["nft", "add", "rule", "inet", table, "prerouting", "iifname", "\"\(host)\"",
                                 "ip", "daddr", id.hostIPv4, proto, "dport", "53", "dnat", "ip", "to", resolver])
            }
        }
        commands.append(["nft", "add", "rule", "inet", table, "prerouting", "iifname", "\"\(host)\"",
                         "ip", "daddr", id.hostIPv4, "dnat", "ip", "to", "127.0.0.1"])
        if let uplink = uplinkInterface {
            commands.append(["nft", "add", "rule", "inet", table, "postrouting", "ip", "saddr", id.ipv4Subnet,
                             "oifname", "\"\(uplink)\"", "masquerade"])
        }
        if let uplink = uplinkIPv6Interface {
            commands.append(["nft", "add", "rule", "inet", table, "postrouting", "ip6", "saddr", id.ipv6Subnet,
                             "oifname", "\"\(uplink)\"", "masquerade"])
        }
        if blockQUIC {
            // Everything the sandbox sends arrives on the host end: routed on (forward) or, DNATed to the host's
            // loopback, delivered here (input). A reject (ICMP port unreachable) makes clients fall back at
            // once; a silent drop would make them wait for their QUIC timeout first.
            for hook in ["forward", "input"] {
                let chain = "\(hook)_no_quic"
                commands.append(["nft", "add", "chain", "inet", table, chain,
                                 "{", "type", "filter", "hook", hook, "priority", "0", ";", "}"])
                commands.append(["nft", "add", "rule", "inet", table, chain, "iifname", "\"\(host)\"",
                                 "udp", "dport", "443", "reject"])
            }
        }
        return commands
    }

    /// Teardown in order; each may find its object already gone.
    public static func teardownCommands(for identity: SandboxIdentity) -> [[String]] {
        [
            ["nft", "delete", "table", "inet", identity.nftTable],
            // Deleting the namespace destroys its veth end, hence the pair, the host end, their addresses
            // and qdiscs. The host end is deleted explicitly too in case the namespace was already gone.
            ["ip", "netns", "delete", identity.namespace],
            ["ip", "link", "delete", identity.hostInterface],
        ]
    }
}

/// Builds and removes sandboxes on this host.
public enum SandboxLifecycle {
    /// Runs the setup plan and installs the resolver file; on any failure removes what was made and rethrows.
    public static func create(_ plan: SandboxNetworkPlan, resolver: SandboxResolverConfiguration,
                              runner: any CommandRunner) throws {
        do {
            for command in plan.setupCommands { try runner.check(command) }
            let etc = plan.identity.etcDirectory
            try makeEtcDirectory(etc)
            try Data(resolver.contents.utf8).write(to: URL(fileURLWithPath: etc + "/resolv.conf"))
        } catch {
            destroy(plan.identity, pids: [], runner: runner)
            throw error
        }
    }

    /// Stops `pids` and every process still inside the namespace, then removes the network objects and files.
    /// Safe to repeat.
    public static func destroy(_ identity: SandboxIdentity, pids: [Int32], runner: any CommandRunner) {
        ProcessTable.terminate(pids + namespacePIDs(identity, runner: runner))
        // The Go key source's instance and uprobe events, left behind when its capture was killed.
        if access(Tracefs.standardMount + "/uprobe_events", F_OK) == 0 {
            Tracefs(root: Tracefs.standardMount).remove(instance: identity.tracingInstance, group: identity.tracingGroup)
        }
        for command in SandboxNetworkPlan.teardownCommands(for: identity) {
            _ = try? runner.run(command)
        }
        try? FileManager.default.removeItem(atPath: identity.etcDirectory)
        // Leave /etc/netns itself when others use it; remove it when we emptied it. rmdir, not a check and a
        // recursive remove: another sandbox may be making its folder there at this moment.
        _ = rmdir(Self.etcNetns)
    }

    static let etcNetns = "/etc/netns"

    /// Makes /etc/netns/NAME while other sandboxes make their own folders and remove /etc/netns when they leave it
    /// empty: an existing folder is fine (FileManager's `createDirectory` throws EEXIST when another process makes a
    /// parent between its check and its mkdir), and /etc/netns removed between the two mkdirs is made again.
    static func makeEtcDirectory(_ path: String, in parent: String = etcNetns) throws {
        for _ in 0..<10 {
            guard mkdir(parent, 0o755) == 0 || errno == EEXIST else {
                throw SystemCallError(call: "mkdir", errno: errno, subject: parent)
            }
            if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
            guard errno == ENOENT else { throw SystemCallError(call: "mkdir", errno: errno, subject: path) }
        }
        throw SystemCallError(call: "mkdir", errno: ENOENT, subject: path)
    }

    static func namespacePIDs(_ identity: SandboxIdentity, runner: any CommandRunner) -> [Int32] {
        guard let result = try? runner.run(["ip", "netns", "pids", identity.namespace]),
              result.status == 0 else { return [] }
        return result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
    }
}
