import Foundation
import LinkConditioner
import TestSupport
import Sandbox
import Testing

/// The exact commands and files of a sandbox, checked without root.
@Suite("sandbox plans")
struct SandboxPlanTests {
    let identity = try! SandboxIdentity(id: "0a1b2c", slot: 5)

    @Test("names and addresses derive from id and slot")
    func identityNaming() throws {
        #expect(identity.namespace == "tapkit-0a1b2c")
        #expect(identity.hostInterface == "tk-0a1b2c")
        #expect(identity.nftTable == "tapkit_0a1b2c")
        #expect(identity.ipv4Subnet == "10.213.0.20/30")
        #expect(identity.hostIPv4 == "10.213.0.21")
        #expect(identity.namespaceIPv4 == "10.213.0.22")
        #expect(identity.hostIPv6 == "fd54:4b00:0:5::1")
        let last = try SandboxIdentity(id: "ffffff", slot: SandboxIdentity.slotCount - 1)
        #expect(last.namespaceIPv4 == "10.213.255.254")
        #expect(throws: SandboxError.self) { try SandboxIdentity(id: "xyz", slot: 0) }
        #expect(throws: SandboxError.self) { try SandboxIdentity(id: "abcdef", slot: SandboxIdentity.slotCount) }
    }

    @Test("slot allocation skips used slots and host prefixes that overlap")
    func allocation() throws {
        let registry = SandboxRegistry(directory: FileManager.default.temporaryDirectory
            .appendingPathComponent("sbx-registry-\(UUID().uuidString)"))
        defer { try? FileManager.default.removeItem(at: registry.directory) }
        let taken = try SandboxIdentity(id: "aaaaaa", slot: 0)
        try registry.save(SandboxRecord(identity: taken, profile: "x", command: ["true"], ownerPID: 1, ownerStartTime: nil))
        // Slot 1 (10.213.0.4/30) is inside a host route; 10.213.0.9 is a host address in slot 2.
        let identity = try registry.allocateIdentity(hostPrefixes: ["10.213.0.4/31", "10.213.0.9/32", "192.0.2.0/24"],
                                                     existingNamespaces: [])
        #expect(identity.slot == 3)
        #expect(identity.id != "aaaaaa")
        #expect(throws: SandboxError.noFreeSlot) {
            try registry.allocateIdentity(hostPrefixes: ["10.0.0.0/8"], existingNamespaces: [])
        }
    }

    /// Issue 36: a sandbox right after another got its addresses back, and the old one's connections (a FIN the
    /// server resent, its RST) arrived in the new one. A slot given back is not given out again within the
    /// quarantine while others are free; when none is, the least recently given back goes first.
    @Test func aSlotGivenBackIsNotReusedAtOnce() throws {
        let registry = SandboxRegistry(directory: FileManager.default.temporaryDirectory
            .appendingPathComponent("sbx-registry-\(UUID().uuidString)"))
        defer { try? FileManager.default.removeItem(at: registry.directory) }
        let first = try registry.allocateIdentity(hostPrefixes: [], existingNamespaces: [])
        #expect(first.slot == 0)
        try registry.save(SandboxRecord(identity: first, profile: "3G", command: ["curl"], ownerPID: 1, ownerStartTime: nil))
        registry.remove(id: first.id)
        let second = try registry.allocateIdentity(hostPrefixes: [], existingNamespaces: [])
        #expect(second.slot == 1, "not the slot just given back")
        try registry.save(SandboxRecord(identity: second, profile: "3G", command: ["curl"], ownerPID: 1, ownerStartTime: nil))
        registry.remove(id: second.id)
        #expect(try registry.allocateIdentity(hostPrefixes: [], existingNamespaces: []).slot == 2)
        // Every free slot recently given back (here: all but 0 and 1 cut off by a host route): the older one first.
        let crowded = ["10.213.0.8/29", "10.213.0.16/28", "10.213.0.32/27", "10.213.0.64/26", "10.213.0.128/25",
                       "10.213.1.0/24", "10.213.2.0/23", "10.213.4.0/22", "10.213.8.0/21", "10.213.16.0/20",
                       "10.213.32.0/19", "10.213.64.0/18", "10.213.128.0/17"]
        #expect(try registry.allocateIdentity(hostPrefixes: crowded, existingNamespaces: []).slot == 0)
        // Past the quarantine a slot is as good as new.
        registry.noteReleased(slot: 0, now: Date().addingTimeInterval(-SandboxRegistry.slotQuarantine - 1))
        #expect(registry.releasedSlots()[0] == nil)
    }

    @Test("setup: namespace, veth, addresses, routes, route_localnet, then the nft table")
    func setupCommands() {
        let plan = SandboxNetworkPlan(identity: identity, uplinkInterface: "eth0", uplinkIPv6Interface: nil,
                                      loopbackResolver: "127.0.0.53")
        let commands = plan.setupCommands
        #expect(commands.first == ["ip", "netns", "add", "tapkit-0a1b2c"])
        #expect(commands.contains(["ip", "link", "add", "tk-0a1b2c", "address", "02:54:4b:0a:1b:2c", "type", "veth",
                                   "peer", "name", "eth0", "address", "06:54:4b:0a:1b:2c", "netns", "tapkit-0a1b2c"]))
        // Permanent neighbours both ways, so dropping one direction never turns into failed ARP/ND.
        #expect(commands.contains(["ip", "neigh", "replace", "10.213.0.22", "lladdr", "06:54:4b:0a:1b:2c",
                                   "dev", "tk-0a1b2c", "nud", "permanent"]))
        #expect(commands.contains(["ip", "-n", "tapkit-0a1b2c", "-6", "neigh", "replace", "fd54:4b00:0:5::1",
                                   "lladdr", "02:54:4b:0a:1b:2c", "dev", "eth0", "nud", "permanent"]))
        #expect(commands.contains(["sysctl", "-q", "-w", "net.ipv4.conf.tk-0a1b2c.route_localnet=1"]))
        #expect(commands.contains(["ip", "-n", "tapkit-0a1b2c", "route", "add", "default", "via", "10.213.0.21",
                                   "dev", "eth0"]))
        #expect(commands.contains(["nft", "add", "rule", "inet", "tapkit_0a1b2c", "prerouting", "iifname",
                                   "\"tk-0a1b2c\"", "ip", "daddr", "10.213.0.21", "udp", "dport", "53",
                                   "dnat", "ip", "to", "127.0.0.53"]))
        #expect(commands.contains(["nft", "add", "rule", "inet", "tapkit_0a1b2c", "postrouting", "ip", "saddr",
                                   "10.213.0.20/30", "oifname", "\"eth0\"", "masquerade"]))
        // The DNS DNAT must come before the catch-all DNAT to 127.0.0.1.
        let dns = commands.firstIndex { $0.contains("53") && $0.contains("dnat") }!
        let all = commands.firstIndex { $0.last == "127.0.0.1" }!
        #expect(dns < all)
        // No IPv6 default route on the host: no IPv6 masquerade.
        #expect(!commands.contains { $0.contains("ip6") })
    }

    @Test("teardown: one table, the namespace (which takes the veth with it), the host end")
    func teardownCommands() {
        #expect(SandboxNetworkPlan.teardownCommands(for: identity) == [
            ["nft", "delete", "table", "inet", "tapkit_0a1b2c"],
            ["ip", "netns", "delete", "tapkit-0a1b2c"],
            ["ip", "link", "delete", "tk-0a1b2c"],
        ])
    }

    @Test("conditioning: downlink tree on the host end, uplink tree (with DNS class) inside the namespace")
    func conditioningPlan() throws {
        let profile = Profile(name: "Mixed", downlink: LinkSettings(bitsPerSecond: 2_000_000),
                              uplink: LinkSettings(bitsPerSecond: 500_000))
        let commands = try SandboxConditioning.applyPlan(profile, to: identity)
        let host = commands.filter { $0.starts(with: ["tc", "qdisc", "add", "dev", "tk-0a1b2c"]) || $0.contains("tk-0a1b2c") }
        let inside = commands.filter { $0.starts(with: ["tc", "-n", "tapkit-0a1b2c"]) }
        #expect(host.count + inside.count == commands.count)
        #expect(host.contains { $0.contains("2Mbit") || $0.contains("2mbit") }, "\(host)")
        #expect(inside.contains { $0.contains("500Kbit") || $0.contains("500kbit") }, "\(inside)")
        #expect(inside.allSatisfy { $0.contains("eth0") })
        #expect(!commands.contains { $0.contains("ifb") || $0.contains("ingress") })

        let onlyDown = Profile(name: "Down", downlink: LinkSettings(bitsPerSecond: 1_000_000))
        #expect(try SandboxConditioning.applyPlan(onlyDown, to: identity).allSatisfy { !$0.contains("-n") })

        let switched = try SandboxConditioning.switchPlan(from: profile, to: onlyDown, on: identity)
        #expect(switched.contains(["tc", "-n", "tapkit-0a1b2c", "qdisc", "del", "dev", "eth0", "root"]), "\(switched)")
    }

    @Test("the engine: htb alone for rates, netem where the kernel has it, else the user-space engine; refused when neither")
    func engineChoice() throws {
        let slow = Profile(name: "Slow", downlink: LinkSettings(bitsPerSecond: 32_000, delayMicroseconds: 100_000))
        let rate = Profile(name: "Rate", downlink: LinkSettings(bitsPerSecond: 32_000))
        let noNetem = RecordingRunner()
        noNetem.respond(to: ["tc", "-n", identity.namespace, "qdisc", "add", "dev", "lo"],
                        with: CommandResult(status: 2, stderr: "Error: Specified qdisc kind is unknown."))
        #expect(try SandboxConditioning.engine(for: rate, current: nil, in: identity, runner: noNetem) == nil)
        #expect(noNetem.commands.isEmpty, "bandwidth alone probes nothing")
        #expect(try SandboxConditioning.engine(for: slow, current: nil, in: identity, runner: noNetem) == .userspace)
        #expect(noNetem.changingCommands.allSatisfy { $0.first == "unshare" || $0.starts(with: ["tc", "-n", identity.namespace]) },
                "only probes: \(noNetem.commands)")
        // Once the engine runs it stays, for any profile, without probing again.
        let again = RecordingRunner()
        #expect(try SandboxConditioning.engine(for: rate, current: .userspace, in: identity, runner: again) == .userspace)
        #expect(again.commands.isEmpty)
        var duplicating = slow
        duplicating.uplink.duplicatePercent = 1
        #expect(throws: ConditionerError.self) { try SandboxConditioning.engine(for: duplicating, current: nil, in: identity, runner: noNetem) }
        // Neither netem nor the engine's NFQUEUE target: refused before anything changes.
        let neither = RecordingRunner()
        neither.respond(to: ["tc", "-n", identity.namespace, "qdisc", "add", "dev", "lo"], with: CommandResult(status: 2))
        neither.respond(to: ["unshare", "--net", "iptables-nft"], with: CommandResult(status: 2))
        #expect(throws: ConditionerError.self) { try SandboxConditioning.engine(for: slow, current: nil, in: identity, runner: neither) }
        let netem = RecordingRunner()
        #expect(try SandboxConditioning.engine(for: slow, current: nil, in: identity, runner: netem) == .netem)
    }

    @Test("with the user-space engine: started first, its table and queue rules in the namespace, htb with the rates alone")
    func userspaceEnginePlan() throws {
        let slow = Profile(name: "Slow", downlink: LinkSettings(bitsPerSecond: 32_000, delayMicroseconds: 100_000),
                           uplink: LinkSettings(bitsPerSecond: 32_000, delayMicroseconds: 100_000), dnsDelayMicroseconds: 200_000)
        let start = ["condition", "__sandbox-engine", "--sandbox", identity.id, "--registry", "/run/x"]
        let plan = try SandboxConditioning.applyPlan(slow, to: identity, engineStart: start)
        #expect(plan.first == start)
        let inNamespace = ["ip", "netns", "exec", identity.namespace]
        #expect(plan[1].starts(with: inNamespace + ["nft", "add", "table", "inet", "tapkit_eth0"]), "\(plan[1])")
        let queueRules = plan.filter { $0.contains("NFQUEUE") }
        #expect(queueRules.count == 6 && queueRules.allSatisfy { $0.starts(with: inNamespace) && $0.contains("eth0") })
        #expect(!plan.contains { $0.contains("netem") }, "no netem anywhere: \(plan)")
        #expect(plan.contains { $0.contains(identity.hostInterface) && $0.contains("32kbit") }, "the downlink rate on the host end")
        #expect(!plan.contains { $0.contains("7ac4:") }, "no DNS class: the engine holds DNS queries")

        // From bandwidth only into Slow: the engine starts before anything else changes.
        let rate = Profile(name: "Rate", downlink: LinkSettings(bitsPerSecond: 64_000))
        let into = try SandboxConditioning.switchPlan(from: rate, to: slow, on: identity, engines: (nil, .userspace), engineStart: start)
        #expect(into.first == start)
        #expect(into.filter { $0.contains("NFQUEUE") }.count == 6)
        // Slow to Black Hole: one nft transaction replaces the rules; the engine and queue rules stay.
        let blackHole = Profile(name: "Black Hole", downlink: LinkSettings(lossPercent: 100))
        let switched = try SandboxConditioning.switchPlan(from: slow, to: blackHole, on: identity, engines: (.userspace, .userspace))
        #expect(!switched.contains(start) && !switched.contains { $0.contains("NFQUEUE") })
        let flush = try #require(switched.first)
        #expect(flush.starts(with: inNamespace + ["nft", "flush", "chain", "inet", "tapkit_eth0", "uplink_apply"]), "\(flush)")
        #expect(flush.contains("drop"), "the downlink's 100% loss: \(flush)")
        #expect(!switched.contains { $0.contains("netem") })
    }

    @Test("resolv.conf: loopback resolvers become the host end (DNATed), others are kept", arguments: [
        ("nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n",
         "nameserver 10.213.0.21 # host resolver 127.0.0.53, via tapkit sandbox\noptions edns0 trust-ad\nsearch lan\n",
         "127.0.0.53"),
        ("nameserver 10.255.255.53\n", "nameserver 10.255.255.53\n", nil),
        ("nameserver ::1\nnameserver 127.0.0.1\nnameserver 9.9.9.9\n",
         "nameserver 10.213.0.21 # host resolver ::1, via tapkit sandbox\nnameserver 9.9.9.9\n", "127.0.0.1"),
    ] as [(String, String, String?)])
    func resolverConfiguration(host: String, expected: String, loopback: String?) {
        let configuration = SandboxResolverConfiguration(hostResolvConf: host, hostAddress: identity.hostIPv4)
        #expect(configuration.contents == expected)
        #expect(configuration.loopbackResolver == loopback)
    }

    @Test("exit codes: the status, or 128 + signal")
    func exitCodes() {
        #expect(ExitStatus(waitStatus: 42 << 8) == .exited(42))
        #expect(ExitStatus(waitStatus: 42 << 8).shellCode == 42)
        #expect(ExitStatus(waitStatus: SIGSEGV).shellCode == 128 + SIGSEGV)
    }
}
