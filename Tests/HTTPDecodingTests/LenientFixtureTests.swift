import Foundation
import TestSupport
import Testing

/// `capture -r F --http --json` over real captures of odd start lines and CONNECT tunnels (Tests/Fixtures/lenient,
/// made by Scripts/fixtures/make-lenient.sh: raw-socket requests and curl against the fixture server, which reads
/// start lines leniently, answers odd ones in kind and acts as a CONNECT proxy). Every exchange is compared with
/// what the server logged; each oddity must be named in a warning; tunnel byte counts and the bytes a client sent
/// after a refused CONNECT must match the server's counts.
private let lenientManifestURL = TestEnvironment.fixtures.appendingPathComponent("lenient/manifest.json")

@Suite(.enabled(if: FileManager.default.fileExists(atPath: lenientManifestURL.path),
                "needs Tests/Fixtures/lenient/manifest.json (Scripts/fixtures/make-lenient.sh)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: TestEnvironment.executable("capture").path),
                "needs the capture binary: run swift build first"))
struct LenientFixtureTests {
    static var captures: [String: [String: Any]] {
        guard let data = try? Data(contentsOf: lenientManifestURL),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let captures = object["captures"] as? [String: [String: Any]] else { return [:] }
        return captures
    }

    static let files: [String] = captures.keys.sorted()

    /// The warning each odd line must carry, by what the server read.
    static func expectedAnomalies(method: String, uri: String, version: String, status: String,
                                  startLine: String) -> [String] {
        var notes: [String] = []
        if startLine.contains("\t") || startLine.contains("  ") { notes.append("extra whitespace in the request line") }
        if version == "HTTP/0.9" { notes += ["HTTP/0.9 request (no version)", "HTTP/0.9 response (no status line)"] }
        if version.hasPrefix("http/") { notes.append("version not in upper case (\"\(version)\")") }
        if version == "HTTP/1." { notes.append("truncated version \"HTTP/1.\"") }
        if uri.isEmpty { notes.append("request line without a target") }
        if uri.contains(" ") { notes.append("spaces inside the request target") }
        if let code = Int(status) {
            if status.count != 3 { notes.append("status code \"\(status)\" is not three digits") }
            else if !(100...599).contains(code) { notes.append("status code \(code) outside 100-599") }
        } else {
            notes.append("non-numeric status code \"\(status)\"")
        }
        return notes
    }

    @Test(arguments: files)
    func exchangesMatchTheServersLog(file: String) throws {
        let capture = try #require(Self.captures[file])
        let logged = capture["exchanges"] as? [[String: Any]] ?? []
        let path = TestEnvironment.fixtures.appendingPathComponent("lenient/\(file)").path
        let result = try run(TestEnvironment.executable("capture").path, ["-r", path, "--http", "--json"])
        #expect(result.status == 0, "\(file): \(result.stderrText)")
        let decoded = try result.stdoutText.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(decoded.count == logged.count, "\(file): \(decoded.count) exchanges, the server logged \(logged.count)")
        for (got, want) in zip(decoded, logged) {
            let request = got["request"] as? [String: Any] ?? [:]
            let response = got["response"] as? [String: Any] ?? [:]
            let wantRequest = want["request"] as? [String: Any] ?? [:]
            let wantResponse = want["response"] as? [String: Any] ?? [:]
            let method = wantRequest["method"] as? String ?? "?", uri = wantRequest["uri"] as? String ?? "?"
            let version = wantRequest["version"] as? String ?? "?"
            let what = "\(file): \(method) \(uri)"
            #expect(got["client"] as? String == want["client"] as? String, "\(what): client")
            #expect(request["method"] as? String == method, "\(what): method")
            #expect(request["uri"] as? String == uri, "\(what): target")
            #expect(request["version"] as? String == version, "\(what): version")
            // Statuses as sent: a number only when the code was one ("2XX" has none), the code's text always;
            // an HTTP/0.9 answer has no status line, so neither (the server logs its own 200 for it).
            let status = wantResponse["status"].map { "\($0)" } ?? "?"
            if wantResponse["version"] as? String == "HTTP/0.9" {
                #expect(response["status"] is NSNull, "\(what): HTTP/0.9 status")
                #expect(response["status_text"] as? String == "", "\(what): HTTP/0.9 status text")
                #expect(response["version"] as? String == "HTTP/0.9", "\(what): HTTP/0.9 version")
            } else {
                #expect(response["status"] as? Int == Int(status), "\(what): status \(status)")
                if Int(status) == nil { #expect(response["status"] is NSNull, "\(what): status \(status)") }
                #expect(response["status_text"] as? String == status, "\(what): status text \(status)")
                #expect(response["reason"] as? String == wantResponse["reason"] as? String, "\(what): reason")
            }
            if let body = wantResponse["body"] as? [String: Any], wantResponse["framing"] as? String != "tunnel" {
                let gotBody = response["body"] as? [String: Any] ?? [:]
                #expect(gotBody["sha256"] as? String == body["sha256"] as? String, "\(what): response body")
                #expect(gotBody["size"] as? Int == body["size"] as? Int, "\(what): response body size")
            }
            #expect(got["complete"] as? Bool == true, "\(what): incomplete")
            let warnings = got["warnings"] as? [String] ?? []
            let expected = Self.expectedAnomalies(method: method, uri: uri, version: version, status: status,
                                                  startLine: wantRequest["start_line"] as? String ?? "")
            for note in expected {
                #expect(warnings.contains { $0.hasPrefix(note) }, "\(what): no warning \"\(note)\" in \(warnings)")
            }
            if expected.isEmpty { #expect(warnings.isEmpty, "\(what): unexpected warnings \(warnings)") }
        }

        // What the server counted beyond the exchanges: tunnels, and bytes a client sent after a refusal.
        var notes: [String] = []
        for entry in logged {
            let response = entry["response"] as? [String: Any] ?? [:]
            if let tunnel = entry["tunnel"] as? [String: Any] {
                // The fixture's tls.inner.test tunnel carries TLS (openssl s_server behind the proxy).
                let request = entry["request"] as? [String: Any] ?? [:]
                let tls = (request["uri"] as? String)?.hasPrefix("tls.inner.test:") == true
                notes.append("CONNECT tunnel closed: \(tunnel["client_bytes"] as? Int ?? -1) bytes client→server, "
                             + "\(tunnel["server_bytes"] as? Int ?? -1) bytes server→client"
                             + (tls ? ", TLS inside to tls.inner.test" : ""))
            }
            if let after = entry["after_refusal"] as? [String: Any] {
                #expect(after["first_byte"] as? Int == 0x16, "\(file): the fixture's client sends a ClientHello")
                notes.append("after its CONNECT was refused (\(response["status"] ?? "?") \(response["reason"] ?? "?")), "
                             + "the client sent \(after["size"] as? Int ?? -1) bytes that are not HTTP "
                             + "(a TLS ClientHello for denied.test, the tunnel it asked for); shown as opaque bytes, not decoded")
            }
        }
        let warningLines = result.stderrText.split(separator: "\n").filter { $0.contains(" ! ") }
        #expect(warningLines.count == notes.count, "\(file): warnings \(warningLines), expected \(notes)")
        for note in notes {
            #expect(warningLines.contains { $0.hasSuffix(note) }, "\(file): no warning \"\(note)\" in \(warningLines)")
        }
    }

    /// TLS inside an accepted tunnel is labelled like any TLS connection: the server name and ALPN list equal what
    /// tshark reads from the same ClientHello.
    @Test func tlsInsideATunnelIsLabelled() throws {
        let path = lenientManifestURL.deletingLastPathComponent().appendingPathComponent("connect-accepted-tls.pcap").path
        let result = try run(TestEnvironment.executable("capture").path, ["-r", path, "--http"])
        #expect(result.status == 0, "\(result.stderrText)")
        guard TestEnvironment.hasProgram("tshark") else {
            print("skipped the tshark comparison: tshark is not installed (Scripts/setup --test)")
            return
        }
        let fields = try run("tshark", ["-r", path, "-Y", "tls.handshake.type == 1", "-T", "fields", "-E", "separator=|",
                                        "-e", "tls.handshake.extensions_server_name",
                                        "-e", "tls.handshake.extensions_alpn_str"])
        let parts = fields.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        try #require(parts.count == 2, "tshark: \(fields.stdoutText)")
        let alpn = parts[1].split(separator: ",").joined(separator: ", ")
        let line = try #require(result.stdoutText.split(separator: "\n").first { $0.contains(" TLS ") }, "\(result.stdoutText)")
        #expect(line.contains("TLS \(parts[0])  ALPN \(alpn)"), "\(line)")
        #expect(result.stdoutText.contains("CONNECT \(parts[0]):443 → 200"), "\(result.stdoutText)")
    }
}
