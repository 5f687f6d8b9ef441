import Foundation
import Sandbox

/// Connection-level faults that packet loss cannot express (toxiproxy's reset_peer, timeout, limit_data and
/// toxicity): reset or stall a TCP connection after some bytes or some time, reset a share of connections, refuse
/// new ones. Applied by an nftables table of their own, `tapkit_faults_IFACE`, beside whichever engine conditions
/// the link, on the profile's selected traffic.
public struct ConnectionFaults: Sendable, Equatable, Hashable, Codable {
    /// Reset every selected TCP connection once it has carried this many bytes (IP bytes, both ways).
    public var resetAfterBytes: UInt64?
    /// Reset every selected TCP connection this long after it opened (at its first packet after that).
    public var resetAfterMilliseconds: UInt64?
    /// Reset only this share of new connections, chosen at random when each opens (toxiproxy's toxicity); with
    /// neither `resetAfterBytes` nor `resetAfterMilliseconds`, a chosen connection is reset at its first packet
    /// after the SYNs.
    public var resetPercent: Double?
    /// Drop everything of a selected TCP connection, both ways, once it has carried this many bytes.
    public var stallAfterBytes: UInt64?
    /// Refuse new selected TCP connections.
    public var refuse: Refusal?
    /// DNS faults, in order (the first that matches a name decides): answered by the DNS forwarder of a
    /// `condition run` sandbox, not by nftables, so only `run` takes them.
    public var dns: [DNSFault]?

    public enum Refusal: String, Sendable, Codable, Hashable, CaseIterable {
        /// The client gets a TCP reset: ECONNREFUSED.
        case reset
        /// The client gets ICMP host unreachable: EHOSTUNREACH.
        case unreachable
        /// The SYN is dropped: the connect times out.
        case timeout
    }

    /// Limits shared by profile files and flags.
    public static let maximumBytes: UInt64 = 1_000_000_000_000_000
    public static let maximumMilliseconds: UInt64 = 86_400_000

    public init(resetAfterBytes: UInt64? = nil, resetAfterMilliseconds: UInt64? = nil, resetPercent: Double? = nil,
                stallAfterBytes: UInt64? = nil, refuse: Refusal? = nil, dns: [DNSFault]? = nil) {
        self.resetAfterBytes = resetAfterBytes
        self.resetAfterMilliseconds = resetAfterMilliseconds
        self.resetPercent = resetPercent
        self.stallAfterBytes = stallAfterBytes
        self.refuse = refuse
        self.dns = dns?.isEmpty == true ? nil : dns
    }

    public var isEmpty: Bool { self == ConnectionFaults() }

    /// Whether any fault needs the nftables table (all but the DNS faults).
    public var needsTable: Bool { resets || stallAfterBytes != nil || refuse != nil }

    /// Whether any reset fault is set.
    var resets: Bool { resetAfterBytes != nil || resetAfterMilliseconds != nil || resetPercent != nil }

    /// These faults with every field `other` sets taken from it (command-line flags over a profile's faults).
    public func overridden(by other: ConnectionFaults) -> ConnectionFaults {
        ConnectionFaults(resetAfterBytes: other.resetAfterBytes ?? resetAfterBytes,
                         resetAfterMilliseconds: other.resetAfterMilliseconds ?? resetAfterMilliseconds,
                         resetPercent: other.resetPercent ?? resetPercent,
                         stallAfterBytes: other.stallAfterBytes ?? stallAfterBytes, refuse: other.refuse ?? refuse,
                         dns: other.dns ?? dns)
    }

    /// What is out of range, in the words of the profile file's fields.
    public var problems: [String] {
        var problems: [String] = []
        for (field, value) in [("resetAfterBytes", resetAfterBytes), ("stallAfterBytes", stallAfterBytes)] {
            if let value, !(1...Self.maximumBytes).contains(value) { problems.append("faults.\(field) must be 1 to 10^15 bytes") }
        }
        if let value = resetAfterMilliseconds, !(1...Self.maximumMilliseconds).contains(value) {
            problems.append("faults.resetAfterMs must be 1 ms to 1 day")
        }
        if let value = resetPercent, !(value > 0 && value <= 100) { problems.append("faults.resetPercent must be more than 0 and at most 100") }
        for fault in dns ?? [] {
            if case .delay(let milliseconds) = fault.action, !(1...DNSFault.maximumDelayMilliseconds).contains(milliseconds) {
                problems.append("faults.dns delay must be 1 ms to 60 s")
            }
            if !fault.names.allSatisfy(DNSFault.isPlainName) { problems.append("faults.dns names must be plain names such as api.example.com") }
        }
        return problems
    }

    public static func table(_ interface: InterfaceName) -> String {
        "tapkit_faults_" + String(interface.rawValue.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// One `nft` invocation creating the table. Bytes are counted per connection by a quota in a dynamic set keyed
    /// by conntrack id, updated from both directions (the kernel's conntrack accounting is off by default). A
    /// connection's age is a set whose elements expire: its id goes in when it opens, with a timeout of the reset
    /// time, and a connection known to have opened (a second set, so those open before apply are left alone) but no
    /// longer in it is older than that. The share of connections reset is drawn once per connection, when it opens.
    /// A reset turns the arriving packet into an RST for the local socket (so the client sees ECONNRESET even when
    /// it only receives) and rejects what the client sends with a reset. Traffic to `--exclude` endpoints returns
    /// first. Every fault rule has a counter and a comment naming its fault: `status` reads them.
    public static func createTable(_ faults: ConnectionFaults, interface: InterfaceName,
                                   selection: TrafficSelection) -> [String] {
        let table = table(interface)
        let device = "\"\(interface.rawValue)\""
        var script: [[String]] = [["add", "table", "inet", table]]
        // Output and prerouting: prerouting sees arriving packets before any socket; output is where a local
        // client's packets can be rejected with a reset or ICMP delivered back to it.
        script.append(["add", "chain", "inet", table, "uplink", "{", "type", "filter", "hook", "output", "priority", "0", ";", "}"])
        script.append(["add", "chain", "inet", table, "downlink", "{", "type", "filter", "hook", "prerouting", "priority", "0", ";", "}"])
        func set(_ name: String, timeout: String) -> [String] {
            ["add", "set", "inet", table, name, "{", "typeof", "ct", "id", ";", "flags", "dynamic,timeout", ";",
             "timeout", timeout, ";", "size", "65536", ";", "}"]
        }
        let chains = [("uplink", ["oifname", device]), ("downlink", ["iifname", device])]
        func rules(_ body: (_ uplink: Bool) -> [[String]]) {
            for (chain, prefix) in chains {
                for match in matches(selection, uplink: chain == "uplink") {
                    script += body(chain == "uplink").map { ["add", "rule", "inet", table, chain] + prefix + match + $0 }
                }
            }
        }
        for (chain, prefix) in chains {
            for exclusion in selection.exclusions {
                script.append(["add", "rule", "inet", table, chain] + prefix
                              + UserspaceEngine.exclusionMatch(exclusion.endpoint, uplink: chain == "uplink") + ["return"])
            }
        }
        // When a connection opens (in either direction: a client here, or a server here with --src-port).
        var opening: [String] = []
        if faults.resetAfterMilliseconds != nil {
            script.append(set("reset_open", timeout: "2d"))
            script.append(set("reset_young", timeout: String(faults.resetAfterMilliseconds!) + "ms"))
            opening += ["add", "@reset_open", "{", "ct", "id", "}", "add", "@reset_young", "{", "ct", "id", "}"]
        }
        if let percent = faults.resetPercent, percent < 100 {
            script.append(set("reset_chosen", timeout: "2d"))
            opening += ["numgen", "random", "mod", "1000000", "<", String(Int((percent * 10_000).rounded())),
                        "add", "@reset_chosen", "{", "ct", "id", "}"]
        }
        if !opening.isEmpty { rules { _ in [["ct", "state", "new"] + opening] } }
        let chosen = (faults.resetPercent ?? 100) < 100 ? ["ct", "id", "@reset_chosen"] : []
        // Alternatives, each a rule: reset after N bytes, or after N ms, whichever comes first; or at once.
        var resetWhen: [[String]] = []
        if let bytes = faults.resetAfterBytes {
            script.append(set("reset_after", timeout: "1d"))
            resetWhen.append(["update", "@reset_after", "{", "ct", "id", "quota", "over", String(bytes), "bytes", "}"])
        }
        if faults.resetAfterMilliseconds != nil {
            resetWhen.append(["ct", "id", "@reset_open", "ct", "id", "!=", "@reset_young"])
        }
        let atOnce = ["tcp", "flags", "!", "syn"]
        if resetWhen.isEmpty && faults.resetPercent != nil { resetWhen.append(atOnce) }
        if faults.resets {
            // Both ends learn of a reset, as from a peer's: the local socket from the RST made here, the far end from
            // the local stack's own RST when the far end's next segment, let through, finds no socket any more.
            script.append(set("reset_done", timeout: "1d"))
            let done = ["add", "@reset_done", "{", "ct", "id", "}", "counter"]
            if resetWhen.contains(where: { $0 != atOnce }) {
                // What the local socket still sends once its connection was reset is rejected here, uncounted, so the
                // counter below counts each connection once.
                for match in matches(selection, uplink: true) {
                    script.append(["add", "rule", "inet", table, "uplink"] + chains[0].1 + match
                                  + ["ct", "id", "@reset_done", "tcp", "flags", "!", "rst", "reject", "with", "tcp", "reset"])
                }
            }
            rules { uplink in
                resetWhen.compactMap { when in
                    if uplink {
                        // "At once" means at the first packet that arrives; and the local stack's RSTs pass.
                        return when == atOnce ? nil
                            : chosen + when + ["tcp", "flags", "!", "rst"] + done + ["reject", "with", "tcp", "reset", "comment", "\"reset\""]
                    }
                    return chosen + when + ["ct", "id", "!=", "@reset_done"] + done + ["tcp", "flags", "set", "rst|ack", "comment", "\"reset\""]
                }
            }
        }
        if let bytes = faults.stallAfterBytes {
            // Named `NAME_after` ("stall" alone would do, but "reset" is an nft keyword: one pattern for both).
            script.append(set("stall_after", timeout: "1d"))
            script.append(set("stall_done", timeout: "1d"))
            // A stalled connection's packets are dropped by the first rule, uncounted; the second counts each connection
            // once, at the packet that took it over the quota.
            rules { _ in [["ct", "id", "@stall_done", "drop"],
                          ["update", "@stall_after", "{", "ct", "id", "quota", "over", String(bytes), "bytes", "}",
                           "add", "@stall_done", "{", "ct", "id", "}", "counter", "drop", "comment", "\"stall\""]] }
        }
        if let refuse = faults.refuse {
            let action = switch refuse {
            case .reset: ["reject", "with", "tcp", "reset"]
            case .unreachable: ["reject", "with", "icmpx", "type", "host-unreachable"]
            case .timeout: ["drop"]
            }
            // Counted once per connection attempt: a SYN the client sends again (its connect still waiting, same ports)
            // is not counted again. Keyed by ports, not conntrack id: a refused SYN's conntrack entry is never confirmed,
            // so its retransmission gets a new one.
            script.append(["add", "set", "inet", table, "refuse_seen", "{", "typeof", "tcp", "sport", ".", "tcp", "dport", ";",
                           "flags", "dynamic,timeout", ";", "timeout", "2m", ";", "size", "65536", ";", "}"])
            let syn = ["tcp", "flags", "&", "(syn|ack)", "==", "syn"]
            for match in matches(selection, uplink: true) {
                script.append(["add", "rule", "inet", table, "uplink"] + chains[0].1 + match + syn
                              + ["tcp", "sport", ".", "tcp", "dport", "!=", "@refuse_seen",
                                 "add", "@refuse_seen", "{", "tcp", "sport", ".", "tcp", "dport", "}", "counter", "comment", "\"refuse\""])
                script.append(["add", "rule", "inet", table, "uplink"] + chains[0].1 + match + syn + action)
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
    /// Connections each fault has acted on (reset, stalled, or refused: connection attempts, a SYN sent again counted
    /// once), keyed by fault (`reset`, `stall`, `refuse`), summed over its counted rules (one per connection), from `nft -j list table inet tapkit_faults_IFACE`; nil when that is not its JSON.
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
