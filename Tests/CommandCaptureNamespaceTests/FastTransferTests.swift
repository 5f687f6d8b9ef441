import Foundation
import Testing
import TestSupport

/// Issue 37: big transfers at loopback speed, with no profile, decrypted live. The server's records arrive before
/// capture has read the key line; they must wait for it (by time, spilling to disk past the in-memory bound), never
/// be given up while the key is in the log. Real clients no one here wrote download files made at test time (2 MB,
/// 100 MB) and upload one (100 MB) from nginx over TLS, under `capture -- COMMAND` and under `capture -i lo
/// --keylog FILE` while the client appends to FILE. Oracles: nginx's access log and the files' sha256; live equals
/// the offline decode of tcpdump's capture of the same run with the final key log; capture's peak RSS is bounded.
@Suite("fast transfers: a logged key is never missed", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables, live capture"),
       .enabled(if: ["nginx", "tcpdump", "openssl", "python3", "curl"].allSatisfy(TestEnvironment.hasProgram),
                "needs nginx, tcpdump, openssl, python3 and curl (Scripts/setup --test)"),
       .enabled(if: CaptureFeatures.decryptsTLS, "needs a capture with --keylog"))
struct FastTransferTests {
    /// Peak resident memory allowed to capture in any of these runs: the held records stay within the in-memory
    /// bound (TLSDecryptionLimits: 64 MiB in all) and the rest of capture is tens of MB.
    static let peakRSSBound = 160 << 20

    /// The issue's reproduction: a 2 MB file fetched by curl right after the handshake, three runs of three. On main
    /// before the fix every run ended "no key logged for this session".
    @Test("a 2 MB download by curl under capture -- COMMAND is decrypted, every run", arguments: ["curl-h1", "curl-h2"])
    func issueReproduction(_ client: String) throws {
        let lab = try RealClientLab()
        defer { lab.stop() }
        try lab.addGeneratedFile("big2.bin", size: 2_000_000)
        var right = 0
        for run in 1...3 {
            let outcome = try FastTransferRun(lab: lab, client: client, transfer: .download("/big2.bin"), mode: .command,
                                              run: run).outcome()
            #expect(outcome.problems.isEmpty, "\(client) run \(run): \(outcome.problems.joined(separator: "\n"))")
            if outcome.problems.isEmpty { right += 1 }
        }
        print("fast: \(client) | 2 MB download | capture -- COMMAND | \(right)/3 right")
    }

    /// The same failure made certain on any build: the key reaches the key log half a second after the records (a
    /// key logger that buffers, as browsers' do), so megabytes wait for it. On main the 1 MiB held-records limit
    /// gave the connection up within milliseconds and blamed the program; now the records wait (past 4 MiB in the
    /// spill file) and are decrypted when the key comes, with capture's memory bounded.
    @Test("records wait for a key logged 0.5 s late", arguments: [2_000_000])
    func slowKeyLogger(_ size: Int) throws {
        let lab = try RealClientLab()
        defer { lab.stop() }
        try lab.addGeneratedFile("late.bin", size: size)
        var right = 0
        let runs = size > 10_000_000 ? 1 : 3
        for run in 1...runs {
            let outcome = try FastTransferRun(lab: lab, client: "curl-h1-late-key", transfer: .download("/late.bin"),
                                              mode: .command, run: run).outcome()
            #expect(outcome.problems.isEmpty, "run \(run): \(outcome.problems.joined(separator: "\n"))")
            if outcome.problems.isEmpty { right += 1 }
        }
        print("fast: curl, key logged 0.5 s late | \(size / 1_000_000) MB download | capture -- COMMAND | \(right)/\(runs) right")
    }

    /// Past the bound, the words say the key came too late and how to raise the bound; the program is not blamed.
    @Test("a key logged after the bound: named too late for it, not missing")
    func keyLoggedAfterTheBound() throws {
        let lab = try RealClientLab()
        defer { lab.stop() }
        try lab.addGeneratedFile("late.bin", size: 2_000_000)
        let script = "H=$TAPKIT_SANDBOX_HOST; keys=$(mktemp /tmp/w37-keys-XXXXXX); "
            + "SSLKEYLOGFILE=$keys curl -sk --http1.1 -o /dev/null https://$H:\(lab.port)/late.bin; "
            + "sleep 1.5; cat $keys >> \"$SSLKEYLOGFILE\"; rm -f $keys"
        let live = try BackgroundCommandCapture(["--http", "--json", "--keylog-wait", "0.5", "--", "sh", "-c", script])
            .finish(timeout: 60)
        #expect(live.status == 0, "\(live.stderr.suffix(600))")
        let problems = live.stdout.split(separator: "\n").compactMap { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["tls"] as? [String: Any])?["problem"] as? String
        }
        #expect(problems == ["no key logged within 0.5 s"], "\(live.stdout.prefix(600))")
        #expect(live.stderr.contains("too late for the bound of 0.5 s"), "\(live.stderr.suffix(800))")
        #expect(live.stderr.contains("--keylog-wait SECONDS"))
        #expect(!live.stderr.contains("does not write SSLKEYLOGFILE"), "blamed the program: \(live.stderr.suffix(800))")
    }

    /// Every client, size and mode; a few runs of the small ones (timing bugs hide in single runs).
    @Test("2 MB downloads by real clients equal nginx's log and the offline decode", arguments: FastTransferRun.clients)
    func matrix(_ client: String) throws {
        try matrix(client, big: false)
    }

    /// 100 MB each way, and a key logged late while 100 MB waits (on disk past 4 MiB): capture's peak RSS stays
    /// under the bound. Needs capture built for release: the debug build decodes slower than nginx sends on loopback
    /// (about 200 MB/s here), so its queue drops packets whatever the keys do.
    @Test("100 MB downloads and uploads, and 100 MB waiting for a late key, with bounded memory",
          .enabled(if: FastTransferRun.captureIsOptimized,
                   "needs capture built for release (swift build -c release; TAPKIT_BIN_DIR=.build/release): the debug build drops packets at loopback speed"),
          arguments: FastTransferRun.clients.filter(FastTransferRun.bigTransfers.contains) + ["curl-h1-late-key"])
    func bigTransfers(_ client: String) throws {
        try matrix(client, big: true)
    }

    private func matrix(_ client: String, big: Bool) throws {
        let program = FastTransferRun.program(of: client)
        guard TestEnvironment.hasProgram(program) else {
            print("skipped \(client): \(program) is not installed (Scripts/setup --test installs it)")
            return
        }
        let lab = try RealClientLab()
        defer { lab.stop() }
        let upload = lab.directory.appendingPathComponent("upload.bin")
        var transfers: [(FastTransferRun.Transfer, runs: Int)] = []
        if !big {
            try lab.addGeneratedFile("big2.bin", size: 2_000_000)
            transfers = [(.download("/big2.bin"), 2)]
        } else {
            try lab.addGeneratedFile("big100.bin", size: 100_000_000)
            transfers = [(.download("/big100.bin"), 1)]
            if client != "curl-h1-late-key" {
                _ = try run("sh", ["-c", "head -c 100000000 /dev/urandom > '\(upload.path)'"])
                transfers.append((.upload(upload.path), 1))
            }
        }
        for (transfer, runs) in transfers {
            for mode in FastTransferRun.Mode.allCases where client != "curl-h1-late-key" || mode == .command {
                var right = 0, peak = 0
                for run in 1...runs {
                    var outcome = try FastTransferRun(lab: lab, client: client, transfer: transfer, mode: mode, run: run).outcome()
                    // A client that did nothing is run again, at most twice: capture cannot show a transfer that
                    // never happened. Anything else capture got wrong fails at once.
                    for again in 1...2 where outcome.clientDidNothing {
                        print("again: \(client) | \(transfer) | \(mode) | \(run) | the client did nothing (try \(again + 1)): "
                              + outcome.problems.joined(separator: "; ").prefix(400))
                        outcome = try FastTransferRun(lab: lab, client: client, transfer: transfer, mode: mode, run: run).outcome()
                    }
                    #expect(outcome.problems.isEmpty, "\(client) \(transfer) \(mode) run \(run): \(outcome.problems.joined(separator: "\n"))")
                    if outcome.problems.isEmpty { right += 1 }
                    peak = max(peak, outcome.peakRSS)
                }
                print("fast: \(client) | \(transfer) | \(mode) | \(right)/\(runs) right | peak RSS \(peak >> 20) MB")
            }
        }
    }
}

/// One transfer by one client in one mode, judged by nginx's log, the file's sha256 and the offline decode.
struct FastTransferRun {
    enum Transfer: CustomStringConvertible {
        case download(String)
        case upload(String)

        var description: String {
            switch self {
            case .download(let path): "download \(path)"
            case .upload: "upload 100 MB"
            }
        }
    }

    enum Mode: String, CaseIterable, CustomStringConvertible {
        /// `capture --http --json -- COMMAND`: the sandbox's own key log.
        case command = "capture -- COMMAND"
        /// `capture -i lo --http --json --keylog FILE` while the client, on the host, appends to FILE.
        case interface = "-i lo --keylog FILE"
        var description: String { rawValue }
    }

    static let clients = ["curl-h1", "curl-h2", "python-requests", "python-httpx-h2", "node-fetch", "chromium-h1", "chromium-h2"]
    /// Clients that also move 100 MB each way (Chromium only downloads, and only the small file: its page fetch
    /// holds the body in memory).
    static let bigTransfers: Set<String> = ["curl-h1", "curl-h2", "python-requests", "python-httpx-h2", "node-fetch"]

    /// Whether the capture under test was built for release (its directory, `TAPKIT_BIN_DIR`).
    static let captureIsOptimized = TestEnvironment.binDirectory.path.contains("release")

    static func program(of client: String) -> String {
        switch client {
        case let name where name.hasPrefix("curl"): "curl"
        case let name where name.hasPrefix("python"): "python3"
        case let name where name.hasPrefix("node"): "node"
        default: "chromium"
        }
    }

    let lab: RealClientLab
    let client: String
    let transfer: Transfer
    let mode: Mode
    let run: Int

    struct Outcome {
        var problems: [String]
        var peakRSS: Int
        /// The client made no transfer on its own: nginx logged none, the client's own key log has no key for its
        /// connection (the offline decode of tcpdump's capture with that log says so too, an oracle apart from
        /// capture's live reading), and live equals offline. Headless Chromium does this now and then (a run in CI
        /// saw one connection, no key line and no request for the file).
        var clientDidNothing = false
    }

    /// The client's shell command; `$H` is the server's address (the sandbox's way to the host's loopback, or
    /// 127.0.0.1 on the host).
    func script() -> String {
        let base = "https://$H:\(lab.port)"
        switch (client, transfer) {
        case ("curl-h1", .download(let path)): return "curl -sk --http1.1 -o /dev/null \(base)\(path)"
        case ("curl-h2", .download(let path)): return "curl -sk --http2 -o /dev/null \(base)\(path)"
        case ("curl-h1-late-key", .download(let path)):
            // curl logs into a file of its own; the lines reach the followed key log half a second later.
            return "private=$(mktemp /tmp/w37-keys-XXXXXX); target=${SSLKEYLOGFILE}; "
                + "(sleep 0.5; cat $private >> $target) & "
                + "SSLKEYLOGFILE=$private curl -sk --http1.1 -o /dev/null \(base)\(path); wait; rm -f $private"
        case ("curl-h1", .upload(let file)): return "curl -sk --http1.1 -o /dev/null -T \(file) \(base)/sink"
        case ("curl-h2", .upload(let file)): return "curl -sk --http2 -o /dev/null -T \(file) \(base)/sink"
        case ("python-requests", _):
            let call = if case .upload(let file) = transfer {
                "requests.put(base + '/sink', data=open('\(file)', 'rb'), verify=False).content"
            } else { "requests.get(base + '\(path)', verify=False).content" }
            return "python3 -c \"import os, requests, urllib3; urllib3.disable_warnings(); base = 'https://' + os.environ['H'] + ':\(lab.port)'; \(call)\""
        case ("python-httpx-h2", _):
            let call = if case .upload(let file) = transfer {
                "c.put(base + '/sink', content=open('\(file)', 'rb').read())"
            } else { "c.get(base + '\(path)')" }
            return "python3 -c \"import os, ssl, httpx; x = ssl.create_default_context(); x.check_hostname = False; "
                + "x.verify_mode = ssl.CERT_NONE; base = 'https://' + os.environ['H'] + ':\(lab.port)'; "
                + "c = httpx.Client(http2=True, verify=x); \(call); c.close()\""
        case ("node-fetch", _):
            let call = if case .upload(let file) = transfer {
                "await (await fetch(base + '/sink', {method: 'PUT', body: fs.readFileSync('\(file)')})).text()"
            } else { "await (await fetch(base + '\(path)')).arrayBuffer()" }
            return "NODE_TLS_REJECT_UNAUTHORIZED=0 node --input-type=module -e \"import fs from 'node:fs'; "
                + "const base = 'https://' + process.env.H + ':\(lab.port)'; \(call);\" 2>/dev/null"
        default:
            // Chromium: a page whose script fetches the file (a bare .bin would become a download to disk).
            return "profile=$(mktemp -d /tmp/tkr-chromium-XXXXXX); chromium --headless=new --no-sandbox --ignore-certificate-errors "
                + "--user-data-dir=$profile \(client == "chromium-h1" ? "--disable-http2 " : "")--disable-background-networking "
                + "--disable-component-update --disable-sync --no-first-run --virtual-time-budget=10000 --dump-dom "
                + "\(base)/fetch.html >/dev/null 2>&1; rm -rf $profile"
        }
    }

    private var path: String {
        if case .download(let path) = transfer { return path }
        return "/sink"
    }

    func outcome() throws -> Outcome {
        try Data().write(to: lab.accessLog)
        if client.hasPrefix("chromium") {
            let page = "<!doctype html><script>fetch('\(path)').then(r => r.arrayBuffer()).then(b => document.title = 'got ' + b.byteLength)</script>"
            try Data(page.utf8).write(to: lab.site.appendingPathComponent("fetch.html"))
        }
        let tag = "fast-\(client)-\(mode == .command ? "command" : "lo")-\(run)"
        let keys = lab.directory.appendingPathComponent("\(tag).keys").path
        let packets = lab.directory.appendingPathComponent("\(tag).pcap").path
        let tcpdump = try TcpdumpBeside(interface: mode == .command ? "any" : "lo", filter: "tcp port \(lab.port)", file: packets)
        let live: (status: Int32, stdout: String, stderr: String)
        var peak = 0
        switch mode {
        case .command:
            let capture = try BackgroundCommandCapture(["--http", "--json", "--", "sh", "-c",
                                                        "H=$TAPKIT_SANDBOX_HOST; export H; \(script()); cp \"$SSLKEYLOGFILE\" \(keys)"])
            let sampler = PeakRSS(pid: capture.pid)
            live = capture.finish(timeout: 120)
            peak = sampler.stop()
        case .interface:
            try Data().write(to: URL(fileURLWithPath: keys))
            let capture = try BackgroundCommandCapture(["-i", "lo", "--http", "--json", "--keylog", keys,
                                                        "tcp port \(lab.port)"])
            let sampler = PeakRSS(pid: capture.pid)
            guard capture.waitForStderr(containing: "listening on", timeout: 10) else {
                kill(capture.pid, SIGINT)
                tcpdump.stop()
                return Outcome(problems: ["capture -i lo did not start: \(capture.finish(timeout: 5).stderr)"], peakRSS: 0)
            }
            var environment = ProcessInfo.processInfo.environment
            environment["SSLKEYLOGFILE"] = keys
            environment["NODE_OPTIONS"] = "--tls-keylog=\(keys)"
            environment["H"] = "127.0.0.1"
            let ran = try TestSupport.run("sh", ["-c", script()], environment: environment)
            if ran.status != 0 { print("client \(client) exited \(ran.status): \(ran.stderrText.suffix(300))") }
            // Capture reads what is still queued, then stops at SIGINT.
            usleep(500_000)
            kill(capture.pid, SIGINT)
            live = capture.finish(timeout: 60)
            peak = sampler.stop()
        }
        usleep(100_000)
        tcpdump.stop()
        var problems: [String] = []
        if live.status != 0 { problems.append("exit status \(live.status): \(live.stderr.suffix(600))") }
        let logged = (try? String(contentsOf: lab.accessLog, encoding: .utf8))?.split(separator: "\n").map(String.init)
            .filter { !$0.contains("/fetch.html") && !$0.contains("/favicon.ico") } ?? []
        if logged.count != 1 {
            let all = (try? String(contentsOf: lab.accessLog, encoding: .utf8)) ?? ""
            let keyLines = ((try? String(contentsOfFile: keys, encoding: .utf8)) ?? "").split(separator: "\n").count
            problems.append("nginx logged \(logged) (one transfer expected; its whole log: \(all.split(separator: "\n")); "
                            + "the client's key log has \(keyLines) lines)")
        }
        let exchanges = ExchangeLines.parse(live.stdout, serverPort: lab.port).filter {
            (($0["request"] as? [String: Any])?["uri"] as? String).map { $0 == path } ?? false
        }
        let judge = RealClientRun(lab: lab, client: RealClientLab.Client(name: client, program: ""), mode: mode.rawValue,
                                  profiles: lab.directory, run: run)
        let judged = judge.judge(exchanges, logged: logged)
        problems += judged.problems
        if case .upload(let file) = transfer, let exchange = exchanges.first {
            let sent = ((exchange["request"] as? [String: Any])?["body"] as? [String: Any])?["sha256"] as? String
            let digest = try RealClientLab.sha256(file: file)
            if sent != digest { problems.append("upload body sha256 \(sent ?? "none"), file \(digest)") }
        }
        if live.stderr.contains("no key logged") || live.stderr.contains("had no key") {
            problems.append("blamed the program: \(live.stderr.suffix(800))")
        }
        if peak > FastTransferTests.peakRSSBound { problems.append("capture's peak RSS \(peak >> 20) MB") }
        let offline = try TestSupport.run(CommandCaptureHarness.capture, ["-r", packets, "--keylog", keys, "--http", "--json"])
        let offlineExchanges = ExchangeLines.parse(offline.stdoutText, serverPort: lab.port).filter {
            (($0["request"] as? [String: Any])?["uri"] as? String).map { $0 == path } ?? false
        }
        let liveNormal = exchanges.map(ExchangeLines.normalized).sorted()
        let offlineNormal = offlineExchanges.map(ExchangeLines.normalized).sorted()
        if liveNormal != offlineNormal {
            problems.append("live differs from offline: live \(liveNormal.map { $0.prefix(300) }), offline "
                            + "\(offlineNormal.map { $0.prefix(300) }); live standard error: \(live.stderr.suffix(1200))")
        }
        print("run: \(client) | \(transfer) | \(mode) | \(run) | \(judged.right)/\(logged.count) right | "
              + "live \(liveNormal == offlineNormal ? "=" : "≠") offline | peak RSS \(peak >> 20) MB")
        let offlineHadNoKey = offline.stderrText.contains("had no key") || offline.stderrText.contains("no key logged")
        return Outcome(problems: problems, peakRSS: peak,
                       clientDidNothing: logged.isEmpty && exchanges.isEmpty && offlineHadNoKey && liveNormal == offlineNormal)
    }
}

/// Samples a process's peak resident memory (VmHWM, the kernel's own high-water mark) until it exits.
final class PeakRSS: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(pid: Int32) {
        DispatchQueue.global().async { [self] in
            while !lock.withLock({ stopped }) {
                if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                   let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                   let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") {
                    lock.withLock { peak = max(peak, kilobytes << 10) }
                }
                usleep(20_000)
            }
            done.signal()
        }
    }

    /// The largest high-water mark seen, in bytes.
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { peak }
    }
}

extension BackgroundCommandCapture {
    func waitForStderr(containing text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if stderrSoFar.contains(text) { return true }
            usleep(20_000)
        } while Date() < deadline
        return false
    }
}
