import Foundation
import SystemSupport

extension RunningSandbox {
    /// Puts a DNS forwarder with `faults` between the command and the host's name servers: started on the host end's
    /// address, the command's UDP and TCP port 53 to the host end sent to it (two rules at the top of the sandbox's
    /// nft prerouting chain, gone with the table), and the sandbox's resolv.conf pointing at the host end alone.
    /// Call before the command starts (`ip netns exec` mounts the resolver file when it starts the command). The
    /// forwarder lives in this process: stop it after the command ends. `faults`, and `dnsDelay` (milliseconds), are
    /// asked at each query (a switch of the profile may change both); the delay holds every query and answer that
    /// long on top of any fault. The record says the forwarder is there, so the conditioner leaves the DNS delay
    /// and DNS faults to it.
    public func answerDNS(faults: @escaping @Sendable () -> [DNSFault], dnsDelay: @escaping @Sendable () -> UInt64 = { 0 },
                          runner: any CommandRunner) throws -> SandboxDNSForwarder {
        let identity = identity
        let forwarder = try SandboxDNSForwarder(address: identity.hostIPv4, faults: faults,
                                                upstreams: SandboxResolverConfiguration.nameServers(in: hostResolvConf),
                                                countsFile: registry.dnsCountsFile(id: identity.id), dnsDelay: dnsDelay)
        do {
            try update { $0.answersDNS = true }
            for command in SandboxNetworkPlan.dnsForwarderCommands(identity, port: forwarder.port) { try runner.check(command) }
            let resolver = SandboxResolverConfiguration(hostResolvConf: hostResolvConf, hostAddress: identity.hostIPv4,
                                                        forwarder: true)
            try Data(resolver.contents.utf8).write(to: URL(fileURLWithPath: identity.etcDirectory + "/resolv.conf"))
        } catch {
            forwarder.stop()
            throw error
        }
        return forwarder
    }
}

extension SandboxNetworkPlan {
    /// Inserted above the table's other prerouting rules (which send the host end's address to the host's loopback).
    public static func dnsForwarderCommands(_ identity: SandboxIdentity, port: UInt16) -> [[String]] {
        ["udp", "tcp"].map { proto in
            ["nft", "insert", "rule", "inet", identity.nftTable, "prerouting", "iifname", "\"\(identity.hostInterface)\"",
             "ip", "daddr", identity.hostIPv4, proto, "dport", "53", "dnat", "ip", "to", "\(identity.hostIPv4):\(port)"]
        }
    }
}
