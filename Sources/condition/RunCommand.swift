import ArgumentParser
import Foundation
import LinkConditioner

/// `condition run PROFILE -- COMMAND [ARGS...]`: one command in its own conditioned network namespace.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run one command in a private network namespace conditioned with a profile.",
        discussion: """
            The command gets its own network namespace joined to the host by a veth pair (host end tk-ID), \
            routed and masqueraded out of the host's default route. Services on the host's loopback are \
            reachable from inside at the host end's address (printed at start). The profile applies to the \
            sandbox alone: host-end egress is the downlink, namespace-end egress the uplink. The command runs \
            with your environment, working directory and (under sudo) your user; its exit status is passed \
            through, and everything is removed when it ends, on Ctrl-C, or if condition itself is killed. \
            Needs root.

            Examples:
              sudo condition run 3G -- curl -O http://example.com/big.iso
              sudo condition run "Cable Modem" --capture app.pcap --http -- ./integration-tests
            """)

    @Argument(help: "The profile to apply (`condition list` shows them).")
    var profile: String

    @OptionGroup var profiles: ProfileOptions

    @Option(name: .customLong("capture"), help: ArgumentHelp("Write everything the sandbox sends and receives to a pcap file.",
                                                             valueName: "FILE"))
    var captureFile: String?

    @Flag(name: .customLong("http"), help: "Print the sandbox's HTTP exchanges as they happen.")
    var http = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run, after --.", valueName: "COMMAND"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty {
            throw ValidationError("missing the command to run: condition run PROFILE -- COMMAND [ARGS...]")
        }
        if let captureFile {
            let directory = URL(fileURLWithPath: captureFile).standardizedFileURL.deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            guard !captureFile.isEmpty, !captureFile.hasSuffix("/"),
                  FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--capture \(captureFile): expected a file in an existing directory")
            }
        }
    }

    func run() throws {
        let executable = SandboxCLI.executableURL
        let chosen: Profile
        do { chosen = try profiles.catalog().profile(named: profile) } catch {
            SandboxCLI.printError("condition run: \(error)")
            throw ExitCode(SandboxCLI.setupFailureStatus)
        }
        let request = SandboxRunRequest(
            command: command,
            captureExecutable: executable.deletingLastPathComponent().appendingPathComponent("capture").path,
            captureFile: captureFile.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
            printHTTP: http,
            watchdogExecutable: executable.path)
        let session = SandboxSession(log: { SandboxCLI.printError("condition: \($0)") })
        let status: Int32
        do {
            status = try session.run(request, profile: chosen)
        } catch {
            SandboxCLI.printError("condition run: \(error)")
            throw ExitCode(SandboxCLI.setupFailureStatus)
        }
        throw ExitCode(status)
    }
}

/// `condition __sandbox-watchdog ID`: started detached by `run`; removes the sandbox if `run` dies without
/// doing so (SIGKILL). Not for direct use.
struct SandboxWatchdogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "__sandbox-watchdog", shouldDisplay: false)

    @Argument var id: String

    func run() throws {
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        SandboxSession.watch(id: id)
    }
}

enum SandboxCLI {
    /// What `run` exits with when the sandbox could not be made (the command never ran); 125 as in
    /// `docker run` / `env`, so it differs from any status the command itself would give.
    static let setupFailureStatus: Int32 = 125

    /// This executable, resolved (for `capture` beside it and for the watchdog).
    static var executableURL: URL { URL(fileURLWithPath: RevertScheduler.currentExecutable()) }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
