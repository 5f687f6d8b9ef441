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

    /// dig's answer code and its own "Query time" of a file dig wrote, once it is there (bounded wait).
    static func dig(_ path: String, seconds: Double) throws -> (status: String, milliseconds: Int) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.contains("Query time:") || text.contains("timed out") {
                let status = text.range(of: #"status: [A-Z]+"#, options: .regularExpression).map { String(text[$0].dropFirst(8)) } ?? "none"
                let time = text.range(of: #"Query time: [0-9]+"#, options: .regularExpression).flatMap { Int(text[$0].dropFirst(12)) } ?? -1
                return (status, time)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw RawHTTP.Failure(description: "dig wrote no answer to \(path) within \(seconds) s")
    }

    /// `run NAME --ui` with a profile that has DNS faults and a DNS delay: capture answers the command's DNS as `run` does
    /// (it used to refuse), and a switch from the panel changes the faults and the delay at the next query.
    @Test("condition run NAME --ui answers the command's DNS with NAME's faults and delay; a panel switch changes them")
    func dnsFaultsInTheLiveView() throws {
        guard LiveViewRootTest.canRun, TestEnvironment.hasProgram("dig") else { return }
        let directory = try LiveViewRootTest.profileDirectory("w24f-dns")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data((#"{"name": "W24F Faulty DNS", "downlink": {"bandwidthKbit": 800}, "uplink": {"bandwidthKbit": 800}, "#
                  + #""dnsDelayMs": 600, "faults": {"dns": ["nxdomain:w24f-a.test"]}}"#).utf8)
            .write(to: directory.appendingPathComponent("w24f-a.json"))
        try Data(#"{"name": "W24F Failing DNS", "downlink": {"bandwidthKbit": 800}, "faults": {"dns": ["servfail:w24f-a.test"]}}"#.utf8)
            .write(to: directory.appendingPathComponent("w24f-b.json"))
        let dir = directory.path
        let script = "dig +tries=1 +timeout=3 w24f-a.test > \(dir)/first.txt; i=0; "
            + "while [ ! -e \(dir)/go ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done; "
            + "dig +tries=1 +timeout=3 w24f-a.test > \(dir)/second.txt; exit 3"
        let running = try RunningCapture(["run", "W24F Faulty DNS", "--profiles", dir, "--ui", "127.0.0.1:0", "--", "sh", "-c", script],
                                         executable: "condition")
        defer { running.kill() }
        let url = try running.url(seconds: 15)
        let first = try Self.dig(dir + "/first.txt", seconds: 15)
        #expect(first.status == "NXDOMAIN" && first.milliseconds >= 580, "under W24F Faulty DNS: \(first)")
        let switched = try RawHTTP(port: url.port).request("/api/conditioner", method: "POST", token: url.token,
                                                           extra: [("Content-Type", "application/json")],
                                                           body: Array(#"{"profile": "W24F Failing DNS"}"#.utf8))
        #expect(switched.status == 200, "\(switched.text)")
        FileManager.default.createFile(atPath: dir + "/go", contents: nil)
        let second = try Self.dig(dir + "/second.txt", seconds: 15)
        #expect(second.status == "SERVFAIL" && second.milliseconds < 500, "after the switch to W24F Failing DNS: \(second)")
        try running.waitFor("live view: still serving", seconds: 20)
        #expect(running.stderr.contains("DNS of the command answered at "), "\(running.stderr)")
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 3, "\(running.stderr)")
        #expect(running.stderr.contains("DNS queries: 1 answered NXDOMAIN, 1 answered SERVFAIL"), "\(running.stderr)")
    }
}
