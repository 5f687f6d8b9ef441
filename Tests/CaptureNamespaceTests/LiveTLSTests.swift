import Foundation
import Testing
import TestSupport

/// `capture -i IFACE --http --keylog FILE` while the key log is still being written: `openssl s_server -www` in one
/// namespace, curl with SSLKEYLOGFILE in the other. The key log is empty when the capture starts; the server's first
/// encrypted records arrive before curl has logged their secrets, so they must be held and decrypted later.
@Suite(.enabled(if: TestEnvironment.isRoot, "needs root: creates network namespaces and a veth pair"),
       .enabled(if: TestEnvironment.hasProgram("curl") && TestEnvironment.hasProgram("openssl"), "needs curl and openssl"),
       .serialized)
struct LiveTLSTests {
    /// Two namespaces named tkt-... joined by a veth pair, removed at the end.
    final class Lab {
        let suffix = String(UInt32.random(in: 0..<UInt32.max), radix: 16)
        var serverNamespace: String { "tkt-s-\(suffix)" }
        var clientNamespace: String { "tkt-c-\(suffix)" }
        var serverInterface: String { "tkts\(suffix)" }
        var clientInterface: String { "tktc\(suffix)" }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tkt-live-\(UUID().uuidString)")
        let server = Process()

        init() throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ip(["netns", "add", serverNamespace])
            try ip(["netns", "add", clientNamespace])
            try ip(["link", "add", serverInterface, "netns", serverNamespace, "type", "veth",
                    "peer", "name", clientInterface, "netns", clientNamespace])
            try ip(["-n", serverNamespace, "addr", "add", "10.215.0.1/24", "dev", serverInterface])
            try ip(["-n", clientNamespace, "addr", "add", "10.215.0.2/24", "dev", clientInterface])
            try ip(["-n", serverNamespace, "link", "set", serverInterface, "up"])
            try ip(["-n", clientNamespace, "link", "set", clientInterface, "up"])
            let key = folder.appendingPathComponent("key.pem").path, cert = folder.appendingPathComponent("cert.pem").path
            let made = try run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=live.test",
                                           "-keyout", key, "-out", cert])
            guard made.status == 0 else { throw Failure("openssl req: \(made.stderrText)") }
            server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            server.arguments = ["ip", "netns", "exec", serverNamespace, "openssl", "s_server", "-www", "-accept",
                                "10.215.0.1:4433", "-cert", cert, "-key", key, "-quiet"]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            for _ in 0..<50 {
                let probe = try run("ip", ["netns", "exec", clientNamespace, "curl", "-sk", "-o", "/dev/null", "--max-time", "1",
                                           "https://10.215.0.1:4433/"])
                if probe.status == 0 { return }
                usleep(100_000)
            }
            throw Failure("openssl s_server in \(serverNamespace) did not start")
        }

        deinit {
            if server.isRunning { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
            _ = try? run("ip", ["netns", "del", serverNamespace])
            _ = try? run("ip", ["netns", "del", clientNamespace])
            try? FileManager.default.removeItem(at: folder)
        }

        func ip(_ arguments: [String]) throws {
            let result = try run("ip", arguments)
            if result.status != 0 { throw Failure("ip \(arguments.joined(separator: " ")): \(result.stderrText)") }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func keysLoggedWhileCapturingDecryptHeldRecords() throws {
        let lab = try Lab()
        let keyLog = lab.folder.appendingPathComponent("keys").path
        FileManager.default.createFile(atPath: keyLog, contents: nil)
        let capture = try ReplayTests.BackgroundCapture(
            namespace: lab.clientNamespace,
            arguments: ["-i", lab.clientInterface, "--http", "--color", "never", "--keylog", keyLog, "tcp port 4433"])
        try capture.waitUntilListening()
        for version in ["--tlsv1.3", "--tls-max"] {
            var arguments = ["netns", "exec", lab.clientNamespace, "env", "SSLKEYLOGFILE=\(keyLog)", "curl", "-sk", "-o",
                             "/dev/null", "--max-time", "5", "--http1.1"]
            arguments += version == "--tls-max" ? ["--tlsv1.2", "--tls-max", "1.2"] : [version]
            arguments.append("https://10.215.0.1:4433/live")
            let curl = try run("ip", arguments)
            #expect(curl.status == 0, "\(curl.stderrText)")
        }
        let seen = capture.lines(atLeast: 4, within: 10)
        #expect(capture.process.isRunning, "capture must still be running when the exchanges appear")
        #expect(seen.filter { $0.contains("(decrypted)") }.count == 2, "lines: \(seen)\n\(capture.stderr)")
        #expect(seen.contains { $0.contains("TLS 1.3") }, "lines: \(seen)")
        #expect(seen.contains { $0.contains("TLS 1.2") }, "lines: \(seen)")
        #expect(seen.filter { $0.contains("GET 10.215.0.1:4433/live → 200") }.count == 2, "lines: \(seen)\n\(capture.stderr)")
        #expect(!capture.stderr.contains("failed authentication"), "\(capture.stderr)")
        #expect(capture.interrupt() == 0)
    }

    /// A minimal HTTP CONNECT proxy: one tunnel per client connection, each logged as "CONNECT TARGET 200".
    static let proxyScript = #"""
        import socket, sys, threading
        host, port, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        def pump(source, target):
            try:
                while data := source.recv(65536):
                    target.sendall(data)
            except OSError:
                pass
            try:
                target.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        def handle(client):
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(4096)
                if not chunk:
                    return client.close()
                head += chunk
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
            target_host, target_port = target.rsplit(":", 1)
            upstream = socket.create_connection((target_host, int(target_port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with open(log_path, "a") as log:
                log.write(f"{method} {target} 200\n")
            back = threading.Thread(target=pump, args=(upstream, client))
            back.start()
            pump(client, upstream)
            back.join()
            client.close()
            upstream.close()
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, port))
        server.listen(8)
        while True:
            connection, _ = server.accept()
            threading.Thread(target=handle, args=(connection,), daemon=True).start()
        """#

    /// An app behind an HTTP proxy: curl -x through a CONNECT proxy to the TLS server, captured by tcpdump. With the
    /// key log, the tunnel's TLS is decrypted and its exchange shown on the proxy connection; the proxy's log, curl's
    /// own status and saved body, and tshark's view are the oracles.
    @Test func tlsInsideAConnectTunnelIsDecrypted() throws {
        guard TestEnvironment.hasProgram("python3") && TestEnvironment.hasProgram("tcpdump") else {
            print("skipped: needs python3 and tcpdump (Scripts/setup --test)")
            return
        }
        let lab = try Lab()
        try lab.ip(["-n", lab.serverNamespace, "link", "set", "lo", "up"])  // the proxy reaches the server locally
        let script = lab.folder.appendingPathComponent("proxy.py"), proxyLog = lab.folder.appendingPathComponent("proxy.log")
        try Data(Self.proxyScript.utf8).write(to: script)
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        proxy.arguments = ["ip", "netns", "exec", lab.serverNamespace, "python3", script.path, "10.215.0.1", "3128", proxyLog.path]
        try proxy.run()
        defer { kill(proxy.processIdentifier, SIGKILL); proxy.waitUntilExit() }
        for _ in 0..<50 {
            let probe = try run("ip", ["netns", "exec", lab.clientNamespace, "bash", "-c", "exec 3<>/dev/tcp/10.215.0.1/3128"])
            if probe.status == 0 { break }
            usleep(100_000)
        }
        let pcap = lab.folder.appendingPathComponent("proxy.pcap").path, keyLog = lab.folder.appendingPathComponent("keys").path
        let body = lab.folder.appendingPathComponent("body").path
        let tcpdump = Process()
        tcpdump.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tcpdump.arguments = ["ip", "netns", "exec", lab.clientNamespace, "tcpdump", "-i", lab.clientInterface, "-s", "0", "-U",
                             "-w", pcap, "tcp port 3128"]
        tcpdump.standardError = FileHandle.nullDevice
        try tcpdump.run()
        usleep(700_000)
        let curl = try run("ip", ["netns", "exec", lab.clientNamespace, "env", "SSLKEYLOGFILE=\(keyLog)", "curl", "-sk", "--http1.1",
                                  "--max-time", "5", "-x", "http://10.215.0.1:3128", "-o", body, "-w", "%{http_code}",
                                  "https://10.215.0.1:4433/through-proxy"])
        #expect(curl.stdoutText == "200", "curl: \(curl.stdoutText) \(curl.stderrText)")
        usleep(500_000)
        // SIGKILL: Foundation starts children with SIGTERM blocked; -U has written every packet as it came.
        kill(tcpdump.processIdentifier, SIGKILL)
        tcpdump.waitUntilExit()
        #expect(try String(contentsOf: proxyLog, encoding: .utf8) == "CONNECT 10.215.0.1:4433 200\n")

        let capture = TestEnvironment.executable("capture").path
        let decoded = try run(capture, ["-r", pcap, "--http", "--json", "--keylog", keyLog])
        let records = decoded.stdout.split(separator: UInt8(ascii: "\n")).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]
        }
        func exchange(_ method: String) -> [String: Any]? {
            records.first { ($0["request"] as? [String: Any])?["method"] as? String == method }
        }
        let connect = try #require(exchange("CONNECT"), "\(decoded.stdoutText)\n\(decoded.stderrText)")
        #expect((connect["request"] as? [String: Any])?["uri"] as? String == "10.215.0.1:4433")
        #expect((connect["response"] as? [String: Any])?["status"] as? Int == 200)
        #expect(connect["upgrade_decoded"] as? Bool == true)
        #expect(records.contains { ($0["tls"] as? [String: Any])?["decrypted"] as? Bool == true }, "\(decoded.stdoutText)")
        let get = try #require(exchange("GET"), "no exchange inside the tunnel: \(decoded.stdoutText)\n\(decoded.stderrText)")
        #expect((get["request"] as? [String: Any])?["uri"] as? String == "/through-proxy")
        let response = try #require(get["response"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        let saved = try run("sha256sum", [body]).stdoutText.split(separator: " ").first.map(String.init)
        #expect((response["body"] as? [String: Any])?["sha256"] as? String == saved, "the decoded body is not what curl saved")
        #expect(get["server"] as? String == "10.215.0.1:3128", "shown on the client's connection to the proxy")
        #expect(decoded.stderrText.contains("CONNECT tunnel closed"), "\(decoded.stderrText)")

        // tshark decodes TLS inside CONNECT too: the same requests.
        if TestEnvironment.hasProgram("tshark") {
            let tshark = try run("tshark", ["-r", pcap, "-o", "tls.keylog_file:\(keyLog)", "-Y", "http.request", "-T", "fields",
                                            "-e", "http.request.method", "-e", "http.request.uri"])
            #expect(tshark.stdoutText == "CONNECT\t10.215.0.1:4433\nGET\t/through-proxy\n", "\(tshark.stdoutText)")
        }

        // Without the key log: the tunnel as before, TLS inside labelled, nothing decrypted.
        let opaque = try run(capture, ["-r", pcap, "--http", "--json"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(!opaque.stdoutText.contains("\"GET\""), "\(opaque.stdoutText)")
        #expect(opaque.stdoutText.contains("\"CONNECT\""), "\(opaque.stdoutText)")
        #expect(opaque.stderrText.contains("TLS inside"), "\(opaque.stderrText)")
    }
}
