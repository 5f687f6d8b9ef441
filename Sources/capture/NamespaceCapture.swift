import ArgumentParser
import LiveView
import PacketCapture
import SystemSupport

/// `--netns NAME|PATH` and `--pid PID`: a live capture whose packet socket is made inside another network
/// namespace. Only the handle's origin changes: the namespace is joined by one short-lived thread that creates and
/// activates the pcap handle (`NetworkNamespaceFile.perform`); the socket stays bound to that namespace, and the
/// rest of capture (every mode) reads it from here as from any live handle.
extension CaptureCommand {
    /// Refuses combinations that have no meaning inside another namespace.
    func validateNamespace() throws {
        guard let flag = source.namespaceFlag else { return }
        if source.netns != nil && source.pid != nil {
            throw ValidationError("Give either --netns NAME|PATH or --pid PID, not both: they name one network namespace.")
        }
        if let pid = source.pid, pid <= 0 { throw ValidationError("invalid --pid \(pid): expected a process id (pgrep NAME).") }
        if source.readFile != nil {
            throw ValidationError("\(flag) captures live inside another network namespace; -r reads a file, which has no "
                                  + "namespace. Leave one of them out.")
        }
        if !commandOptions.command.isEmpty {
            throw ValidationError("-- COMMAND makes a sandbox of its own, so \(flag) cannot choose where it runs. To watch a "
                                  + "command in a namespace, start it there (ip netns exec NAME COMMAND) and capture with "
                                  + "--netns NAME from another shell.")
        }
    }

    /// The target of `--netns`/`--pid`, opened and checked; nil without them.
    func openNamespace() throws(NetworkNamespaceError) -> NetworkNamespaceFile? {
        let target: NetworkNamespaceTarget
        if let pid = source.pid {
            target = try .process(validating: pid)
        } else if let netns = source.netns {
            target = try .parse(netns)
        } else {
            return nil
        }
        return try NetworkNamespaceFile(target)
    }

    /// Opens and activates the live handle inside `namespace`.
    static func openLive(_ interface: String, options: LiveOptions, in namespace: NetworkNamespaceFile) throws -> CaptureHandle {
        try inNamespace(namespace, named: interface) { try CaptureHandle.openLive(interface, options: options) }
    }

    /// The live view's conditioner panel acts on this namespace's interfaces, so it says where to go instead.
    static func namespacePanel(_ namespace: NetworkNamespaceFile) -> ConditionerPanel {
        let target = namespace.target.arguments.joined(separator: " ")
        return ConditionerPanel(unavailable: "the capture runs inside \(namespace.target); condition its interfaces with "
                                + "`condition apply PROFILE -i INTERFACE \(target)`")
    }

    /// Why a capture in another namespace ended by itself, in words (standard error, after the counts).
    static func words(for departure: NetworkNamespaceWatch.Departure) -> String {
        switch departure {
        case .processExited(let pid):
            "process \(pid) exited, so the capture inside its network namespace ended"
        case .namespaceRemoved(let target):
            "\(target.path) was removed (or now names another namespace), so the capture inside \(target) ended"
        }
    }
}

/// Runs `work` inside `namespace` when there is one, here otherwise; an `interface` libpcap does not find there is
/// said to be missing inside the namespace, with the command that lists its interfaces.
func inNamespace<Value: Sendable>(_ namespace: NetworkNamespaceFile?, named interface: String,
                                  _ work: @escaping @Sendable () throws -> Value) throws -> Value {
    guard let namespace else { return try work() }
    do {
        return try namespace.perform(work)
    } catch CaptureError.noSuchDevice {
        throw NamespaceCaptureError.noSuchInterface(interface, namespace.target)
    }
}

/// What went wrong opening a capture inside another namespace, beyond what libpcap says.
enum NamespaceCaptureError: Error, CustomStringConvertible {
    case noSuchInterface(String, NetworkNamespaceTarget)

    var description: String {
        switch self {
        case .noSuchInterface(let interface, let target):
            "no interface '\(interface)' inside \(target); list its interfaces with: \(target.listInterfacesCommand) "
                + "(or leave -i out to capture on all of them)"
        }
    }
}
