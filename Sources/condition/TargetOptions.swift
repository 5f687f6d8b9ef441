import ArgumentParser
import Foundation
import LinkConditioner

/// Which traffic `apply` conditions: targets narrow it, exclusions take some out. Lists may be given as
/// repeated options or comma-separated.
struct TargetOptions: ParsableArguments {
    @Option(name: .customLong("host"), help: ArgumentHelp(
        "Condition only traffic with this far-end address (IPv4 or IPv6; repeat or comma-separate).", valueName: "address"))
    var hosts: [String] = []
    @Option(name: .customLong("network"), help: ArgumentHelp(
        "Condition only traffic with far ends in this network (10.0.0.0/8, 2001:db8::/32).", valueName: "cidr"))
    var networks: [String] = []
    @Option(name: .customLong("port"), help: ArgumentHelp(
        "Condition only TCP/UDP traffic with this far-end port (the server's port for outgoing connections).",
        valueName: "port"))
    var ports: [String] = []
    @Option(name: .customLong("src-port"), help: ArgumentHelp(
        "Condition only TCP/UDP traffic with this local port (the server's port for incoming connections).",
        valueName: "port"))
    var sourcePorts: [String] = []
    @Option(name: .customLong("exclude"), help: ArgumentHelp(
        "Never condition traffic with this far end: CIDR, ADDRESS:PORT or [IPV6]:PORT (repeat or comma-separate).",
        valueName: "endpoint"))
    var exclusions: [String] = []
    @Flag(name: .customLong("include-ssh"), help: """
        Condition the SSH session condition was started from too (by default, on an interface of the machine's \
        own network namespace, the connection in SSH_CONNECTION is excluded).
        """)
    var includeSSH = false

    func validate() throws {
        do { _ = try selection(sshConnection: nil) } catch { throw ValidationError("\(error)") }
    }

    var isEmpty: Bool {
        hosts.isEmpty && networks.isEmpty && ports.isEmpty && sourcePorts.isEmpty && exclusions.isEmpty
    }

    /// The selection asked for, plus the SSH session's exclusion when `sshConnection` (the value of
    /// SSH_CONNECTION, read by the caller) names one and --include-ssh was not given.
    func selection(sshConnection: String?) throws -> TrafficSelection {
        func list(_ values: [String]) -> [String] {
            values.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
        }
        func port(_ text: String, _ option: String) throws -> UInt16 {
            guard let value = UInt16(text), value > 0 else {
                throw ReportedError(description: "invalid \(option) \"\(text)\": expected a port number from 1 to 65535")
            }
            return value
        }
        var selection = TrafficSelection()
        do {
            for host in list(hosts) {
                let network = try IPNetwork(host)
                guard network.prefixLength == (network.family == .ipv4 ? 32 : 128) else {
                    throw ReportedError(description: "invalid --host \"\(host)\": expected one address; use --network for a CIDR")
                }
                selection.hosts.append(network)
            }
            selection.hosts += try list(networks).map { try IPNetwork($0) }
            selection.exclusions = try list(exclusions).map { TrafficSelection.Exclusion(try RemoteEndpoint($0)) }
        } catch let error as SelectionError {
            throw ReportedError(description: "invalid target: \(error)")
        }
        selection.ports = try list(ports).map { try port($0, "--port") }
        selection.localPorts = try list(sourcePorts).map { try port($0, "--src-port") }
        if !includeSSH, let ssh = TrafficSelection.sshSession(from: sshConnection) {
            selection = selection.excluding([ssh])
        }
        return selection
    }
}

/// `--netns NAME` or `--pid PID`: act on another network namespace without entering it.
struct NamespaceOptions: ParsableArguments {
    @Option(name: .customLong("netns"), help: ArgumentHelp(
        "Act in this named network namespace (`ip netns list`) instead of our own.", valueName: "name"))
    var netns: String?
    @Option(name: .customLong("pid"), help: ArgumentHelp(
        "Act in the network namespace of this process (a container's), via /proc/PID/ns/net.", valueName: "pid"))
    var pid: Int32?

    func validate() throws {
        if netns != nil && pid != nil { throw ValidationError("give either --netns NAME or --pid PID, not both") }
        if let pid, pid <= 0 { throw ValidationError("invalid --pid \(pid): expected a process id") }
    }

    func target() throws -> NetworkNamespaceTarget? {
        if let netns { return try NetworkNamespaceTarget.named(validating: netns) }
        if let pid { return try NetworkNamespaceTarget.process(validating: pid) }
        return nil
    }

    /// A conditioner acting in the chosen namespace (or our own).
    func conditioner() throws -> Conditioner {
        guard let target = try target() else { return makeConditioner() }
        let runner = target.runner()
        return Conditioner(runner: runner, store: StateStore(directory: ConditionEnvironment.stateDirectory,
                                                             namespaceID: target.namespaceID),
                           inInitialNamespace: target.isInitialNamespace, logger: makeLogger())
    }
}
