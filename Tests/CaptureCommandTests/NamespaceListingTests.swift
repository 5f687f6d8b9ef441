import SystemSupport
import Testing
@testable import capture

/// `capture -D`'s containers section from what `docker ps` and `docker inspect` answer (no engine needed), and
/// nothing from an engine that does not answer.
@Suite struct NamespaceListingTests {
    /// Answers `ps` with two containers and `inspect` with a pid for one of them only.
    struct ScriptedEngine: CommandRunner {
        var running: Bool
        func run(_ arguments: [String]) throws -> CommandResult {
            guard running else { return CommandResult(status: 1, stderr: "Cannot connect to the Docker daemon") }
            if arguments.contains("ps") { return CommandResult(stdout: "4f1c\tweb\tnginx:1.25\n9a0b\tgone\tbusybox\n") }
            if arguments.last == "4f1c" { return CommandResult(stdout: "4242\n") }
            return CommandResult(stdout: "0\n")  // a container that stopped between the two calls
        }
    }

    @Test func containersCarryTheirPidAsTheWordsToPass() {
        let containers = NamespaceListing.containers(engine: "docker", runner: ScriptedEngine(running: true))
        #expect(containers == [.init(engine: "docker", name: "web", image: "nginx:1.25", pid: 4242)])
        let listing = NamespaceListing(namespaces: ["lab"], sandboxes: [], containers: containers)
        #expect(listing.text == """

            Network namespaces (ip netns), capture inside one with:
              lab  --netns lab

            Containers, capture inside one with:
              docker web (nginx:1.25)  --pid 4242

            """)
    }

    @Test func anEngineWithoutItsDaemonListsNothing() {
        #expect(NamespaceListing.containers(engine: "docker", runner: ScriptedEngine(running: false)).isEmpty)
        #expect(NamespaceListing(namespaces: [], sandboxes: [], containers: []).text.isEmpty)
    }
}
