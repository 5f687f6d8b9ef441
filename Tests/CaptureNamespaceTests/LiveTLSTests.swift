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
}
