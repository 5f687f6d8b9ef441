import Foundation
import LinkConditioner
import TestSupport
import Testing

/// Two network namespaces joined by a veth pair, made for one test and deleted after it:
/// the client side `vc` (10.77.N.1, fd77::1) is what gets conditioned; the server side `vs` (10.77.N.2, fd77::2).
final class NamespacePair {
    let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    let client: String
    let server: String
    let clientInterface = try! InterfaceName("vc")
    let serverAddress: String
    let stateDirectory: URL
    private var background: [Process] = []

    init() throws {
        client = "tkc-\(suffix)"
        server = "tks-\(suffix)"
        let subnet = Int.random(in: 1...250)
        serverAddress = "10.77.\(subnet).2"
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-ns-state-\(suffix)")
        try must("ip", ["netns", "add", client])
        try must("ip", ["netns", "add", server])
        try must("ip", ["-n", client, "link", "add", "vc", "type", "veth", "peer", "name", "vs", "netns", server])
        try must("ip", ["-n", client, "addr", "add", "10.77.\(subnet).1/24", "dev", "vc"])
        try must("ip", ["-n", server, "addr", "add", "\(serverAddress)/24", "dev", "vs"])
        try must("ip", ["-n", client, "-6", "addr", "add", "fd77:\(subnet)::1/64", "dev", "vc", "nodad"])
        try must("ip", ["-n", server, "-6", "addr", "add", "fd77:\(subnet)::2/64", "dev", "vs", "nodad"])
        for (ns, dev) in [(client, "vc"), (server, "vs")] {
            try must("ip", ["-n", ns, "link", "set", dev, "up"])
            try must("ip", ["-n", ns, "link", "set", "lo", "up"])
        }
    }

    deinit {
        // Namespaces first: nothing below may keep them alive, and no wait here can block their removal.
        _ = try? run("ip", ["netns", "del", client])
        _ = try? run("ip", ["netns", "del", server])
        for process in background where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    @discardableResult
    func must(_ program: String, _ arguments: [String]) throws -> ProcessResult {
        let result = try run(program, arguments)
        guard result.status == 0 else {
            throw TestFailure("\(program) \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderrText)")
        }
        return result
    }

    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["TAPKIT_STATE_DIR"] = stateDirectory.path
        return env
    }

    /// Runs `condition` inside the client namespace.
    func condition(_ arguments: [String]) throws -> ProcessResult {
        try run("ip", ["netns", "exec", client, TestEnvironment.executable("condition").path] + arguments, environment: environment)
    }

    /// Starts a program in a namespace and leaves it running until the pair is deleted. `nsenter` execs the
    /// program itself (`ip netns exec` forks and waits), so the process's pid is the program's own: a signal
    /// sent to it reaches the program.
    @discardableResult
    func start(in namespace: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
        process.arguments = ["--net=/run/netns/\(namespace)", "--"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        if let environment { process.environment = environment }
        try process.run()
        background.append(process)
        return process
    }

    /// `tc -j qdisc show dev DEV` in the client namespace, parsed.
    func qdiscs(_ device: String = "vc") throws -> [[String: Any]] {
        let result = try must("tc", ["-n", client, "-j", "qdisc", "show", "dev", device])
        return try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]] ?? []
    }

    /// The qdiscs' configuration as tc's JSON. htb prints a traffic counter even without `-s`
    /// (`direct_packets_stat`, packets sent past its classes, e.g. the neighbour discovery the veth does on its
    /// own): it is blanked, so comparing two of these compares configuration, not what passed in between.
    func qdiscJSON(_ device: String = "vc") throws -> String {
        try must("tc", ["-n", client, "-j", "qdisc", "show", "dev", device]).stdoutText
            .replacing(/"direct_packets_stat":\d+/, with: #""direct_packets_stat":N"#)
    }

    func links() throws -> [String] {
        let result = try must("ip", ["-n", client, "-o", "link", "show"])
        return result.stdoutText.split(separator: "\n").compactMap { line in
            line.split(separator: ":").dropFirst().first.map { String($0.trimmingCharacters(in: .whitespaces).split(separator: "@")[0]) }
        }.sorted()
    }

    /// Writes a profile directory with one bandwidth-only test profile.
    func profileDirectory(name: String = "Test BW", downKbit: Int = 4000, upKbit: Int = 2000) throws -> URL {
        let dir = stateDirectory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let json = #"{"name": "\#(name)", "downlink": {"bandwidthKbit": \#(downKbit)}, "uplink": {"bandwidthKbit": \#(upKbit)}}"#
        try Data(json.utf8).write(to: dir.appendingPathComponent("\(Profile.lookupKey(name)).json"))
        return dir
    }

    /// A conditioner in this process acting on the client namespace.
    func conditioner(runner: (any CommandRunner)? = nil) -> Conditioner {
        Conditioner(runner: runner ?? NamespaceCommandRunner(namespace: client),
                    store: StateStore(directory: stateDirectory, namespaceID: client),
                    kernel: FixedKernelSupport(netem: false), inInitialNamespace: false,
                    batchesTC: false)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Makes the n-th command that changes something fail, like a kernel refusing it part-way.
struct FailingRunner: CommandRunner {
    let base: any CommandRunner
    let failAt: Int
    let counter = Counter()

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value }
    }

    func run(_ arguments: [String]) throws -> CommandResult {
        if !RecordingRunner.isQuery(arguments), counter.next() == failAt {
            return CommandResult(status: 2, stderr: "RTNETLINK answers: injected failure")
        }
        return try base.run(arguments)
    }
}

func waitFor(timeout: TimeInterval, interval: TimeInterval = 0.05, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return try condition()
}
