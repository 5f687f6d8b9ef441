import Foundation
import Testing
import TestSupport

/// Issue 36 (the Zeek/Suricata survey, bug 1): a 100 Continue was printed by `-v` but left no trace in `--json`,
/// where Zeek logs it as `info_code`. The record's response now lists its interim responses as sent; records
/// without any are unchanged (no `interim` member).
@Suite("--json lists interim (1xx) responses")
struct InterimResponseTests {
    @Test("curl's Expect: 100-continue upload: the 100 in response.interim, as tshark reads it; none elsewhere",
          .enabled(if: TestEnvironment.hasProgram("tshark"), "needs tshark, the oracle (Scripts/setup --test installs it)"))
    func continueIsListed() throws {
        let file = TestEnvironment.fixtures.appendingPathComponent("http-100-continue.pcap").path
        let result = try capture(["-r", file, "--http", "--json"])
        #expect(result.status == 0, "\(result.stderrText)")
        let records = try lines(result.stdoutText).map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let responses = records.compactMap { $0["response"] as? [String: Any] }
        let interim = responses.compactMap { $0["interim"] as? [[String: Any]] }
        let oracle = try run("tshark", ["-r", file, "-Y", "http.response.code < 200", "-T", "fields",
                                        "-e", "http.response.code", "-e", "http.response.phrase"])
        let seen = lines(oracle.stdoutText).map { $0.split(separator: "\t").map(String.init) }
        try #require(!seen.isEmpty, "tshark saw no interim response in \(file)")
        #expect(interim.flatMap { $0 }.map { ["\($0["status"] ?? "")", "\($0["reason"] ?? "")"] } == seen)
        let first = try #require(interim.first?.first)
        #expect(first["ts"] is Double && first["headers"] is [[String]])
        // The final status is still the final one, and the others carry no member at all.
        #expect(responses.filter { $0["interim"] != nil }.allSatisfy { ($0["status"] as? Int ?? 0) >= 200 })
        let plain = try capture(["-r", TestEnvironment.fixtures.appendingPathComponent("http-keepalive.pcap").path, "--http", "--json"])
        #expect(!plain.stdoutText.contains("\"interim\""))
    }
}
