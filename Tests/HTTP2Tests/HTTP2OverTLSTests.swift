import Foundation
import Testing
import TestSupport

/// HTTP/2 over TLS: the tls branch's captures (Tests/Fixtures/tls, Scripts/fixtures/make-tls.sh) decrypted with
/// their key logs; ALPN h2 routes the plaintext to the HTTP/2 decoder. Compared with that manifest, which
/// records what the server (nginx) logged for each request.
@Suite("HTTP/2 over TLS (ALPN h2)")
struct HTTP2OverTLSTests {
    static let folder = TestEnvironment.fixtures.appendingPathComponent("tls")

    static var scenarios: [[String: Any]] {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("manifest.json")),
              let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [] }
        return (manifest["scenarios"] as? [[String: Any]] ?? []).filter { ($0["name"] as? String ?? "").hasSuffix("-h2") }
    }

    @Test("every h2 scenario: exchanges are HTTP/2 streams whose status and decoded body match the server",
          .enabled(if: haveCapture && !scenarios.isEmpty, "capture not built or Tests/Fixtures/tls has no h2 captures"))
    func decryptedHTTP2() throws {
        for scenario in Self.scenarios {
            let pcap = Self.folder.appendingPathComponent(scenario["pcap"] as? String ?? "").path
            let keys = Self.folder.appendingPathComponent(scenario["keys"] as? String ?? "").path
            let result = try capture(["-r", pcap, "--keylog", keys, "--http", "--json"])
            // Exchange records only (the TLS session has a record of its own).
            let exchanges = try result.stdoutText.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
            }.filter { $0["request"] != nil }
            let expected = scenario["exchanges"] as? [[String: Any]] ?? []
            #expect(exchanges.count == expected.count, "\(scenario["name"] ?? "")")
            for wanted in expected {
                let match = exchanges.first { ($0["request"] as? [String: Any])?["uri"] as? String == wanted["uri"] as? String }
                let exchange = try #require(match, "\(scenario["name"] ?? ""): no exchange for \(wanted["uri"] ?? "")")
                let response = exchange["response"] as? [String: Any] ?? [:]
                #expect((exchange["http2"] as? [String: Any])?["stream"] != nil)
                #expect((exchange["request"] as? [String: Any])?["version"] as? String == "HTTP/2.0")
                #expect(response["status"] as? Int == wanted["status"] as? Int)
                #expect((response["body"] as? [String: Any])?["sha256"] as? String == wanted["body_sha256"] as? String)
                #expect(exchange["complete"] as? Bool == true)
            }
        }
    }
}
