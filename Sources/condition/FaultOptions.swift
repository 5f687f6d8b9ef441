import ArgumentParser
import Foundation
import LinkConditioner
import Sandbox

extension ConnectionFaults.Refusal: ExpressibleByArgument {}

/// Connection faults from the command line (toxiproxy's reset_peer, limit_data/timeout and toxicity; a
/// profile's `faults` object). Each flag overrides the same field of the profile's faults; without a profile
/// name, the faults alone are applied (profile "Connection faults").
struct FaultOptions: ParsableArguments {
    @Option(name: .customLong("reset-after-bytes"), help: ArgumentHelp(
        "Reset each TCP connection once it has carried this many bytes (IP bytes, both ways; toxiproxy's limit_data, but a reset).",
        valueName: "bytes"))
    var resetAfterBytes: String?
    @Option(name: .customLong("reset-after"), parsing: .unconditional, help: ArgumentHelp(
        "Reset each TCP connection this long after it opened, at its next packet (toxiproxy's reset_peer timeout): 10s, 500ms, 2m.",
        valueName: "duration"))
    var resetAfter: String?
    @Option(name: .customLong("reset-percent"), help: ArgumentHelp(
        "Reset only this share of new TCP connections, drawn as each opens (toxiproxy's toxicity, in percent); alone, a chosen connection is reset at its first packet after the handshake's SYNs.",
        valueName: "percent"))
    var resetPercent: String?
    @Option(name: .customLong("stall-after-bytes"), help: ArgumentHelp(
        "Drop everything of a TCP connection, both ways, once it has carried this many bytes (toxiproxy's timeout after limit_data).",
        valueName: "bytes"))
    var stallAfterBytes: String?
    @Option(name: .customLong("refuse"), help: ArgumentHelp(
        "Refuse new TCP connections: reset (ECONNREFUSED), unreachable (ICMP, EHOSTUNREACH) or timeout (the SYN is dropped).",
        valueName: "reset|unreachable|timeout"))
    var refuse: ConnectionFaults.Refusal?
    @Option(name: .customLong("dns-fault"), help: ArgumentHelp(
        "condition run and apply --sandbox only: answer the command's DNS queries for NAME and names under it (every name without :NAME) with NXDOMAIN, SERVFAIL or REFUSED, no answer (timeout), or a delay, e.g. nxdomain:api.example.com, timeout, delay=2s:cdn.example.com. Repeat it; the first that matches a name decides.",
        valueName: "nxdomain|servfail|refused|timeout|delay=DURATION[:NAME,...]"))
    var dnsFaults: [String] = []

    func validate() throws {
        do { _ = try faults() } catch { throw ValidationError("\(error)") }
    }

    /// The faults the flags ask for; nil when no fault flag was given.
    func faults() throws -> ConnectionFaults? {
        func bytes(_ text: String?, _ option: String) throws -> UInt64? {
            guard let text else { return nil }
            guard let value = UInt64(text), (1...ConnectionFaults.maximumBytes).contains(value) else {
                throw ReportedError(description: "invalid \(option) \"\(text)\": expected a whole number of bytes from 1 to 10^15")
            }
            return value
        }
        var faults = ConnectionFaults(resetAfterBytes: try bytes(resetAfterBytes, "--reset-after-bytes"),
                                      stallAfterBytes: try bytes(stallAfterBytes, "--stall-after-bytes"), refuse: refuse,
                                      dns: try dnsFaults.map { text in
                                          do { return try DNSFault.parse(text, seconds: DurationParser.seconds) } catch {
                                              throw ReportedError(description: "--dns-fault: \(error)")
                                          }
                                      })
        if let resetAfter {
            guard let seconds = DurationParser.seconds(resetAfter), seconds >= 0.001,
                  seconds * 1000 <= Double(ConnectionFaults.maximumMilliseconds) else {
                throw ReportedError(description: "invalid --reset-after \"\(resetAfter)\": expected a duration from 1ms to 24h, such as 10s, 500ms or 2m")
            }
            faults.resetAfterMilliseconds = UInt64((seconds * 1000).rounded())
        }
        if let resetPercent {
            let text = resetPercent.hasSuffix("%") ? String(resetPercent.dropLast()) : resetPercent
            guard let value = Double(text), value > 0, value <= 100 else {
                throw ReportedError(description: "invalid --reset-percent \"\(resetPercent)\": expected a share of connections in percent, more than 0 and at most 100 (30 or 30%)")
            }
            faults.resetPercent = value
        }
        return faults.isEmpty ? nil : faults
    }

    /// Whether any fault flag was given.
    var given: Bool {
        resetAfterBytes != nil || resetAfter != nil || resetPercent != nil || stallAfterBytes != nil || refuse != nil || !dnsFaults.isEmpty
    }

    /// The profile `name` names, with the flags' faults over its own; without a name, the faults alone.
    /// DNS faults only for a sandbox (`use` "run" or "--sandbox"), whose DNS TapKit answers.
    func profile(_ name: String?, catalog: () throws -> ProfileCatalog, use: String) throws -> Profile {
        let flags = try faults()
        var profile: Profile
        if let name {
            profile = try catalog().profileWithSettings(named: name, for: use)
            if let flags { profile.faults = (profile.faults ?? ConnectionFaults()).overridden(by: flags) }
        } else {
            guard let flags else { throw ReportedError(description: "name a profile (see `condition list`) or give a fault flag such as --refuse reset") }
            profile = Profile(name: "Connection faults", summary: "faults from the command line", faults: flags)
        }
        if use != "run" && use != "--sandbox", let dns = profile.faults?.dns {
            throw ReportedError(description: "DNS faults (\(dns.map(\.description).joined(separator: ", ")), from "
                                + (dnsFaults.isEmpty ? "the profile's faults.dns" : "--dns-fault")
                                + ") work in sandboxes only (`condition run`, `apply --sandbox`), where TapKit answers the command's DNS: "
                                + "sudo condition run \(name.map { "\"\($0)\" " } ?? "")--dns-fault ... -- COMMAND")
        }
        return profile
    }
}
