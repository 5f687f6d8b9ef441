import Foundation
import Testing
import TestSupport

/// `capture --http -- curl -sk https://...`: the command's own key log decrypts its exchange.
@Suite("capture -- COMMAND over TLS", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables, live capture"),
       .enabled(if: TestEnvironment.hasProgram("curl") && TestEnvironment.hasProgram("openssl"),
                "needs curl and openssl (Scripts/setup --test)"),
       .enabled(if: CaptureFeatures.decryptsTLS,
                "needs a capture with --keylog (the TLS decrypting layer); this build has none"))
struct CommandCaptureTLSTests {
    @Test("the decrypted GET and its 200 are shown; the key log was written by curl and is gone afterwards")
    func decryptedExchange() throws {
        let server = try LoopbackTLSServer(files: ["tkx-secret.txt": "decrypted body\n"])
        defer { server.stop() }
        let script = "curl -sk -o /dev/null https://$TAPKIT_SANDBOX_HOST:\(server.port)/tkx-secret.txt; "
            + #"test -s "$SSLKEYLOGFILE" && echo keys-written"#
        let result = try BackgroundCommandCapture(["--http", "--", "sh", "-c", script]).finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("keys-written"), "curl wrote no keys: \(result.stdout)")
        #expect(result.stdout.contains("GET"), "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("/tkx-secret.txt"), "\(result.stdout)")
        #expect(result.stdout.contains("200"), "\(result.stdout)")
        let id = try #require(CommandCaptureHarness.sandboxID(fromStderr: result.stderr), "\(result.stderr)")
        #expect(try CommandCaptureHarness.leftovers(of: id) == [])
    }
    @Test("a key logged after the connection went quiet: the exchange is shown then, while the command still runs")
    func keyLoggedAfterTheTraffic() throws {
        let server = try LoopbackTLSServer(files: ["tkx-late.txt": "late key\n"])
        defer { server.stop() }
        // curl logs to a file of its own; the keys reach the capture's key log a second after the last packet,
        // as from a program that writes its key log late. No packet follows them.
        let script = #"K=$(mktemp); SSLKEYLOGFILE=$K curl -sk -o /dev/null https://$TAPKIT_SANDBOX_HOST:"#
            + "\(server.port)/tkx-late.txt; "
            + #"sleep 1; cat "$K" >> "$SSLKEYLOGFILE"; rm -f "$K"; echo keys-appended; sleep 4"#
        let capture = try BackgroundCommandCapture(["--http", "--", "sh", "-c", script])
        let appended = capture.waitForLine(containing: "keys-appended", timeout: 10)
        let shown = capture.waitForLine(containing: "/tkx-late.txt", timeout: 3)
        let stillRunning = capture.process.isRunning
        let result = capture.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let keysAt = try #require(appended, "the command did not get to append its keys: \(result.stdout) \(result.stderr)")
        let line = try #require(shown, "no exchange line: \(result.stdout) \(result.stderr)")
        let delay = line.time.timeIntervalSince(keysAt.time)
        print("measured: exchange shown \(String(format: "%.2f", delay)) s after its key was logged")
        #expect(stillRunning, "the exchange appeared only when the command ended")
        #expect(delay < 1.5)
        #expect(line.text.contains("200"), "\(line.text)")
    }

    @Test("condition run --http decrypts the same way (its capture gets the key log as --keylog)")
    func conditionRunDecrypts() throws {
        let server = try LoopbackTLSServer(files: ["tkx-run.txt": "through condition run\n"])
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"name": "Tkx Wide TLS", "downlink": {"bandwidthKbit": 50000}, "uplink": {"bandwidthKbit": 50000}}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("tkx-wide-tls.json"))
        let result = try run(TestEnvironment.executable("condition").path,
                             ["run", "Tkx Wide TLS", "--profiles", directory.path, "--http", "--",
                              "sh", "-c", "curl -sk -o /dev/null https://$TAPKIT_SANDBOX_HOST:\(server.port)/tkx-run.txt"])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.contains("/tkx-run.txt"), "\(result.stdoutText)\n\(result.stderrText)")
        #expect(result.stdoutText.contains("200"), "\(result.stdoutText)")
    }
}

enum CaptureFeatures {
    /// Whether this build's `capture` has the TLS decrypting layer (`--keylog FILE`).
    static let decryptsTLS: Bool = {
        (try? run(CommandCaptureHarness.capture, ["--help"]))?.stdoutText.contains("--keylog") ?? false
    }()
}

/// `openssl s_server -WWW` on 127.0.0.1 with a fresh self-signed certificate, serving files from a directory.
final class LoopbackTLSServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    let directory: URL

    init(files: [String: String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tkx-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent(name)) }
        let key = directory.appendingPathComponent("key.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let made = try run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                       "-nodes", "-subj", "/CN=tkx.test", "-days", "1", "-keyout", key, "-out", cert])
        guard made.status == 0 else { throw HarnessFailure(description: "openssl req failed: \(made.stderrText)") }
        var chosen: Int?
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<60_000)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl", "s_server", "-quiet", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-WWW"]
            process.currentDirectoryURL = directory
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // Listening once a TCP connect succeeds.
            for _ in 0..<50 {
                if Self.canConnect(port) {
                    chosen = port
                    break
                }
                if !process.isRunning { break }
                usleep(50_000)
            }
            if chosen != nil { break }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            break
        }
        guard let chosen else { throw HarnessFailure(description: "openssl s_server did not start") }
        port = chosen
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
