import ArgumentParser
import Foundation
import LinkConditioner
import Sandbox
import SystemSupport

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
              sudo condition run --reset-after-bytes 100000 -- python3 download.py
              sudo condition run "Slow Net" --ui -- ./integration-tests

            Exit status: the command's; 128+N when a signal N killed it; 127 when the command is not found, \
            126 when it cannot be executed (as shells do); 125 when the sandbox could not be made.
            """)

    @Argument(help: "The profile to apply (`condition list` shows them); may be left out with fault flags.")
    var profile: String?

    @OptionGroup var profiles: ProfileOptions

    @OptionGroup(title: "Connection faults (on the command's TCP connections)") var faults: FaultOptions

    @Option(name: .customLong("capture"), help: ArgumentHelp("Write everything the sandbox sends and receives to a pcap file.",
                                                             valueName: "FILE"))
    var captureFile: String?

    @Flag(name: .customLong("http"), help: "Print the sandbox's HTTP exchanges as they happen.")
    var http = false

    @Flag(name: .customLong("json"), help: "With --http: one JSON object per exchange (as `capture --http --json`).")
    var json = false

    @OptionGroup var engine: EngineOption

    @Flag(name: .customLong("no-quic"), help: "Reject the command's UDP to port 443 so QUIC clients fall back to TCP (HTTP/1.1, h2).")
    var noQUIC = false

    @Option(name: .customLong("ui"), help: ArgumentHelp(
        "Serve the live view of the command's exchanges, with the conditioner's panel starting at PROFILE, on this "
            + "address (default 127.0.0.1:8383 or the next free port): `capture --profile PROFILE --ui -- COMMAND` "
            + "takes over (docs/liveview.md). Implies --http; not with fault flags.", valueName: "[addr:port]"))
    var ui: String?

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run, after --.", valueName: "COMMAND"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty {
            throw ValidationError("missing the command to run: condition run PROFILE -- COMMAND [ARGS...]")
        }
        if profile == nil && !faults.given {
            throw ValidationError("name a profile (see `condition list`) or give a fault flag such as --refuse reset: "
                                  + "condition run PROFILE -- COMMAND [ARGS...]")
        }
        if json && !http && ui == nil { throw ValidationError("--json prints the exchanges of --http: add --http.") }
        if ui != nil {
            if profile == nil {
                throw ValidationError("--ui needs a profile for the panel to start at: condition run PROFILE --ui -- COMMAND")
            }
            if engine.engine != .auto {
                throw ValidationError("--ui hands the command to `capture --profile PROFILE --ui`, which chooses the engine itself "
                                      + "(netem where the kernel has it): leave --engine out, or leave --ui out.")
            }
            if faults.given {
                throw ValidationError("--ui hands the command to `capture --profile PROFILE --ui`, whose panel switches whole "
                                      + "profiles: put the faults in a profile file (--profiles DIR) and name it, or leave --ui out.")
            }
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
        let environment = ConditionEnvironment.variables
        // As a shell would, before anything is built: 127 for a command that is not there, 126 for one that
        // cannot be executed (`ip netns exec` would otherwise fail inside the sandbox with its own status).
        let lookup = ExecutableLookup.resolve(command[0], searchPath: environment["PATH"] ?? "/usr/bin:/bin")
        if let status = lookup.shellStatus, let message = lookup.message {
            SandboxCLI.printError("condition run: \(message)")
            throw ExitCode(status)
        }
        if !Privileges.hasNetworkAdmin {
            SandboxCLI.printError("condition run needs root (or CAP_NET_ADMIN) to build its network namespace: "
                                  + "run it again under sudo; the command itself runs as you")
            throw ExitCode(SandboxCLI.setupFailureStatus)
        }
        let chosen: Profile
        do { chosen = try faults.profile(profile, catalog: { try profiles.catalog(for: profile) }, use: "run") } catch {
            SandboxCLI.printError("condition run: \(error)")
            throw ExitCode(SandboxCLI.setupFailureStatus)
        }
        if let ui { try handOverToLiveView(ui, profile: chosen, executable: executable) }
        let options = SandboxOptions(command: command, label: chosen.name, environment: environment,
                                     invokingUser: InvokingUser.fromSudo(environment: environment),
                                     tlsKeyLog: http, blockQUIC: noQUIC)
        let captureExecutable = executable.deletingLastPathComponent().appendingPathComponent("capture").path
        let request = SandboxRunRequest(
            sandbox: options,
            captureExecutable: captureExecutable,
            captureFile: captureFile.map { URL(fileURLWithPath: $0).standardizedFileURL.path },
            printHTTP: http,
            printJSON: json,
            captureReadsKeyLog: http && SandboxCLI.captureReadsKeyLog(captureExecutable))
        let runner = ProcessRunner()
        let session = SandboxSession(settings: ConditionEnvironment.sandboxSettings, runner: runner,
                                     log: { SandboxCLI.printError("condition: \($0)") })
        let status: Int32
        var dns: SandboxDNSAnswering?
        do {
            // The profile is applied (and the kernel's support for it checked) before the banner is printed.
            status = try session.run(request) { sandbox in
                let conditioned = try SandboxConditioning.condition(sandbox, for: chosen, runner: runner, engine: engine.engine)
                dns = conditioned.dns
                for notice in conditioned.notices { SandboxCLI.printError("condition: " + notice) }
            }
        } catch {
            _ = dns?.stop()
            SandboxCLI.printError("condition run: \(error)")
            throw ExitCode(SandboxCLI.setupFailureStatus)
        }
        if let dns { SandboxCLI.printError("condition: " + dns.stop()) }
        throw ExitCode(status)
    }

    /// ArgumentParser has no option whose value may be left out (as `capture` does for its `--ui`): before `--`,
    /// `run ... --ui` becomes `--ui=default` (capture's word for its default address) and `--ui ADDR` becomes
    /// `--ui=ADDR` when ADDR looks like an address (a port, `ADDR:PORT`, `[V6]:PORT`, an IP), not a profile name;
    /// `capture` then checks it.
    static func normalizeUI(_ arguments: [String]) -> [String] {
        guard arguments.first == "run" else { return arguments }
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        guard let position = arguments[..<end].firstIndex(of: "--ui") else { return arguments }
        var result = arguments
        let next = position + 1
        if next < end, looksLikeAddress(arguments[next]) {
            result.replaceSubrange(position...next, with: ["--ui=\(arguments[next])"])
        } else {
            result[position] = "--ui=default"
        }
        return result
    }

    private static func looksLikeAddress(_ word: String) -> Bool {
        func isIP(_ text: some StringProtocol) -> Bool {
            var buffer = in6_addr()
            return inet_pton(AF_INET, String(text), &buffer) == 1 || inet_pton(AF_INET6, String(text), &buffer) == 1
        }
        func isPort(_ text: some StringProtocol) -> Bool { !text.isEmpty && text.allSatisfy { ("0"..."9").contains($0) } }
        if isPort(word) { return true }
        if word.hasPrefix("[") || word.hasPrefix(":") || isIP(word) { return true }
        guard let colon = word.lastIndex(of: ":") else { return false }
        return isIP(word[..<colon]) && isPort(word[word.index(after: colon)...])
    }

    /// `--ui`: the live view lives in `capture`, whose `--profile NAME --ui -- COMMAND` builds the same sandbox with
    /// the same conditioning library and serves the page; this process becomes it (same pid, terminal and exit
    /// status), so there is one server and one sandbox set-up, not a copy of either.
    private func handOverToLiveView(_ address: String, profile: Profile, executable: URL) throws -> Never {
        let capture = executable.deletingLastPathComponent().appendingPathComponent("capture").path
        var arguments = [capture, "--ui=\(address)", "--profile", profile.name]
        if let directory = profiles.directory { arguments += ["--profiles", directory] }
        if noQUIC { arguments.append("--no-quic") }
        if json { arguments.append("--json") }
        if let captureFile { arguments += ["-w", captureFile] }
        arguments += ["--"] + command
        do {
            try ProcessSpawner.replaceProcess(with: arguments)
        } catch {
            SandboxCLI.printError("condition run: --ui runs \(capture) (built next to condition): \(error)")
            throw ExitCode(SandboxCLI.setupFailureStatus)
        }
    }
}

enum SandboxCLI {
    /// What `run` exits with when the sandbox could not be made (the command never ran); 125 as in
    /// `docker run` / `env`, so it differs from any status the command itself would give.
    static let setupFailureStatus: Int32 = 125

    /// Whether the `capture` beside us decrypts TLS with `--keylog FILE`, asked from its help (a build without
    /// the decrypting layer shows TLS connections undecrypted, and the command still gets its key log).
    static func captureReadsKeyLog(_ capture: String) -> Bool {
        guard let help = try? ProcessSpawner.run([capture, "--help"]) else { return false }
        return String(decoding: help.stdout, as: UTF8.self).contains("--keylog")
    }

    /// This executable, resolved (for `capture` beside it and for the watchdog).
    static var executableURL: URL { URL(fileURLWithPath: RevertScheduler.currentExecutable()) }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
