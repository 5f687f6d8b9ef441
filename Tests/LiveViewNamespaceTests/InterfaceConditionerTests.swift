import Foundation
import Testing
import TestSupport

/// `capture -i IFACE --ui` on a real veth whose peer lives in a namespace this test makes (w23-...): the panel
/// applies a profile to the interface only with the page's explicit confirmation, through `condition`'s own
/// conditioner, and turning it off, or stopping the view, puts back exactly what was there (`tc qdisc show` equal
/// before and after, the ifb gone). A real download from a server in the namespace measures the profile, and,
/// with the server on port 61000 (above every ephemeral port a client gets), shows the timeline's directions come
/// from the handshake. Root: namespaces, veth, tc.
@Suite(.serialized) struct InterfaceConditionerTests {
    @Test("-i IFACE --ui: confirmed switches apply to the interface; off and stop restore tc exactly")
    func confirmedSwitchAndRestore() throws {
        guard LiveViewRootTest.canRun else { return }
        let tag = String(UUID().uuidString.prefix(5)).lowercased()
        let namespace = "w23-ns-\(tag)", host = "w23-h\(tag)", inner = "w23-n\(tag)"
        let subnet = "10.231.\(Int.random(in: 1...250))"
        let directory = try LiveViewRootTest.profileDirectory("iface")
        defer {
            _ = try? run("ip", ["netns", "del", namespace])  // takes the veth pair with it
            _ = try? run("ip", ["link", "del", "tk-\(host)"])  // the ifb, should a restore have failed
            try? FileManager.default.removeItem(at: directory)
        }
        for command in [["netns", "add", namespace],
                        ["link", "add", host, "type", "veth", "peer", "name", inner, "netns", namespace],
                        ["addr", "add", "\(subnet).1/24", "dev", host], ["link", "set", host, "up"],
                        ["-n", namespace, "addr", "add", "\(subnet).2/24", "dev", inner],
                        ["-n", namespace, "link", "set", inner, "up"], ["-n", namespace, "link", "set", "lo", "up"]] {
            let result = try run("ip", command)
            try #require(result.status == 0, "ip \(command.joined(separator: " ")): \(result.stderrText)")
        }
        let size = 200_000
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
            .write(to: directory.appendingPathComponent("w23-blob.bin"))
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["ip", "netns", "exec", namespace, "python3", "-m", "http.server", "--bind", "\(subnet).2",
                            "--directory", directory.path, "61000"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            kill(server.processIdentifier, SIGKILL)  // SIGTERM may be blocked in children of the test runner
            server.waitUntilExit()
        }
        let blob = "http://\(subnet).2:61000/w23-blob.bin"
        func download() throws -> Double { try LiveViewRootTest.download(blob, size: size) }
        func qdiscs() throws -> String { try run("tc", ["qdisc", "show", "dev", host]).stdoutText }
        let bare = try qdiscs()

        let running = try RunningCapture(["-i", host, "--ui", "127.0.0.1:0", "--profiles", directory.path],
                                         environment: ["TAPKIT_STATE_DIR": directory.appendingPathComponent("state").path])
        defer { running.kill() }
        let url = try running.url(seconds: 15)
        let client = RawHTTP(port: url.port)
        func switchTo(_ body: String) throws -> (status: Int, text: String) {
            let answer = try client.request("/api/conditioner", method: "POST", token: url.token,
                                            extra: [("Content-Type", "application/json")], body: Array(body.utf8))
            return (answer.status, answer.text)
        }
        let panel = try client.json("/api/conditioner", token: url.token)
        #expect(panel["available"] as? Bool == true, "\(panel)")
        #expect(panel["target"] as? String == "interface")
        #expect(panel["needsConfirmation"] as? Bool == true)
        #expect(panel["active"] is NSNull)
        let unconditioned = try download()

        // Without the confirmation nothing is applied.
        let unconfirmed = try switchTo(#"{"profile": "W23 Trickle"}"#)
        #expect(unconfirmed.status == 409 && unconfirmed.text.contains("confirm"), "\(unconfirmed)")
        #expect(try qdiscs() == bare)

        let applied = try switchTo(#"{"profile": "W23 Trickle", "confirm": true}"#)
        #expect(applied.status == 200 && applied.text.contains(#""active":"W23 Trickle""#), "\(applied)")
        #expect(try qdiscs() != bare)
        let conditioned = try download()
        print("-i \(host) --ui: 200 KB in \(unconditioned) s bare, \(conditioned) s with W23 Trickle (100 KB/s)")
        #expect(conditioned > 1.0 && conditioned > 3 * unconditioned, "bare \(unconditioned) s, conditioned \(conditioned) s")

        // Off from the page: the interface as it was.
        let off = try switchTo(#"{"profile": null, "confirm": true}"#)
        #expect(off.status == 200 && off.text.contains(#""active":null"#), "\(off)")
        #expect(try qdiscs() == bare)

        // The two downloads, in the list and in the timeline's `down` (the server's port is above the client's).
        let deadline = Date().addingTimeInterval(5)
        var listed = 0
        repeat {
            let records = try #require(try client.json("/api/exchanges?since=0", token: url.token)["exchanges"] as? [[String: Any]])
            listed = records.count { ($0["response"] as? [String: Any])?["status"] as? Int == 200 }
            if listed < 2 { Thread.sleep(forTimeInterval: 0.2) }
        } while listed < 2 && Date() < deadline
        #expect(listed == 2)
        let throughput = try client.json("/api/throughput", token: url.token)
        let up = try #require(throughput["up"] as? [Int]).reduce(0, +)
        let down = try #require(throughput["down"] as? [Int]).reduce(0, +)
        #expect(down > 2 * size && up < down / 10, "up \(up) B, down \(down) B")

        // Applied again, then the view stops: the interface gets back what it had when the view started.
        #expect(try switchTo(#"{"profile": "W23 Trickle", "confirm": true}"#).status == 200)
        #expect(try qdiscs() != bare)
        running.interrupt()
        #expect(running.waitForExit(seconds: 10) == 0, "\(running.stderr)")
        #expect(try qdiscs() == bare)
        #expect(try run("ip", ["link", "show", "tk-\(host)"]).status != 0, "the ifb is still there")
    }
}
