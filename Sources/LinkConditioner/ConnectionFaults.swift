import Foundation

/// Connection-level faults that packet loss cannot express (toxiproxy's reset_peer, timeout, limit_data): reset
/// or stall a TCP connection after some bytes, refuse new connections. Applied by an nftables table of their own,
/// `tapkit_faults_IFACE`, beside whichever engine conditions the link, on the profile's selected traffic.
public struct ConnectionFaults: Sendable, Equatable, Hashable, Codable {
    /// Reset every selected TCP connection once it has carried this many bytes (IP bytes, both ways).
    public var resetAfterBytes: UInt64?
    /// Drop everything of a selected TCP connection, both ways, once it has carried this many bytes.
    public var stallAfterBytes: UInt64?
    /// Refuse new selected TCP connections.
    public var refuse: Refusal?

    public enum Refusal: String, Sendable, Codable, Hashable, CaseIterable {
        /// The client gets a TCP reset: ECONNREFUSED.
        case reset
        /// The client gets ICMP host unreachable: EHOSTUNREACH.
        case unreachable
        /// The SYN is dropped: the connect times out.
        case timeout
    }

    public init(resetAfterBytes: UInt64? = nil, stallAfterBytes: UInt64? = nil, refuse: Refusal? = nil) {
        self.resetAfterBytes = resetAfterBytes
        self.stallAfterBytes = stallAfterBytes
        self.refuse = refuse
    }

    public var isEmpty: Bool { resetAfterBytes == nil && stallAfterBytes == nil && refuse == nil }

    public static func table(_ interface: InterfaceName) -> String {
        "tapkit_faults_" + String(interface.rawValue.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// One `nft` invocation creating the table. Bytes are counted per connection by a quota in a dynamic set keyed
    /// by conntrack id, updated from both directions (the kernel's conntrack accounting is off by default). A reset
    /// turns the arriving packet into an RST for the local socket (so the client sees ECONNRESET even when it only
    /// receives) and rejects what the client sends with a reset. Every rule has a counter: `status` reads them.
    public static func createTable(_ faults: ConnectionFaults, interface: InterfaceName,
                                   selection: TrafficSelection) -> [String] {
        let table = table(interface)
        let device = "\"\(interface.rawValue)\""
        var script: [[String]] = [["add", "table", "inet", table]]
        // Output and prerouting: prerouting sees arriving packets before any socket; output is where a local
        // client's packets can be rejected with a reset or ICMP delivered back to it.
        script.append(["add", "chain", "inet", table, "uplink", "{", "type", "filter", "hook", "output", "priority", "0", ";", "}"])
        script.append(["add", "chain", "inet", table, "downlink", "{", "type", "filter", "hook", "prerouting", "priority", "0", ";", "}"])
        let up = ["oifname", device] , down = ["iifname", device]
        for (name, limit) in [("reset", faults.resetAfterBytes), ("stall", faults.stallAfterBytes)] {
            guard let limit else { continue }
            // Named `NAME_after` ("reset" alone is an nft keyword).
            script.append(["add", "set", "inet", table, name + "_after", "{", "typeof", "ct", "id", ";", "flags", "dynamic,timeout", ";",
                           "timeout", "1d", ";", "size", "65536", ";", "}"])
            let over = ["update", "@" + name + "_after", "{", "ct", "id", "quota", "over", String(limit), "bytes", "}", "counter"]
            for (chain, prefix, action) in [("uplink", up, name == "reset" ? ["reject", "with", "tcp", "reset"] : ["drop"]),
                                            ("downlink", down, name == "reset" ? ["tcp", "flags", "set", "rst|ack"] : ["drop"])] {
                for match in matches(selection, uplink: chain == "uplink") {
                    script.append(["add", "rule", "inet", table, chain] + prefix + match + over + action
                                  + ["comment", "\"\(name)\""])
                }
            }
        }
        if let refuse = faults.refuse {
            let action = switch refuse {
            case .reset: ["reject", "with", "tcp", "reset"]
            case .unreachable: ["reject", "with", "icmpx", "type", "host-unreachable"]
            case .timeout: ["drop"]
            }
            for match in matches(selection, uplink: true) {
                script.append(["add", "rule", "inet", table, "uplink"] + up + match
                              + ["tcp", "flags", "&", "(syn|ack)", "==", "syn", "counter"] + action + ["comment", "\"refuse\""])
            }
        }
        return UserspaceEngine.nft(script)
    }

    public static func deleteTable(_ interface: InterfaceName) -> [String] {
        ["nft", "delete", "table", "inet", table(interface)]
    }

    /// The TCP matches for the selection's hosts and ports, one per address family that has hosts (far end:
    /// destination on the way out, source on the way in).
    static func matches(_ selection: TrafficSelection, uplink: Bool) -> [[String]] {
        let far = uplink ? "daddr" : "saddr"
        var tail = ["meta", "l4proto", "tcp"]
        if !selection.ports.isEmpty {
            tail += ["tcp", uplink ? "dport" : "sport"] + UserspaceEngine.set(selection.ports.map(String.init))
        }
        if !selection.localPorts.isEmpty {
            tail += ["tcp", uplink ? "sport" : "dport"] + UserspaceEngine.set(selection.localPorts.map(String.init))
        }
        if selection.hosts.isEmpty { return [tail] }
        return IPNetwork.Family.allCases.compactMap { family in
            let hosts = selection.hosts.filter { $0.family == family }.map(\.tcForm)
            guard !hosts.isEmpty else { return nil }
            return [family == .ipv4 ? "ip" : "ip6", far] + UserspaceEngine.set(hosts) + tail
        }
    }
}

extension ConnectionFaults {
    /// Packets each fault has acted on (reset, dropped or refused), keyed by fault (`reset`, `stall`, `refuse`),
    /// summed over its rules, from `nft -j list table inet tapkit_faults_IFACE`; nil when that is not its JSON.
    public static func counters(nftJSON: Data) -> [String: UInt64]? {
        guard let root = try? JSONSerialization.jsonObject(with: nftJSON) as? [String: Any],
              let items = root["nftables"] as? [[String: Any]] else { return nil }
        var counters: [String: UInt64] = [:]
        for item in items {
            guard let rule = item["rule"] as? [String: Any], let fault = rule["comment"] as? String,
                  let expressions = rule["expr"] as? [[String: Any]] else { continue }
            let packets = expressions.compactMap { ($0["counter"] as? [String: Any])?["packets"] as? Int }.reduce(0, +)
            counters[fault, default: 0] += UInt64(max(0, packets))
        }
        return counters
    }
}
