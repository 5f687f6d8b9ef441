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
        let client = RawHTTP(port: url.port)
        let har = try client.request("/api/har", token: url.token)
        #expect(har.status == 200)
        #expect(har.header("Content-Disposition") == "attachment; filename=\"capture.har\"")
        #expect(har.body == Array(try Data(contentsOf: URL(fileURLWithPath: harFile))))
        // Terminal output as without --ui.
        #expect(try client.request("/api/info", token: url.token).text.contains("\"ended\":true"))
        try running.waitFor("live view: still serving")
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)
        let plain = try run(TestEnvironment.executable("capture").path, ["-r", file, "--http"])
        #expect(running.stdout == plain.stdout)
    }
}


/// The API carries every record `--http --json` prints (exchanges, TLS sessions, WebSocket messages), in the same
/// order, each as printed plus the view's own members.
@Suite(.serialized) struct LiveViewRecordTests {
    @Test(arguments: [("h2/websocket.pcap", nil), ("tls/tls12-h2.pcap", "tls/tls12-h2.keys")] as [(String, String?)])
    func recordsAreThoseOfJSON(fixture: String, keys: String?) throws {
        let fixtures = TestEnvironment.fixtures
        var arguments = ["-r", fixtures.appendingPathComponent(fixture).path, "--json", "--ui", "127.0.0.1:0"]
        if let keys { arguments += ["--keylog", fixtures.appendingPathComponent(keys).path] }
        let running = try RunningCapture(arguments)
        defer { running.kill() }
        let url = try running.url()
        try running.waitFor("live view: still serving")
        let page = try RawHTTP(port: url.port).request("/api/exchanges?since=0", token: url.token)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
        let records = try #require(object["exchanges"] as? [[String: Any]])
        let printed = try String(decoding: running.stdout, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(records.count == printed.count)
        #expect(records.count > 1)
        for (index, (record, line)) in zip(records, printed).enumerated() {
            #expect(record["id"] as? Int == index)
            var stripped = record
            stripped["id"] = nil
            if record["request"] != nil || record["response"] != nil {
                stripped["bodies"] = nil
                stripped["tls"] = nil
            }
            if record["type"] as? String == "websocket" { stripped["kept"] = nil }
            let same = try JSONSerialization.data(withJSONObject: stripped, options: .sortedKeys)
                == JSONSerialization.data(withJSONObject: line, options: .sortedKeys)
            #expect(same, "record \(index): \(record) against \(line)")
        }
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)
    }
}
