import Foundation
import Testing
import TestSupport

/// `condition run NAME --ui -- COMMAND`: the live view of `capture --ui -- COMMAND` (one server, one sandbox set-up),
/// with the panel starting at NAME. A real download by curl in the sandbox: its own timing shows the profile in force
/// from the first byte, the view lists the exchange with the file's own hash, the timeline puts the download in
/// `down` (the server is on an ephemeral port, which ports alone could take for the client), and the exit status
/// is the command's. Root: the sandbox is a network namespace with a veth pair and tc on both ends.
@Suite(.serialized) struct ConditionRunLiveViewTests {
    @Test("condition run NAME --ui serves the command's live view with the panel at NAME")
    func conditionRunServesTheLiveView() throws {
        guard LiveViewRootTest.canRun else { return }
        let size = 200_000
        let server = try LoopbackWebServer(randomFiles: ["w23-blob.bin": size])
        defer { server.stop() }
        // The file's own hash, from coreutils.
        let hash = try run("sha256sum", [server.directory.appendingPathComponent("w23-blob.bin").path]).stdoutText.prefix(64)
        let directory = try LiveViewRootTest.profileDirectory("run")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("curl.log").path
        let script = "curl -s -o /dev/null -w '%{http_code} %{size_download} %{time_total}' "
            + "\"http://$TAPKIT_SANDBOX_HOST:\(server.port)/w23-blob.bin\" > \(log); exit 7"
        let running = try RunningCapture(["run", LiveViewRootTest.trickle, "--profiles", directory.path, "--ui", "127.0.0.1:0", "--",
                                          "sh", "-c", script], executable: "condition")
        defer { running.kill() }
        let url = try running.url(seconds: 15)
        let client = RawHTTP(port: url.port)

        let panel = try client.json("/api/conditioner", token: url.token)
        #expect(panel["available"] as? Bool == true, "\(panel)")
        #expect(panel["target"] as? String == "sandbox")
        #expect(panel["active"] as? String == LiveViewRootTest.trickle)
        let switches = try #require(panel["switches"] as? [[String: Any]])
        #expect(switches.first?["profile"] as? String == LiveViewRootTest.trickle)

        try running.waitFor("live view: still serving", seconds: 20)
        // The command's own account of its download: the profile was in force from its first byte.
        let measured = try String(contentsOfFile: log, encoding: .utf8).split(separator: " ")
        #expect(measured.count == 3 && measured[0] == "200" && measured[1] == "\(size)", "curl: \(measured)")
        let seconds = try #require(Double(measured[2]))
        print("condition run --ui: curl fetched \(size) B in \(seconds) s (profile 100 KB/s)")
        #expect(seconds > 1.0, "the download took \(seconds) s: not conditioned")

        let records = try #require(try client.json("/api/exchanges?since=0", token: url.token)["exchanges"] as? [[String: Any]])
        let exchange = try #require(records.first { ($0["request"] as? [String: Any])?["uri"] as? String == "/w23-blob.bin" },
                                    "\(records)")
        let response = try #require(exchange["response"] as? [String: Any])
        let body = try #require(response["body"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        #expect(body["size"] as? Int == size)
        #expect(body["sha256"] as? String == String(hash))

        let throughput = try client.json("/api/throughput", token: url.token)
        let up = try #require(throughput["up"] as? [Int]).reduce(0, +)
        let down = try #require(throughput["down"] as? [Int]).reduce(0, +)
        print("timeline: up \(up) B, down \(down) B (server port \(server.port))")
        #expect(down > size && up < down / 10, "up \(up) B, down \(down) B")

        // The command ended and its sandbox went: the panel says so.
        let late = try client.request("/api/conditioner", method: "POST", token: url.token, body: Array(#"{"profile": null}"#.utf8))
        #expect(late.status == 409, "\(late.text)")
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 7, "\(running.stderr)")
    }
}
