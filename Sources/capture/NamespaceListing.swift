import Foundation
import Sandbox
import SystemSupport

/// What `capture -D` lists after this namespace's interfaces, as `rvictl -l` lists devices: the other places a
/// capture can be opened, each with the words to pass. Apart from the numbered interface lines (which `-i N`
/// counts), under headings of their own, and only the sections that have something in them.
struct NamespaceListing {
    /// `ip netns` names that are not sandboxes.
    var namespaces: [String]
    var sandboxes: [SandboxRecord]
    var containers: [Container]

    /// A running container, by the engine that runs it.
    struct Container: Equatable {
        var engine: String
        var name: String
        var image: String
        var pid: Int32
    }

    /// What exists now. Containers only where docker or podman is installed; an engine that does not answer (no
    /// daemon, no permission) within 3 seconds is left out.
    static func current(registry: SandboxRegistry, runner: any CommandRunner = ProcessRunner()) -> NamespaceListing {
        let sandboxes = registry.records().filter { FileManager.default.fileExists(atPath: "/run/netns/\($0.identity.namespace)") }
        let sandboxNamespaces = Set(sandboxes.map(\.identity.namespace))
        let namespaces = NetworkNamespace.names().filter { !sandboxNamespaces.contains($0) }
        let running = ["docker", "podman"].filter { ProcessRunner.locate($0) != nil }
            .flatMap { containers(engine: $0, runner: runner) }
        return NamespaceListing(namespaces: namespaces, sandboxes: sandboxes, containers: running)
    }

    /// `ENGINE ps`, then each container's pid from `ENGINE inspect`.
    static func containers(engine: String, runner: any CommandRunner) -> [Container] {
        guard let listed = try? runner.run(["timeout", "3", engine, "ps", "--format", "{{.ID}}\t{{.Names}}\t{{.Image}}"]),
              listed.status == 0 else { return [] }
        return listed.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3,
                  let inspected = try? runner.run(["timeout", "3", engine, "inspect", "--format", "{{.State.Pid}}", fields[0]]),
                  inspected.status == 0,
                  let pid = Int32(inspected.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else { return nil }
            return Container(engine: engine, name: fields[1], image: fields[2], pid: pid)
        }
    }

    var isEmpty: Bool { namespaces.isEmpty && sandboxes.isEmpty && containers.isEmpty }

    /// The sections, each line ending in what to pass to capture.
    var text: String {
        var text = ""
        if !namespaces.isEmpty {
            text += "\nNetwork namespaces (ip netns), capture inside one with:\n"
            let width = namespaces.map(\.count).max() ?? 0
            for name in namespaces {
                text += "  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  --netns \(name)\n"
            }
        }
        if !sandboxes.isEmpty {
            text += "\nSandboxes (capture -- COMMAND, condition run), capture one with:\n"
            for record in sandboxes {
                let identity = record.identity
                let command = record.command.joined(separator: " ")
                let shown = command.count > 40 ? String(command.prefix(39)) + "…" : command
                text += "  \(identity.id)  \(shown)  -i \(identity.hostInterface)  (or --netns \(identity.namespace))\n"
            }
        }
        if !containers.isEmpty {
            text += "\nContainers, capture inside one with:\n"
            for container in containers {
                text += "  \(container.engine) \(container.name) (\(container.image))  --pid \(container.pid)\n"
            }
        }
        return text
    }
}
