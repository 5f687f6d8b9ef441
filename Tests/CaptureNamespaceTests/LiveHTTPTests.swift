import Foundation
import Testing
import TestSupport

/// `capture -i IFACE --http` on a real interface: curl in one namespace, a real HTTP server in the other.
/// Each exchange must print while the capture is still running, and Ctrl-C must end it with tcpdump's counts.
@Suite(.enabled(if: TestEnvironment.isRoot, "needs root: creates network namespaces and a veth pair"),
       .enabled(if: TestEnvironment.hasProgram("curl") && TestEnvironment.hasProgram("python3"), "needs curl and python3"),
       .serialized)
struct LiveHTTPTests {
    typealias Lab = ReplayTests.VethLab

    /// A directory served by `python3 -m http.server` on 10.79.0.1:8080 in the lab's replay namespace.
    final class Server {
        let process = Process()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tk-www-\(UUID().uuidString)")

        init(lab: Lab) throws {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Data(#"{"items":[1,2,3]}"#.utf8).write(to: root.appendingPathComponent("items.json"))
            try lab.ip(["-n", lab.replayNamespace, "addr", "add", "10.79.0.1/24", "dev", lab.replayInterface])
            try lab.ip(["-n", lab.captureNamespace, "addr", "add", "10.79.0.2/24", "dev", lab.captureInterface])
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["ip", "netns", "exec", lab.replayNamespace, "python3", "-m", "http.server", "8080",
                                 "--bind", "10.79.0.1", "--directory", root.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Ready when it answers.
            for _ in 0..<50 {
                let probe = try run("ip", ["netns", "exec", lab.captureNamespace, "curl", "-s", "-o", "/dev/null",
                                           "--max-time", "1", "http://10.79.0.1:8080/"])
                if probe.status == 0 { return }
                usleep(100_000)
            }
            throw ReplayTests.LabError(message: "the HTTP server in \(lab.replayNamespace) did not start")
        }

        deinit {
            // SIGKILL: the server may inherit SIGTERM as ignored from the test runner, and it holds nothing worth saving.
            if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
            try? FileManager.default.removeItem(at: root)
        }
    }

    @Test func exchangesPrintWhileCapturingAndCtrlCPrintsCounts() throws {
        let lab = try Lab()
        let server = try Server(lab: lab)
        let capture = try ReplayTests.BackgroundCapture(
            namespace: lab.captureNamespace, arguments: ["-i", lab.captureInterface, "--http", "--color", "never", "tcp port 8080"])
        try capture.waitUntilListening()
        for path in ["/items.json", "/missing"] {
            _ = try run("ip", ["netns", "exec", lab.captureNamespace, "curl", "-s", "-o", "/dev/null", "--max-time", "5",
                               "http://10.79.0.1:8080\(path)"])
        }
        let seen = capture.lines(atLeast: 2, within: 8)
        #expect(capture.process.isRunning, "capture must still be running when the exchanges appear")
        try #require(seen.count == 2, "lines so far: \(seen)")
        #expect(seen[0].contains("10.79.0.2:") && seen[0].contains("→ 10.79.0.1:8080"))
        #expect(seen[0].contains("GET 10.79.0.1:8080/items.json → 200 OK"))
        #expect(seen[1].contains("GET 10.79.0.1:8080/missing → 404"))
        #expect(capture.interrupt() == 0)
        #expect(capture.stderr.contains("packets captured"))
        #expect(capture.stderr.contains("received by filter"))
        #expect(capture.stderr.contains("dropped by kernel"))
        _ = server
    }

    @Test func liveJSONCarriesTheContractFields() throws {
        let lab = try Lab()
        let server = try Server(lab: lab)
        let capture = try ReplayTests.BackgroundCapture(
            namespace: lab.captureNamespace, arguments: ["-i", lab.captureInterface, "--http", "--json"])
        try capture.waitUntilListening()
        _ = try run("ip", ["netns", "exec", lab.captureNamespace, "curl", "-s", "-o", "/dev/null", "--max-time", "5",
                           "http://10.79.0.1:8080/items.json"])
        let seen = capture.lines(atLeast: 1, within: 8)
        try #require(seen.count == 1, "lines so far: \(seen)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(seen[0].utf8)) as? [String: Any])
        let request = try #require(object["request"] as? [String: Any])
        let response = try #require(object["response"] as? [String: Any])
        #expect(object["server"] as? String == "10.79.0.1:8080")
        #expect(request["method"] as? String == "GET")
        #expect(request["uri"] as? String == "/items.json")
        #expect(response["status"] as? Int == 200)
        let body = try #require(response["body"] as? [String: Any])
        #expect(body["size"] as? Int == 17)
        // sha256 of {"items":[1,2,3]}, as `sha256sum` gives it
        #expect(body["sha256"] as? String == "7aff5dcbe562761bfd9d8569cdd3226d3944acad6539db5d62ad3f67d9a45d0a")
        #expect(object["complete"] as? Bool == true)
        #expect(capture.terminate() == 0)
        _ = server
    }
}
