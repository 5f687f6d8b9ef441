import Foundation
import Testing
import TestSupport

/// The whole path on real captures: `capture --http --json --keylog` over aioquic's HTTP/3 traffic gives one exchange
/// per request the server handled, with the method, path, status and body digests the server itself recorded.
@Suite("HTTP/3 over QUIC from real captures, against the server's own record")
struct HTTP3OverQUICTests {
    static let captureBinary = TestEnvironment.executable("capture").path

    @Test("every request the server logged is an exchange with its status and body sha256, on one and two threads",
          .enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "capture binary missing"),
          arguments: ["h3-basic", "h3-large", "h3-keyupdate", "h3-migration", "h3-retry", "h3-v2", "h3-chacha20",
                       "h3-resume", "h3-chromium"], [1, 2])
    func exchangesMatchServerLog(_ name: String, threads: Int) throws {
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: quicFixtures.appendingPathComponent("manifest.json")))
        let entry = try #require(((manifest as? [String: Any])?["fixtures"] as? [String: Any])?[name + ".pcap"] as? [String: Any])
        let server = try #require(entry["server"] as? [[String: Any]])
        let result = try run(Self.captureBinary, ["-r", quicFixtures.appendingPathComponent(name + ".pcap").path, "--http", "--json",
                                                   "--threads", "\(threads)",
                                                   "--keylog", quicFixtures.appendingPathComponent(name + ".keys").path])
        #expect(result.status == 0, "\(result.stderrText)")
        var exchanges: [String: [String: Any]] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let request = object["request"] as? [String: Any], http3 = object["http3"] as? [String: Any]
            exchanges["\(http3?["stream"] ?? "?") \(request?["uri"] ?? "?")"] = object
        }
        #expect(exchanges.count == server.count, "\(result.stdoutText)")
        for logged in server {
            let key = "\(logged["stream"] ?? "") \(logged["path"] ?? "")"
            let exchange = try #require(exchanges[key], "no exchange for \(key) in \(exchanges.keys.sorted())")
            let request = exchange["request"] as? [String: Any], response = exchange["response"] as? [String: Any]
            #expect(request?["method"] as? String == logged["method"] as? String)
            #expect((request?["body"] as? [String: Any])?["sha256"] as? String == logged["request_sha256"] as? String)
            #expect(response?["status"] as? Int == logged["status"] as? Int)
            #expect((response?["body"] as? [String: Any])?["sha256"] as? String == logged["response_sha256"] as? String, "\(key)")
            #expect(exchange["complete"] as? Bool == true, "\(key): \(exchange["warnings"] ?? "")")
        }
    }
}
