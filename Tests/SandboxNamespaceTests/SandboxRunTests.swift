import Foundation
import LinkConditioner
import Sandbox
import Testing
import TestSupport

/// `condition run` for real, as root, on this machine's kernel (bandwidth-only profiles: no netem here).
/// Serialized: each test creates sandboxes of its own, but the rate test wants the machine to itself.
@Suite("condition run sandboxes", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables"),
       .enabled(if: TestEnvironment.hasProgram("curl") && TestEnvironment.hasProgram("python3"),
                "needs curl and python3 (Scripts/setup --test)"))
struct SandboxRunTests {
    @Test("the command's exit status comes back, and a crash is reported as 128 + signal; nothing is left")
    func exitStatusPassthrough() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Exit", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        for (script, expected) in [("exit 42", Int32(42)), ("exit 0", 0), ("kill -SEGV $$", 128 + SIGSEGV)] {
            let run = try SandboxHarness.RunningCondition(["run", "Sandbox Exit", "--profiles", profiles.path,
                                                           "--", "sh", "-c", script])
            let result = run.finish()
            #expect(result.status == expected, "\(script): \(result.stderr)")
            let id = try #require(SandboxHarness.sandboxID(fromStderr: result.stderr), "\(result.stderr)")
            #expect(try SandboxHarness.leftovers(of: id) == [])
        }
    }

    @Test("the command runs inside: own addresses, default route via the host end, resolv.conf, working directory, environment")
    func commandSeesItsSandbox() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Inside", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let script = #"ip -4 -o addr show dev eth0; ip route show default; pwd; echo "marker=$SANDBOX_MARKER"; test -r /etc/resolv.conf && echo resolv-ok; tc qdisc show dev eth0"#
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SandboxHarness.condition)
        process.arguments = ["run", "Sandbox Inside", "--profiles", profiles.path, "--", "sh", "-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        var environment = ProcessInfo.processInfo.environment
        environment["SANDBOX_MARKER"] = "kept-\(UInt32.random(in: 0...999_999))"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(stdout.contains("inet 10.213."), "\(stdout)")
        #expect(stdout.contains("default via 10.213."), "\(stdout)")
        #expect(stdout.contains("\n/tmp\n"), "\(stdout)")
        #expect(stdout.contains("marker=\(environment["SANDBOX_MARKER"]!)"), "\(stdout)")
        #expect(stdout.contains("resolv-ok"))
        // The uplink tree sits on the namespace end.
        #expect(stdout.contains("qdisc htb 7ac0:"), "\(stdout)")
        let id = try #require(SandboxHarness.sandboxID(fromStderr: stderr))
        #expect(stderr.contains("tk-\(id)"), "the interface name is printed at start")
        #expect(try SandboxHarness.leftovers(of: id) == [])
    }

    /// Issue 36: the sandbox right after another got the same addresses, so the old one's late packets (the
    /// server's resent FIN, its RST) reached the new command's capture. Back to back, they now differ.
    @Test("a sandbox right after another gets other addresses")
    func aSandboxRightAfterAnotherGetsOtherAddresses() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Again", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        var addresses: [String] = []
        for _ in 0..<2 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: SandboxHarness.condition)
            process.arguments = ["run", "Sandbox Again", "--profiles", profiles.path, "--", "ip", "-4", "-o", "addr", "show", "dev", "eth0"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let address = try #require(stdout.split(separator: " ").first { $0.hasPrefix("10.213.") }, "\(stdout)")
            addresses.append(String(address))
        }
        #expect(addresses[0] != addresses[1], "\(addresses)")
    }

    @Test("two sandboxes with different profiles download side by side, each at its own rate (within 10%)")
    func twoSandboxesEachAtTheirOwnRate() throws {
        // Five seconds of transfer at each rate keeps TCP's start a small part of the measurement.
        let slowKbit = 3000, fastKbit = 7000
        let seconds = 5
        let server = try LoopbackWebServer(randomFiles: ["slow.bin": slowKbit * 125 * seconds,
                                                    "fast.bin": fastKbit * 125 * seconds])
        defer { server.stop() }
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Slow", slowKbit, 1000),
                                                           ("Sandbox Fast", fastKbit, 1000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let captures = FileManager.default.temporaryDirectory.appendingPathComponent("sbx-pcap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: captures, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: captures) }

        func start(_ profile: String, _ file: String) throws -> SandboxHarness.RunningCondition {
            var arguments = ["run", profile, "--profiles", profiles.path]
            if SandboxHarness.captureWrites { arguments += ["--capture", captures.appendingPathComponent(file + ".pcap").path] }
            let url = "http://$TAPKIT_SANDBOX_HOST:\(server.port)/\(file)"
            return try SandboxHarness.RunningCondition(arguments + ["--", "sh", "-c",
                #"curl -sS -o /dev/null -w '%{size_download} %{time_total} %{time_starttransfer}\n' "# + url])
        }
        let slow = try start("Sandbox Slow", "slow.bin")
        let fast = try start("Sandbox Fast", "fast.bin")
        let slowResult = slow.finish(timeout: 60)
        let fastResult = fast.finish(timeout: 60)
        #expect(slowResult.status == 0, "\(slowResult.stderr)")
        #expect(fastResult.status == 0, "\(fastResult.stderr)")

        for (result, kbit, name) in [(slowResult, slowKbit, "slow.bin"), (fastResult, fastKbit, "fast.bin")] {
            let fields = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            try #require(fields.count == 3, "curl printed: \(result.stdout) \(result.stderr)")
            #expect(Int(fields[0]) == kbit * 125 * seconds)
            // From the first byte to the last: the body transfer, paced by the host end's htb.
            let measured = fields[0] * 8 / (fields[1] - fields[2]) / 1000
            print("sandbox \(name): \(Int(measured)) kbit/s measured for a \(kbit) kbit/s profile")
            #expect(abs(measured - Double(kbit)) / Double(kbit) <= 0.10, "\(name): \(measured) kbit/s vs \(kbit)")
        }
        let slowID = try #require(SandboxHarness.sandboxID(fromStderr: slowResult.stderr))
        let fastID = try #require(SandboxHarness.sandboxID(fromStderr: fastResult.stderr))
        #expect(slowID != fastID)
        #expect(try SandboxHarness.leftovers(of: slowID) == [])
        #expect(try SandboxHarness.leftovers(of: fastID) == [])

        if SandboxHarness.captureWrites && TestEnvironment.hasProgram("tcpdump") {
            for (file, own, other) in [("slow.bin", "slow.bin", "fast.bin"), ("fast.bin", "fast.bin", "slow.bin")] {
                let pcap = captures.appendingPathComponent(file + ".pcap").path
                let text = try run("tcpdump", ["-nn", "-A", "-r", pcap]).stdoutText
                #expect(text.contains("GET /\(own) HTTP/1.1"), "\(file) capture holds its own request")
                #expect(!text.contains(other), "\(file) capture holds nothing of the other sandbox")
            }
        }
    }

    @Test("connection faults reach the sandbox's connections: curl is reset after the bytes given, or refused; nothing is left")
    func connectionFaultsInsideTheSandbox() throws {
        let server = try LoopbackWebServer(randomFiles: ["blob.bin": 2_000_000])
        defer { server.stop() }
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Faults", 50_000, 50_000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let curl = #"curl -sS -o /dev/null -w '%{size_download}\n' http://$TAPKIT_SANDBOX_HOST:"# + "\(server.port)/blob.bin; echo status=$?"
        for (flags, status) in [(["--reset-after-bytes", "300000"], "status=56"), (["--refuse", "reset"], "status=7")] {
            // A profile with the flags' faults over it (the profile has none of its own).
            let run = try SandboxHarness.RunningCondition(["run", "Sandbox Faults", "--profiles", profiles.path] + flags
                                                          + ["--", "sh", "-c", curl])
            let result = run.finish(timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(status), "\(flags): \(result.stdout) \(result.stderr)")
            if status == "status=56" {
                let bytes = Int(result.stdout.split(separator: "\n").first ?? "") ?? -1
                #expect((150_000...300_000).contains(bytes), "reset after \(bytes) bytes")
                #expect(result.stdout.contains("reset") || result.stderr.contains("reset"), "\(result.stderr)")
            } else {
                // curl 7.88 words ECONNREFUSED as "Couldn't connect to server" after 0 ms (no SYN retry).
                #expect(result.stderr.contains("Failed to connect"), "\(result.stderr)")
            }
            let id = try #require(SandboxHarness.sandboxID(fromStderr: result.stderr))
            #expect(try SandboxHarness.leftovers(of: id) == [])
        }
    }

    @Test("uplink: what the sandbox sends is paced by the namespace end at the profile's uplink rate (within 10%)",
          .enabled(if: TestEnvironment.hasProgram("iperf3"), "needs iperf3 (Scripts/setup --test)"))
    func uplinkRate() throws {
        let upKbit = 2000
        let port = Int.random(in: 20_000...29_999)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", String(port)]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        usleep(500_000)
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Up", 50_000, upKbit)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let result = try run(SandboxHarness.condition, ["run", "Sandbox Up", "--profiles", profiles.path, "--", "sh", "-c",
                                                        "iperf3 -J -t 5 -c $TAPKIT_SANDBOX_HOST -p \(port)"])
        #expect(result.status == 0, "\(result.stderrText)")
        let report = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let end = try #require(report["end"] as? [String: Any])
        let received = try #require((end["sum_received"] as? [String: Any])?["bits_per_second"] as? Double)
        let measured = received / 1000
        print("sandbox uplink: \(Int(measured)) kbit/s measured for a \(upKbit) kbit/s profile")
        #expect(abs(measured - Double(upKbit)) / Double(upKbit) <= 0.10, "\(measured) kbit/s vs \(upKbit)")
    }

    @Test("SIGKILL of condition run: the watchdog removes the sandbox and stops its command")
    func killedConditionIsCleanedUp() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Killed", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let run = try SandboxHarness.RunningCondition(["run", "Sandbox Killed", "--profiles", profiles.path,
                                                       "--", "sleep", "60"])
        let record = try #require(run.waitForRecord(), "the sandbox was registered")
        let child = try #require(record.childPID)
        #expect(SandboxHarness.processExists(child))

        // While it runs, `condition sandboxes` lists it.
        let listing = try TestSupport.run(SandboxHarness.condition, ["sandboxes"])
        #expect(listing.stdoutText.contains(record.identity.hostInterface), "\(listing.stdoutText)")
        #expect(listing.stdoutText.contains("Sandbox Killed"))
        #expect(listing.stdoutText.contains("sleep 60"))

        kill(run.pid, SIGKILL)
        _ = run.finish()
        #expect(try SandboxHarness.waitUntilGone(record.identity.id, timeout: 5) == [])
        #expect(!SandboxHarness.processExists(child), "the command in the sandbox was stopped")
    }

    @Test("SIGKILL of condition run and of its watchdog: the next condition sandboxes reaps the sandbox")
    func staleSandboxReaped() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Stale", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let run = try SandboxHarness.RunningCondition(["run", "Sandbox Stale", "--profiles", profiles.path,
                                                       "--", "sleep", "60"])
        let record = try #require(run.waitForRecord())
        let watchdogs = SandboxHarness.processes(withCommandLine: ["__sandbox-watchdog", record.identity.id])
        try #require(watchdogs.count == 1, "one watchdog runs for the sandbox")
        watchdogs.forEach { kill($0, SIGKILL) }
        kill(run.pid, SIGKILL)
        run.process.waitUntilExit() // not finish(): sleep still holds the output pipes until it is reaped
        usleep(500_000)
        #expect(try SandboxHarness.leftovers(of: record.identity.id) != [], "nothing else removed it")

        let listing = try TestSupport.run(SandboxHarness.condition, ["sandboxes"])
        #expect(!listing.stdoutText.contains(record.identity.id), "\(listing.stdoutText)")
        #expect(try SandboxHarness.leftovers(of: record.identity.id) == [])
        #expect(!SandboxHarness.processExists(try #require(record.childPID)))
        _ = run.finish(timeout: 5)
    }

    @Test("SIGINT to condition run is forwarded to the command; its status comes back; nothing is left")
    func interruptIsForwardedAndCleansUp() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Interrupted", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        // A background sleep ignores SIGINT (non-interactive sh), so teardown must stop it.
        let run = try SandboxHarness.RunningCondition(["run", "Sandbox Interrupted", "--profiles", profiles.path,
                                                       "--", "sh", "-c", "trap 'exit 5' INT; sleep 60 & wait"])
        let record = try #require(run.waitForRecord())
        usleep(300_000) // let sh install its trap
        kill(run.pid, SIGINT)
        let result = run.finish(timeout: 20)
        #expect(result.status == 5, "\(result.stderr)")
        #expect(try SandboxHarness.leftovers(of: record.identity.id) == [])
    }
}

@Suite("condition run under sudo", .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces"))
struct SandboxSudoTests {
    @Test("invoked via sudo, the command runs as the invoking user with that user's HOME")
    func dropsToInvokingUser() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Sudo", 8000, 8000)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        var environment = ProcessInfo.processInfo.environment
        environment["SUDO_UID"] = "65534"
        environment["SUDO_GID"] = "65534"
        let result = try run(SandboxHarness.condition, ["run", "Sandbox Sudo", "--profiles", profiles.path, "--",
                                                        "sh", "-c", "id -u; id -g; echo $HOME"], environment: environment)
        #expect(result.status == 0, "\(result.stderrText)")
        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        let home = getpwuid(65534).map { String(cString: $0.pointee.pw_dir) }
        #expect(lines == ["65534", "65534", home ?? "?"], "\(result.stdoutText)")
    }
}
