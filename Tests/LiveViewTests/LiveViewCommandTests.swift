import Foundation
import Testing
import TestSupport

/// `capture -r FILE --ui`: the real executable, its printed URL, its HAR download against `--har`'s file, and its
/// stop on SIGINT.
@Suite(.serialized) struct LiveViewCommandTests {
    @Test(arguments: ["http-keepalive.pcap", "http-chunked-gzip.pcap", "http-binary-300k.pcap"])
    func harDownloadEqualsHARFile(fixture: String) throws {
        let file = TestEnvironment.fixtures.appendingPathComponent(fixture).path
        let harFile = FileManager.default.temporaryDirectory.appendingPathComponent("w23s-\(UUID()).har").path
        defer { try? FileManager.default.removeItem(atPath: harFile) }
        let written = try run(TestEnvironment.executable("capture").path, ["-r", file, "--http", "--har", harFile])
        #expect(written.status == 0)
        let running = try RunningCapture(["-r", file, "--ui", "127.0.0.1:0"])
        defer { running.kill() }
        let url = try running.url()
        // The URL is printed before the file is read: the whole HAR is there once the view says it still serves.
        try running.waitFor("live view: still serving")
        let client = RawHTTP(port: url.port)
        let har = try client.request("/api/har", token: url.token)
        #expect(har.status == 200)
        #expect(har.header("Content-Disposition") == "attachment; filename=\"capture.har\"")
        #expect(har.body == Array(try Data(contentsOf: URL(fileURLWithPath: harFile))))
        // Terminal output as without --ui.
        #expect(try client.request("/api/info", token: url.token).text.contains("\"ended\":true"))
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)
        let plain = try run(TestEnvironment.executable("capture").path, ["-r", file, "--http"])
        #expect(running.stdout == plain.stdout)
    }

    /// A 300 KB download: the timeline's `down` carries the response (at least its body), `up` the request and the
    /// client's ACKs, which `tshark` counts the same way (per direction, wire bytes).
    @Test func throughputOfADownloadIsDown() throws {
        let file = TestEnvironment.fixtures.appendingPathComponent("http-binary-300k.pcap").path
        let running = try RunningCapture(["-r", file, "--ui", "127.0.0.1:0"])
        defer { running.kill() }
        let url = try running.url()
        try running.waitFor("live view: still serving")
        let answer = try RawHTTP(port: url.port).request("/api/throughput", token: url.token)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        let up = try #require(object["up"] as? [Int]).reduce(0, +)
        let down = try #require(object["down"] as? [Int]).reduce(0, +)
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)
        #expect(down > 300_000, "down \(down) B")
        #expect(up < down / 50, "up \(up) B against down \(down) B")
        if TestEnvironment.hasProgram("tshark") {
            // tshark's own split: frames from port 80 are the server's.
            let frames = try run("tshark", ["-r", file, "-T", "fields", "-e", "tcp.srcport", "-e", "frame.len"]).stdoutText
            var fromServer = 0, fromClient = 0
            for line in frames.split(separator: "\n") {
                let fields = line.split(separator: "\t")
                guard fields.count == 2, let length = Int(fields[1]) else { continue }
                if fields[0] == "80" { fromServer += length } else { fromClient += length }
            }
            #expect(down == fromServer && up == fromClient, "view \(up)/\(down), tshark \(fromClient)/\(fromServer)")
        }
    }

    /// A file broken part-way (cut mid-packet): the error is said, and what was read before the damage stays up for
    /// browsing, as the terminal shows it; the exit status is still the error's.
    @Test func aBrokenFileStaysUpWithWhatWasRead() throws {
        let whole = try Data(contentsOf: TestEnvironment.fixtures.appendingPathComponent("http-keepalive.pcap"))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("w23-cut-\(UUID()).pcap")
        try whole.prefix(whole.count - 30).write(to: cut)
        defer { try? FileManager.default.removeItem(at: cut) }
        let plain = try run(TestEnvironment.executable("capture").path, ["-r", cut.path, "--http", "--json"])
        #expect(plain.status == 1 && plain.stderrText.contains("truncated"), "\(plain.stderrText)")
        let printed = plain.stdoutText.split(separator: "\n").count
        #expect(printed > 0)

        let running = try RunningCapture(["-r", cut.path, "--ui", "127.0.0.1:0"])
        defer { running.kill() }
        let url = try running.url()
        try running.waitFor("live view: still serving")
        #expect(running.stderr.contains("truncated"), "\(running.stderr)")
        let page = try RawHTTP(port: url.port).request("/api/exchanges?since=0", token: url.token)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
        #expect((object["exchanges"] as? [[String: Any]])?.count == printed)
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 1)
    }

    /// `--ui` alone (the documented everyday form; ArgumentParser once refused it as "Missing value") serves on the
    /// default address, or one of the 20 ports after it when taken.
    @Test func bareUIServesOnTheDefaultAddress() throws {
        let file = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        let running = try RunningCapture(["-r", file, "--ui"])
        defer { running.kill() }
        let url = try running.url()
        #expect((8383...8403).contains(url.port), "port \(url.port)")
        #expect(running.stderr.contains("live view: http://127.0.0.1:\(url.port)/?token="), "\(running.stderr)")
        try running.waitFor("live view: still serving")
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)
    }

    /// A value written as an address or port that is wrong is named, never taken as the start of the filter
    /// (`--ui 99999` once ended "bad filter expression '99999'"), and a taken port says who to ask (issue 36).
    @Test func badAddressesAndATakenPortAreNamed() throws {
        let file = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        let capture = TestEnvironment.executable("capture").path
        for (value, words) in [("99999", "99999 is not a port"), ("localhost", "localhost is not an address written as digits"),
                               ("localhost:8080", "localhost is not an address"), ("127.0.0.1:", "no port after the colon"),
                               ("1.2.3.4:70000", "70000 is not a port")] {
            let result = try run(capture, ["-r", file, "--ui", value])
            #expect(result.status != 0, "--ui \(value)")
            #expect(result.stderrText.contains("--ui \(value): \(words)"), "--ui \(value): \(result.stderrText)")
            #expect(!result.stderrText.contains("bad filter expression"), "--ui \(value): \(result.stderrText)")
        }
        // A filter after a bare --ui is still a filter.
        let filtered = try RunningCapture(["-r", file, "--ui", "tcp", "port", "80"])
        defer { filtered.kill() }
        let url = try filtered.url()
        let taken = try run(capture, ["-r", file, "--ui", "127.0.0.1:\(url.port)"])
        #expect(taken.status != 0)
        #expect(taken.stderrText.contains("cannot serve the live view on 127.0.0.1 port \(url.port): another program is listening there"),
                "\(taken.stderrText)")
        #expect(taken.stderrText.contains("--ui PORT"), "\(taken.stderrText)")
        #expect(!taken.stderrText.contains("errno"), "\(taken.stderrText)")
    }
}
