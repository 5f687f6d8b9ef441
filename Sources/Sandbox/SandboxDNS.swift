import Foundation

/// The resolv.conf a sandbox sees (bind-mounted over /etc/resolv.conf by `ip netns exec` from
/// /etc/netns/NAME/resolv.conf).
///
/// Name servers on the host's loopback (systemd-resolved's 127.0.0.53 stub, a local dnsmasq on 127.0.0.1,
/// `::1`) cannot be reached from another namespace, so they are replaced by the host end's address and the
/// sandbox's nft table DNATs port 53 on that address to the loopback server. Other name servers are kept and
/// reached through the masquerade. Queries leave the namespace through its uplink, so the profile's DNS delay
/// applies to them.
public struct SandboxResolverConfiguration: Equatable, Sendable {
    /// The file to install inside the namespace.
    public var contents: String
    /// The host loopback address port 53 on the host end is DNATed to, when the host's resolver is local.
    public var loopbackResolver: String?

    /// `forwarder`: the sandbox's own DNS forwarder answers at the host end (DNS faults): every name server line is
    /// replaced by the host end's address, and no DNAT to a loopback resolver is needed.
    public init(hostResolvConf: String, hostAddress: String, forwarder: Bool = false) {
        var lines: [String] = []
        var loopback: String?
        var wroteHostAddress = false
        for line in hostResolvConf.split(separator: "\n", omittingEmptySubsequences: false) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0] == "nameserver" else {
                lines.append(String(line))
                continue
            }
            let server = String(fields[1])
            if forwarder {
                if !wroteHostAddress {
                    lines.append("nameserver \(hostAddress) # tapkit sandbox DNS faults, then the host's name servers")
                    wroteHostAddress = true
                }
            } else if let mapped = Self.loopbackTarget(server) {
                // Only one loopback resolver can sit behind the host address; the first one wins.
                if loopback == nil { loopback = mapped }
                if !wroteHostAddress {
                    lines.append("nameserver \(hostAddress) # host resolver \(server), via tapkit sandbox")
                    wroteHostAddress = true
                }
            } else {
                lines.append(String(line))
            }
        }
        if forwarder && !wroteHostAddress {
            lines.append("nameserver \(hostAddress) # tapkit sandbox DNS faults, then the host's name servers")
        }
        var text = lines.joined(separator: "\n")
        if !text.hasSuffix("\n") { text += "\n" }
        contents = text
        loopbackResolver = loopback
    }

    /// The name servers a resolv.conf lists, in order; glibc's 127.0.0.1 when it lists none.
    public static func nameServers(in resolvConf: String) -> [String] {
        let servers = resolvConf.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return fields.count >= 2 && fields[0] == "nameserver" ? String(fields[1]) : nil
        }
        return servers.isEmpty ? ["127.0.0.1"] : servers
    }

    /// The IPv4 loopback address to DNAT to for a loopback name server, nil for any other server.
    /// `::1` maps to 127.0.0.1: IPv6 loopback cannot be a NAT target from another interface.
    static func loopbackTarget(_ server: String) -> String? {
        if server == "::1" { return "127.0.0.1" }
        if let prefix = IPv4Prefix(server), prefix.isLoopback { return server }
        return nil
    }
}
