import Foundation
import Sandbox
import SystemSupport

/// TapKit's own answer to a conditioned sandbox's DNS, for `condition run` and `capture --profile -- COMMAND` alike:
/// the forwarder (`RunningSandbox.answerDNS`) started when the profile has DNS faults or a DNS delay, so neither
/// needs netem and neither is left out by one of the two commands.
public struct SandboxDNSAnswering: Sendable {
    public let forwarder: SandboxDNSForwarder
    /// "DNS of the command answered at 10.x.y.1 (DNS: nxdomain:a.example), other names from the host's name servers;
    /// every query held 200 ms (the profile's DNS delay)": what to tell the user before the command starts.
    public let announcement: String

    /// Whether `profile` needs the forwarder: the veth pair cannot answer DNS faults, and delays DNS only with netem.
    public static func isNeeded(for profile: Profile) -> Bool {
        profile.faults?.dns?.isEmpty == false || profile.dnsDelayMicroseconds > 0
    }

    /// Starts the forwarder on a fresh sandbox when `profile` needs it (nil otherwise). Called before
    /// `SandboxConditioning.apply`, which then leaves the DNS delay to the forwarder (`SandboxRecord.answersDNS`):
    /// `SandboxConditioning.condition` does both in that order.
    /// The faults and the delay are read from the sandbox's record at each query, so a switch (`apply --sandbox`,
    /// the live view's panel) takes effect at the next one.
    public static func start(for profile: Profile, in sandbox: RunningSandbox, runner: any CommandRunner) throws -> SandboxDNSAnswering? {
        guard isNeeded(for: profile) else { return nil }
        let dns = profile.faults?.dns ?? []
        let id = sandbox.identity.id
        let registry = sandbox.registry
        // Until the profile is recorded (before the command starts), its own settings.
        let recorded: @Sendable () -> Profile = { SandboxConditions(recordText: registry.record(id: id)?.conditions)?.profile ?? profile }
        let forwarder = try sandbox.answerDNS(faults: { recorded().faults?.dns ?? [] },
                                              dnsDelay: { recorded().dnsDelayMicroseconds / 1000 }, runner: runner)
        let faults = ProfileDescription.faults(ConnectionFaults(dns: dns.isEmpty ? nil : dns)).map { " (\($0))" } ?? ""
        let delay = profile.dnsDelayMicroseconds > 0
            ? "; every query held \(TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds)) (the profile's DNS delay)" : ""
        return SandboxDNSAnswering(forwarder: forwarder, announcement: "DNS of the command answered at \(sandbox.identity.hostIPv4)"
                                   + faults + ", other names from the host's name servers" + delay)
    }

    /// Stops the forwarder (after the command ended); returns what it did, "DNS queries: 2 answered NXDOMAIN, ...".
    public func stop() -> String {
        forwarder.stop()
        return "DNS queries: " + Self.describe(forwarder.counters)
    }

    /// "2 answered NXDOMAIN, 1 left unanswered, 5 answered by the host's name servers": the counters that are not zero.
    public static func describe(_ counts: DNSForwarderCounts) -> String {
        let parts = [(counts.nxdomain, "answered NXDOMAIN"), (counts.servfail, "answered SERVFAIL"), (counts.refused, "answered REFUSED"),
                     (counts.unanswered, "left unanswered"), (counts.delayed, "delayed"), (counts.forwarded, "answered by the host's name servers"),
                     (counts.lost, "lost (no name server answered in time, or over the forwarder's limits)")]
        let said = parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return said.isEmpty ? "none" : said.joined(separator: ", ")
    }
}

/// A switch to a profile with DNS faults, in a sandbox whose DNS TapKit does not answer (it started with a profile
/// that had neither DNS faults nor a DNS delay, so its command asks the host's name servers directly).
public struct SandboxDNSFaultsUnanswerableError: Error, CustomStringConvertible {
    public var profile: String
    public var faults: [DNSFault]
    public var description: String {
        "profile \"\(profile)\" has DNS faults (\(faults.map(\.description).joined(separator: ", "))), and this sandbox's DNS "
            + "is not answered by TapKit: it started with a profile without DNS faults or a DNS delay, so its command asks "
            + "the host's name servers itself; nothing was changed. Start the command with a profile that has them "
            + "(condition run PROFILE -- COMMAND, or capture --profile PROFILE -- COMMAND)."
    }
}

extension SandboxDNSAnswering {
    /// Refuses a switch whose DNS faults could not apply: never silently without them.
    public static func checkSwitch(to profile: Profile, answersDNS: Bool?) throws {
        if answersDNS != true, let dns = profile.faults?.dns, !dns.isEmpty {
            throw SandboxDNSFaultsUnanswerableError(profile: profile.name, faults: dns)
        }
    }
}
