import Foundation
import Testing
import TestSupport

/// The API shows what the CLI shows: `capture -r FILE --ui` (run alone, with nothing else asking for bodies or
/// hashes) serves every record a separate `capture -r FILE --http --json` prints, in the same order, each equal on
/// every field `--json` has; the view adds only its own members. Every fixture with a key log (TLS 1.2/1.3, h2,
/// HTTP/3, whose QUIC connection records are compared like the rest) and the WebSocket capture, whose long text messages and hashes differed once (the view's run kept more
/// of a message and hashed nothing).
@Suite struct LiveViewRecordTests {
    /// The view's own members, beside `--json`'s.
    static let viewMembers: Set<String> = ["id", "bodies", "tls", "quic", "kept"]

    static let fixtures: [(String, String?)] = {
        let root = TestEnvironment.fixtures
        let keyed = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".keys") }.sorted()
            .map { ($0.dropLast(5) + ".pcap", Optional($0)) }
            .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent($0.0).path) }
        return [("h2/websocket.pcap", nil)] + keyed
    }()

    @Test(arguments: fixtures)
    func recordsEqualThoseOfJSON(fixture: String, keys: String?) throws {
        let root = TestEnvironment.fixtures
        var arguments = ["-r", root.appendingPathComponent(fixture).path]
        if let keys { arguments += ["--keylog", root.appendingPathComponent(keys).path] }
        let printed = try run(TestEnvironment.executable("capture").path, arguments + ["--http", "--json"])
        #expect(printed.status == 0)
        let lines = try printed.stdoutText.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }

        let running = try RunningCapture(arguments + ["--ui", "127.0.0.1:0"])
        defer { running.kill() }
        let url = try running.url()
        try running.waitFor("live view: still serving")
        let page = try RawHTTP(port: url.port).request("/api/exchanges?since=0", token: url.token)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
        let records = try #require(object["exchanges"] as? [[String: Any]])
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)

        #expect(records.count == lines.count, "\(fixture): \(records.count) records, --json printed \(lines.count)")
        #expect(!lines.isEmpty)
        for (index, (record, line)) in zip(records, lines).enumerated() {
            #expect(record["id"] as? Int == index)
            let extra = Set(record.keys).subtracting(line.keys)
            #expect(extra.isSubset(of: Self.viewMembers), "\(fixture) record \(index): members \(extra) not in --json")
            for (key, value) in line {
                let served = try #require(record[key], "\(fixture) record \(index): no \(key)")
                #expect(try Self.same(served, value), "\(fixture) record \(index) \(key): \(served) against --json's \(value)")
            }
            // An exchange carries its connection's TLS or QUIC record: one --json printed, for the same endpoints.
            for key in ["tls", "quic"] where line[key] == nil {
                guard let session = record[key] else { continue }
                let printed = lines.filter { $0[key] != nil && $0["client"] as? String == line["client"] as? String }
                #expect(try printed.contains { try Self.same($0, session) }, "\(fixture) record \(index): its \(key) is none --json printed")
            }
        }
        if fixture.hasPrefix("quic/") {
            #expect(lines.contains { $0["quic"] != nil } && records.contains { $0["http3"] != nil && $0["quic"] != nil },
                    "\(fixture): no QUIC record, or no exchange carrying one")
        }
    }

    static func same(_ a: Any, _ b: Any) throws -> Bool {
        try JSONSerialization.data(withJSONObject: [a], options: .sortedKeys)
            == JSONSerialization.data(withJSONObject: [b], options: .sortedKeys)
    }
}
