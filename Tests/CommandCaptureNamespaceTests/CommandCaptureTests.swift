import Foundation
import Sandbox
import SystemSupport
import Testing
import TestSupport

/// `capture -- COMMAND` for real, as root: the command runs in a sandbox of its own and only its traffic is shown.
@Suite("capture -- COMMAND", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables, live capture"),
       .enabled(if: TestEnvironment.hasProgram("curl") && TestEnvironment.hasProgram("python3"),
                "needs curl and python3 (Scripts/setup --test)"))
struct CommandCaptureTests {
    @Test("--http shows the command's exchange; the command's exit status comes back; nothing is left")
    func exchangeAndStatus() throws {
        let server = try LoopbackWebServer(files: ["hello.txt": "hello from the host\n"])
        defer { server.stop() }
        let script = "curl -s -o /dev/null http://$TAPKIT_SANDBOX_HOST:\(server.port)/hello.txt; exit 7"
        let result = try BackgroundCommandCapture(["--http", "--", "sh", "-c", script]).finish()
        #expect(result.status == 7, "\(result.stderr)")
        #expect(result.stdout.contains("GET"), "\(result.stdout)")
        #expect(result.stdout.contains("/hello.txt"), "\(result.stdout)")
        #expect(result.stdout.contains("200"), "\(result.stdout)")
        let id = try #require(CommandCaptureHarness.sandboxID(fromStderr: result.stderr), "\(result.stderr)")
        #expect(result.stderr.contains("listening on tk-\(id)"), "\(result.stderr)")
        #expect(try CommandCaptureHarness.leftovers(of: id) == [])
    }

    @Test("exchanges are printed as they complete, while the command still runs")
    func liveOutput() throws {
        let server = try LoopbackWebServer(files: ["live.txt": "live\n"])
        defer { server.stop() }
        let script = "curl -s -o /dev/null http://$TAPKIT_SANDBOX_HOST:\(server.port)/live.txt; sleep 4"
        let capture = try BackgroundCommandCapture(["--http", "--", "sh", "-c", script])
        let line = capture.waitForLine(containing: "/live.txt", timeout: 8)
        let stillRunning = capture.process.isRunning
        let result = capture.finish()
        let shown = try #require(line, "no exchange line: \(result.stdout) \(result.stderr)")
        let after = shown.time.timeIntervalSince(capture.started)
        print("measured: exchange printed \(String(format: "%.2f", after)) s after start (the command ran 4 s more)")
        #expect(stillRunning, "the exchange appeared only after the command ended")
        #expect(after < 3.5)
        #expect(result.status == 0)
    }

    @Test("a command that is not there exits 127, one that cannot be executed 126, a crash 128 + signal")
    func shellStatuses() throws {
        let missing = try run(CommandCaptureHarness.capture, ["--", "tkx-no-such-command"])
        #expect(missing.status == 127)
        #expect(missing.stderrText.contains("tkx-no-such-command: command not found"), "\(missing.stderrText)")
        let plain = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-plain-\(UUID().uuidString)")
        try Data("echo hi\n".utf8).write(to: plain)
        defer { try? FileManager.default.removeItem(at: plain) }
        let notExecutable = try run(CommandCaptureHarness.capture, ["--", plain.path])
        #expect(notExecutable.status == 126)
        #expect(notExecutable.stderrText.contains("Permission denied"), "\(notExecutable.stderrText)")
        let crash = try run(CommandCaptureHarness.capture, ["-q", "--", "sh", "-c", "kill -SEGV $$"])
        #expect(crash.status == 128 + SIGSEGV, "\(crash.stderrText)")
    }

    @Test("SIGINT to capture is forwarded to the command: exit 130, nothing left")
    func interrupt() throws {
        let capture = try BackgroundCommandCapture(["-q", "--", "sleep", "30"])
        let record = try #require(CommandCaptureHarness.record(ownedBy: capture.pid), "no sandbox: \(capture.stderrSoFar)")
        kill(capture.pid, SIGINT)
        let started = Date()
        let result = capture.finish(timeout: 10)
        #expect(result.status == 130, "\(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(result.stderr.contains("packets captured") || result.stderr.contains("packet captured"), "\(result.stderr)")
        #expect(try CommandCaptureHarness.leftovers(of: record.identity.id) == [])
    }

    @Test("Ctrl-C at a terminal reaches the command once (not forwarded a second time); capture exits with its status")
    func terminalInterrupt() throws {
        guard TestEnvironment.hasProgram("script") else {
            print("skipped: needs script(1) (util-linux) for a pseudo-terminal")
            return
        }
        // Counts SIGINTs for half a second after the first, then exits 3 printing the count.
        let counter = #"""
            import signal, sys, time
            count = 0
            def on_int(*_):
                global count
                count += 1
            signal.signal(signal.SIGINT, on_int)
            open(sys.argv[1], "w").close()
            while count == 0:
                time.sleep(0.05)
            time.sleep(0.5)
            print(f"interrupts={count}", flush=True)
            sys.exit(3)
            """#
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-count-\(UUID().uuidString).py")
        try Data(counter.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // script(1) gives capture a terminal; ^C written to it makes the kernel signal the foreground group.
        // It is written only once the handler is installed (the ready file exists), however slow the sandbox set-up.
        let ready = file.path + ".ready"
        defer { try? FileManager.default.removeItem(atPath: ready) }
        let feeder = "(i=0; while [ ! -e \(ready) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.2; printf '\\003'; sleep 3)"
        // script(1) runs its command with $SHELL -c; `exec` makes capture the terminal's process whatever that shell
        // is (dash, unlike bash, stays as a parent: it, not capture, would die of the ^C and script would say 130).
        let shell = "\(feeder) | script -qec 'exec \(CommandCaptureHarness.capture) -q -- python3 \(file.path) \(ready)' /dev/null"
        let result = try run("sh", ["-c", shell])
        #expect(result.status == 3, "\(result.stdoutText)")
        #expect(result.stdoutText.contains("interrupts=1"), "\(result.stdoutText)")
        let id = CommandCaptureHarness.sandboxID(fromStderr: result.stdoutText)
        if let id { #expect(try CommandCaptureHarness.leftovers(of: id) == []) }
    }

    @Test("SIGKILL of capture: its watchdog removes the sandbox, the command and the key log")
    func killed() throws {
        let capture = try BackgroundCommandCapture(["-q", "--", "sleep", "30"])
        let record = try #require(CommandCaptureHarness.record(ownedBy: capture.pid), "no sandbox: \(capture.stderrSoFar)")
        let child = try #require(record.childPID)
        kill(capture.pid, SIGKILL)
        _ = capture.finish(timeout: 5)
        let started = Date()
        let left = try CommandCaptureHarness.waitUntilGone(record.identity.id, timeout: 5)
        print("measured: sandbox gone \(String(format: "%.2f", Date().timeIntervalSince(started))) s after SIGKILL of capture")
        #expect(left == [])
        // Gone or a zombie waiting for init to reap it (the command was capture's child).
        #expect(!ProcessTable.isAlive(pid: child, startTime: nil), "the command is still running")
    }

    @Test("the command gets a private key log in SSLKEYLOGFILE and NODE_OPTIONS; it is removed afterwards")
    func keyLogEnvironment() throws {
        let script = #"echo "keys=$SSLKEYLOGFILE"; echo "node=$NODE_OPTIONS"; test -f "$SSLKEYLOGFILE" && test -w "$SSLKEYLOGFILE" && echo writable; stat -c %a "$SSLKEYLOGFILE""#
        var environment = ProcessInfo.processInfo.environment
        environment["NODE_OPTIONS"] = "--max-old-space-size=64"
        let result = try BackgroundCommandCapture(["-q", "--", "sh", "-c", script], environment: environment).finish()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let keys = try #require(lines.first { $0.hasPrefix("keys=") }.map { String($0.dropFirst(5)) }, "\(result.stdout)")
        #expect(keys.hasSuffix("/tls-keys.log"))
        #expect(lines.contains("node=--max-old-space-size=64 --tls-keylog=\(keys)"), "\(result.stdout)")
        #expect(lines.contains("writable"))
        #expect(lines.contains("600"), "the key log must be private: \(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: keys))
    }

    @Test("--profile conditions the command's link (a bandwidth profile: htb on the sandbox's own end)")
    func profile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"name": "Tkx Narrow", "downlink": {"bandwidthKbit": 2000}, "uplink": {"bandwidthKbit": 700}}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("tkx-narrow.json"))
        let result = try run(CommandCaptureHarness.capture, ["-q", "--profiles", directory.path, "--profile", "Tkx Narrow",
                                                             "--", "tc", "qdisc", "show", "dev", "eth0"])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.contains("qdisc htb 7ac0:"), "\(result.stdoutText)")
        #expect(result.stderrText.contains("profile Tkx Narrow"), "\(result.stderrText)")
        let unknown = try run(CommandCaptureHarness.capture, ["--profile", "tkx no such profile", "--", "true"])
        #expect(unknown.status == 125)
        #expect(unknown.stderrText.contains("no profile named"), "\(unknown.stderrText)")
    }

    @Test("--no-quic: the command's UDP to port 443 is refused at once; without it the same datagram is answered")
    func noQUIC() throws {
        // A UDP echo on the host's loopback port 443, reached through the sandbox's DNAT to 127.0.0.1.
        let echo = Process()
        echo.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        echo.arguments = ["python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                s.bind(("127.0.0.1", 443))
            except OSError as e:
                print("busy", flush=True); sys.exit(0)
            print("ready", flush=True)
            while True:
                data, peer = s.recvfrom(2048); s.sendto(data, peer)
            """]
        let out = Pipe()
        echo.standardOutput = out
        try echo.run()
        defer { kill(echo.processIdentifier, SIGKILL); echo.waitUntilExit() }
        let status = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard status.hasPrefix("ready") else {
            print("skipped: UDP port 443 on 127.0.0.1 is in use on this machine, so the --no-quic check cannot run")
            return
        }
        let probe = """
            import os, socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
            s.connect((os.environ["TAPKIT_SANDBOX_HOST"], 443))
            try:
                s.send(b"quic?"); reply = s.recv(100).decode(); print(f"answered {reply}", flush=True)
            except ConnectionRefusedError:
                print("refused", flush=True)
            except socket.timeout:
                print("timeout", flush=True)
            """
        let open = try run(CommandCaptureHarness.capture, ["-q", "--", "python3", "-c", probe])
        #expect(open.stdoutText.contains("answered quic?"), "\(open.stdoutText) \(open.stderrText)")
        let blocked = try run(CommandCaptureHarness.capture, ["-q", "--no-quic", "--", "python3", "-c", probe])
        #expect(blocked.stdoutText.contains("refused"), "\(blocked.stdoutText) \(blocked.stderrText)")
        #expect(blocked.stdoutText.contains("udp port 443 unreachable"), "the reject shows in the capture: \(blocked.stdoutText)")
    }

    @Test("condition run --http gives the command a key log too, and --no-quic works there")
    func conditionRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"name": "Tkx Wide", "downlink": {"bandwidthKbit": 50000}, "uplink": {"bandwidthKbit": 50000}}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("tkx-wide.json"))
        let condition = TestEnvironment.executable("condition").path
        let result = try run(condition, ["run", "Tkx Wide", "--profiles", directory.path, "--http", "--no-quic", "--",
                                         "sh", "-c", #"echo "keys=$SSLKEYLOGFILE"; nft list tables"#])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.contains("keys=/"), "\(result.stdoutText)")
        let missing = try run(condition, ["run", "Tkx Wide", "--profiles", directory.path, "--", "tkx-no-such-command"])
        #expect(missing.status == 127)
        #expect(!missing.stderrText.contains("sandbox "), "no banner before the command is known to exist")
    }
}
