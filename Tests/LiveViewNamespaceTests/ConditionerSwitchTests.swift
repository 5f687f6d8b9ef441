import Foundation
import Testing
import TestSupport

/// The live view's conditioner panel on a real sandboxed command: a profile switched through the API while the
/// command downloads, its effect measured by the command itself, and the switch's time recorded for the timeline.
/// Root: the sandbox is a network namespace with a veth pair and tc on both ends.
@Suite(.serialized) struct ConditionerSwitchTests {
    /// The command downloads the same 1 MB file over and over until the test leaves a stop file (at most 8 s) and
    /// logs, every 100 ms, the wall-clock time and the bytes read so far: the rate before and after the switch comes
    /// from the command, not from the view. It runs until the test has its window after the switch, however late a
    /// loaded machine starts it.
    static let downloader = #"""
        import os, sys, time, urllib.request
        url, log, stop = sys.argv[1], open(sys.argv[2], "w"), sys.argv[3]
        start = time.time(); total = 0; last = 0
        def going(): return time.time() - start < 8 and not os.path.exists(stop)
        while going():
            with urllib.request.urlopen(url, timeout=5) as r:
                while going():
                    chunk = r.read(8192)
                    if not chunk: break
                    total += len(chunk)
                    if time.time() - last >= 0.1:
                        last = time.time(); log.write(f"{last} {total}\n"); log.flush()
        log.write(f"{time.time()} {total}\n")
        """#

    @Test("switching to a bandwidth profile from the API slows the command's download at once, and is recorded")
    func switchSlowsTheCommand() throws {
        guard TestEnvironment.isRoot else {
            print("skipped: needs root for the command's sandbox (network namespace, veth, tc)")
            return
        }
        let server = try LoopbackWebServer(randomFiles: ["w23s-blob.bin": 1 << 20])
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("w23s-profiles-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Bandwidth only: this kernel has no netem, so Black Hole's loss cannot be shown here; a 400 kbit/s link is
        // as plain a signal (tens of MB/s before, about 50 KB/s after).
        try Data(#"{"name": "W23s Trickle", "downlink": {"bandwidthKbit": 400}, "uplink": {"bandwidthKbit": 400}}"#.utf8)
            .write(to: directory.appendingPathComponent("w23s-trickle.json"))
        let log = directory.appendingPathComponent("rate.log").path
        let stop = directory.appendingPathComponent("stop").path
        let running = try RunningCapture(["--ui", "127.0.0.1:0", "--profiles", directory.path, "--",
                                          "sh", "-c", "python3 -c \"$0\" \"http://$TAPKIT_SANDBOX_HOST:\(server.port)/w23s-blob.bin\" \(log) \(stop)",
                                          Self.downloader])
        defer { running.kill() }
        let url = try running.url()
        let client = RawHTTP(port: url.port)
        let before = try client.request("/api/conditioner", token: url.token)
        #expect(before.text.contains(#""available":true"#), "\(before.text)")
        #expect(before.text.contains(#""name":"W23s Trickle""#))
        // Let the download run unconditioned for a second (its first sample that old), then switch.
        let going = Date().addingTimeInterval(10)
        while Self.samples(log).first.map({ $0.0 > Date().timeIntervalSince1970 - 1.0 }) ?? true {
            try #require(Date() < going, "the download never started: \(running.stderr)")
            Thread.sleep(forTimeInterval: 0.05)
        }
        let asked = Date().timeIntervalSince1970
        let switched = try client.request("/api/conditioner", method: "POST", token: url.token,
                                          extra: [("Content-Type", "application/json")],
                                          body: Array(#"{"profile": "W23s Trickle"}"#.utf8))
        let answered = Date().timeIntervalSince1970
        #expect(switched.status == 200, "\(switched.text)")
        let state = try #require(try JSONSerialization.jsonObject(with: Data(switched.body)) as? [String: Any])
        #expect(state["active"] as? String == "W23s Trickle")
        let switches = try #require(state["switches"] as? [[String: Any]])
        #expect(switches.count == 2)
        let switchTime = try #require(switches.last?["t"] as? Double)
        #expect(switchTime >= asked && switchTime <= answered, "switch at \(switchTime), asked \(asked), answered \(answered)")
        #expect(switches.last?["profile"] as? String == "W23s Trickle")
        // The window after the switch below ends at +2.2 s.
        Thread.sleep(forTimeInterval: max(0, switchTime + 2.4 - Date().timeIntervalSince1970))
        FileManager.default.createFile(atPath: stop, contents: nil)

        try running.waitFor("live view: still serving", seconds: 15)
        // The command ended: its sandbox is gone, and the panel says so.
        let after = try client.request("/api/conditioner", method: "POST", token: url.token, body: Array(#"{"profile": null}"#.utf8))
        #expect(after.status == 409, "\(after.text)")
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0, "\(running.stderr)")

        let samples = Self.samples(log)
        func rate(from: Double, to: Double) -> Double? {
            let window = samples.filter { $0.0 >= from && $0.0 <= to }
            guard let first = window.first, let last = window.last, last.0 > first.0 else { return nil }
            return (last.1 - first.1) / (last.0 - first.0)
        }
        let fast = try #require(rate(from: switchTime - 0.8, to: switchTime), "samples: \(samples)")
        // A moment for the packets already queued to drain, then the profile's rate.
        let slow = try #require(rate(from: switchTime + 0.5, to: switchTime + 2.2), "samples: \(samples)")
        print("download before the switch \(Int(fast / 1000)) KB/s, after \(Int(slow / 1000)) KB/s (profile 50 KB/s)")
        #expect(fast > 1_000_000, "before: \(fast) B/s")
        #expect(slow < 50_000 * 1.5, "after: \(slow) B/s")
        #expect(slow > 50_000 * 0.5, "after: \(slow) B/s")
    }

    /// The downloader's log: (wall-clock time, bytes so far) per line; none while it does not exist yet.
    static func samples(_ log: String) -> [(Double, Double)] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line -> (Double, Double)? in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let time = Double(parts[0]), let bytes = Double(parts[1]) else { return nil }
            return (time, bytes)
        }
    }
}
