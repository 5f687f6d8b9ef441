import ArgumentParser
import Foundation
import LinkConditioner
import Sandbox

/// `condition sandboxes`: the running sandboxes, like `rvictl -l`.
struct SandboxesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandboxes",
        abstract: "List running sandboxes (from `condition run`).",
        discussion: "Sandboxes whose `condition run` has died are removed first. Attach a capture with `capture -i INTERFACE`.")

    @Flag(name: .customLong("json"), help: "One JSON array of sandboxes instead of a table.")
    var json = false

    func run() throws {
        let registry = ConditionEnvironment.registry
        SandboxReaper(registry: registry, runner: ProcessRunner()).reapStale()
        let records = registry.records().filter(\.ownerIsAlive)
        print(json ? try Self.json(records) : Self.table(records, now: Date()), terminator: "")
    }

    static func table(_ records: [SandboxRecord], now: Date) -> String {
        guard !records.isEmpty else { return "no sandboxes running\n" }
        let formatter = ISO8601DateFormatter()
        let rows = [["ID", "INTERFACE", "ADDRESS", "PROFILE", "SINCE", "COMMAND"]] + records.map { record in
            [record.identity.id, record.identity.hostInterface, record.identity.namespaceIPv4, record.profile,
             formatter.string(from: record.since) + " (\(Int(now.timeIntervalSince(record.since)))s)",
             shellQuoted(record.command)]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let counts = [nil] + records.map { dnsCounts($0.identity.id) }
        let engines = [nil] + records.map { SandboxEngine.status(of: $0, registry: ConditionEnvironment.registry) }
        return zip(rows, zip(counts, engines)).map { row, extra in
            (0..<5).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                + "  " + row[5] + (extra.1.map { "\n  delay and loss: " + $0.summary } ?? "")
                + (extra.0.map { "\n  DNS queries: " + SandboxDNSAnswering.describe($0) } ?? "")
        }.joined(separator: "\n") + "\n"
    }

    /// The counts of a sandbox's DNS forwarder (`condition run` with DNS faults), nil without one.
    static func dnsCounts(_ id: String) -> DNSForwarderCounts? { ConditionEnvironment.registry.dnsCounts(id: id) }

    static func json(_ records: [SandboxRecord]) throws -> String {
        let formatter = ISO8601DateFormatter()
        let objects: [[String: Any]] = records.map { record in
            var object: [String: Any] = [
                "id": record.identity.id, "interface": record.identity.hostInterface,
                "namespace": record.identity.namespace, "hostAddress": record.identity.hostIPv4,
                "sandboxAddress": record.identity.namespaceIPv4, "hostIPv6": record.identity.hostIPv6,
                "sandboxIPv6": record.identity.namespaceIPv6, "profile": record.profile,
                "command": record.command, "since": formatter.string(from: record.since), "pid": record.ownerPID,
            ]
            if let child = record.childPID { object["commandPid"] = child }
            if let engine = SandboxEngine.status(of: record, registry: ConditionEnvironment.registry) {
                var described: [String: Any] = ["name": engine.engine.rawValue, "summary": engine.summary, "running": engine.running]
                if let report = engine.report, engine.engine == .userspace {
                    described["pid"] = report.worker ?? report.pid
                    if let worker = report.worker, worker != report.pid { described["supervisorPid"] = report.pid }
                    if let restarts = report.restarts { described["restarts"] = restarts }
                    described["delayed"] = report.delayed
                    described["passed"] = report.passed
                    described["dropped"] = report.dropped
                }
                object["engine"] = described
            }
            if let counts = dnsCounts(record.identity.id) {
                object["dnsQueries"] = ["nxdomain": counts.nxdomain, "servfail": counts.servfail, "refused": counts.refused,
                                        "unanswered": counts.unanswered, "delayed": counts.delayed,
                                        "forwarded": counts.forwarded, "lost": counts.lost]
            }
            return object
        }
        let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// `condition apply PROFILE --sandbox ID`, called from the apply command.
enum SandboxApply {
    static func run(profile: Profile, sandbox id: String, duration: String?, engine: EngineRequest) throws {
        if duration != nil {
            throw ReportedError(description: "--for does not apply to --sandbox: a sandbox's conditions last as long as its command")
        }
        let record = try SandboxConditioning.switchProfile(to: profile, sandbox: id, registry: ConditionEnvironment.registry,
                                                           runner: ProcessRunner(), engine: engine)
        print("Switched sandbox \(record.identity.id) (\(record.identity.hostInterface)) to \"\(profile.name)\"")
    }
}

/// `apply`'s target: an interface (`-i`), or a running sandbox (`--sandbox ID`, from `condition sandboxes`).
struct InterfaceOrSandboxOption: ParsableArguments {
    @Option(name: [.short, .customLong("interface")], help: ArgumentHelp("The network interface.", valueName: "iface"))
    var interface: String?

    @Option(name: .customLong("sandbox"), help: ArgumentHelp(
        "Switch the profile of a running sandbox instead (its id from `condition sandboxes`).", valueName: "id"))
    var sandbox: String?

    func validate() throws {
        switch (interface, sandbox) {
        case (nil, nil): throw ValidationError("say where: -i IFACE, or --sandbox ID for a sandbox from `condition run`")
        case (.some, .some): throw ValidationError("give either -i IFACE or --sandbox ID, not both")
        case (.some(let name), nil):
            do { _ = try InterfaceName(name) } catch { throw ValidationError(error.description) }
        case (nil, .some(let id)):
            do { _ = try SandboxIdentity(id: id, slot: 0) } catch { throw ValidationError("\(error)") }
        }
    }

    var name: InterfaceName { get throws { try InterfaceName(interface ?? "") } }
}
