import Foundation
import Testing
import TestSupport

/// `capture --http -- COMMAND` with real QUIC clients, without `--no-quic`: headless Chromium (its own QUIC and
/// HTTP/3 stack, several streams at once, racing its own key log) and aioquic's client, against aioquic's HTTP/3
/// server on the host's loopback. Oracles: the server's own log (method, path, status, body sha256) and what
/// `capture -r` makes afterwards of tcpdump's capture of the same packets with the final key log (live = offline).
@Suite("capture -- COMMAND: real QUIC clients decoded live, equal to the offline decode", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables, live capture"),
       .enabled(if: ["tcpdump", "openssl", "python3"].allSatisfy(TestEnvironment.hasProgram),
                "needs tcpdump, openssl and python3 with aioquic (Scripts/setup --test)"),
       .enabled(if: CaptureFeatures.decryptsTLS, "needs a capture with --keylog"))
struct QUICCommandCaptureTests {
    @Test("every request the server logged is a live exchange, and live equals offline",
          arguments: ["chromium", "chromium", "aioquic"])
    func client(_ client: String) throws {
        guard client != "chromium" || TestEnvironment.hasProgram("chromium") else {
            print("skipped chromium: not installed (Scripts/setup --test installs it)")
            return
        }
        let server = try H3LoopbackServer()
        defer { server.stop() }
        let file = { (suffix: String) in server.directory.appendingPathComponent("\(client).\(suffix)").path }
        // "any": the sandbox's packets reach 127.0.0.1 through its veth (DNAT), never through lo.
        let tcpdump = try TcpdumpBeside(interface: "any", filter: "udp port \(server.port)", file: file("pcap"))
        let started = Date()
        let live = try BackgroundCommandCapture(["--http", "--json", "--", "sh", "-c",
                                                 server.command(for: client) + "; cp \"$SSLKEYLOGFILE\" \(file("keys"))"])
            .finish(timeout: 40)
        let seconds = Date().timeIntervalSince(started)
        usleep(200_000)
        tcpdump.stop()
        #expect(live.status == 0, "\(live.stderr.suffix(800))")
        // The QUIC line, decrypted: never "(encrypted, not decoded)" as under --no-quic's old default.
        #expect(live.stderr.contains("QUIC v1 quic.tapkit.test  ALPN h3  (decrypted)"), "\(live.stderr.suffix(800))")

        let logged = try server.loggedRequests()
        #expect(logged.count >= (client == "chromium" ? 13 : 19), "\(logged.count) requests logged")
        let exchanges = ExchangeLines.parse(live.stdout, serverPort: server.port)
        var byStream: [String: [String: Any]] = [:]
        for exchange in exchanges {
            let http3 = exchange["http3"] as? [String: Any], request = exchange["request"] as? [String: Any]
            byStream["\(http3?["stream"] ?? "?") \(request?["uri"] ?? "?")"] = exchange
        }
        #expect(exchanges.count == logged.count, "\(exchanges.count) exchanges for \(logged.count) logged requests")
        for request in logged {
            let key = "\(request["stream"] ?? "") \(request["path"] ?? "")"
            let exchange = try #require(byStream[key], "\(client): no live exchange for \(key) in \(byStream.keys.sorted())")
            let response = exchange["response"] as? [String: Any]
            #expect((exchange["request"] as? [String: Any])?["method"] as? String == request["method"] as? String)
            #expect((exchange["request"] as? [String: Any]).flatMap { $0["body"] as? [String: Any] }?["sha256"] as? String
                    == request["request_sha256"] as? String, "\(key)")
            #expect(response?["status"] as? Int == request["status"] as? Int, "\(key)")
            #expect((response?["body"] as? [String: Any])?["sha256"] as? String == request["response_sha256"] as? String, "\(key)")
            #expect(exchange["complete"] as? Bool == true, "\(key): \(exchange["warnings"] ?? "")")
        }

        let offline = try TestSupport.run(CommandCaptureHarness.capture, ["-r", file("pcap"), "--keylog", file("keys"), "--http", "--json"])
        let liveNormal = exchanges.map(ExchangeLines.normalized).sorted()
        let offlineNormal = ExchangeLines.parse(offline.stdoutText, serverPort: server.port).map(ExchangeLines.normalized).sorted()
        #expect(liveNormal == offlineNormal, """
            live only \(Set(liveNormal).subtracting(offlineNormal).map { $0.prefix(300) }), \
            offline only \(Set(offlineNormal).subtracting(liveNormal).map { $0.prefix(300) }) \(offline.stderrText.suffix(400))
            """)
        print("quic live: \(client) | \(exchanges.count) exchanges, \(logged.count) logged | live \(liveNormal == offlineNormal ? "=" : "≠") offline | "
              + String(format: "%.1f s", seconds))
    }
}

/// aioquic's HTTP/3 fixture server (Scripts/fixtures/quic/h3_server.py) on 127.0.0.1, a fresh certificate for
/// quic.tapkit.test, and the command lines of the clients run against it inside the sandbox.
final class H3LoopbackServer: @unchecked Sendable {
    let directory: URL
    let port: Int
    private let server = Process()
    private var log: URL { directory.appendingPathComponent("server.jsonl") }
    private let spki: String

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/tkq-lab-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = Int.random(in: 20_000..<40_000)
        let key = directory.appendingPathComponent("key.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let made = try run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                       "-subj", "/CN=quic.tapkit.test", "-addext", "subjectAltName=DNS:quic.tapkit.test",
                                       "-days", "1", "-keyout", key, "-out", cert])
        guard made.status == 0 else { throw HarnessFailure(description: "openssl req: \(made.stderrText)") }
        // Chromium's QUIC ignores --ignore-certificate-errors; it trusts a certificate whose public key it is told.
        let digest = try run("sh", ["-c", "openssl x509 -in \(cert) -pubkey -noout | openssl pkey -pubin -outform der "
                                    + "| openssl dgst -sha256 -binary | base64"])
        spki = digest.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        let ready = directory.appendingPathComponent("ready")
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", TestEnvironment.packageRoot.appendingPathComponent("Scripts/fixtures/quic/h3_server.py").path,
                            "--listen", "127.0.0.1", "--port", String(port), "--certificate", cert, "--private-key", key,
                            "--secrets-log", directory.appendingPathComponent("server.keys").path, "--log", log.path,
                            "--ready", ready.path]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: ready.path) && Date() < deadline && server.isRunning { usleep(50_000) }
        guard FileManager.default.fileExists(atPath: ready.path) else {
            stop()
            throw HarnessFailure(description: "the aioquic server did not start (is aioquic installed? Scripts/setup --test)")
        }
    }

    /// The client's shell command; inside the sandbox the host's loopback is `$TAPKIT_SANDBOX_HOST`.
    func command(for client: String) -> String {
        if client == "chromium" {
            return "profile=$(mktemp -d /tmp/tkq-chromium-XXXXXX); timeout 30 chromium --headless=new --no-sandbox "
                + "--user-data-dir=$profile --ignore-certificate-errors-spki-list=\(spki) --enable-quic "
                + "--origin-to-force-quic-on=quic.tapkit.test:\(port) "
                + "--host-resolver-rules=\"MAP quic.tapkit.test $TAPKIT_SANDBOX_HOST\" --disable-background-networking "
                + "--disable-component-update --disable-sync --no-first-run --virtual-time-budget=5000 "
                + "--dump-dom https://quic.tapkit.test:\(port)/page >/dev/null 2>&1; rm -rf $profile"
        }
        let script = TestEnvironment.packageRoot.appendingPathComponent("Scripts/fixtures/quic/h3_client.py").path
        return "python3 \(script) --host $TAPKIT_SANDBOX_HOST --port \(port) --secrets-log \"$SSLKEYLOGFILE\" "
            + "--log \(directory.appendingPathComponent("client.jsonl").path) --scenario basic"
    }

    /// The server's own record: one JSON object per request it handled.
    func loggedRequests() throws -> [[String: Any]] {
        try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func stop() {
        // SIGKILL: Foundation starts children with the test runner's blocked signals, so Python never sees SIGTERM.
        if server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
