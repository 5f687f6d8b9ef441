import Foundation
import TestSupport
import Testing

/// The `--http` options through the real binary, on the committed sample capture.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: TestEnvironment.executable("capture").path),
                "needs the capture binary: run swift build first"),
       .enabled(if: FileManager.default.fileExists(atPath: TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path),
                "needs Tests/Fixtures/http-sample.pcap"))
struct HTTPCommandLineTests {
    static let sample = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
    static var capture: String { TestEnvironment.executable("capture").path }

    func lines(_ arguments: [String], environment: [String: String]? = nil) throws -> [String] {
        let result = try run(Self.capture, ["-r", Self.sample, "--http"] + arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderrText)")
        return result.stdoutText.split(separator: "\n").map(String.init)
    }

    @Test func defaultViewHasOneLinePerExchange() throws {
        let output = try lines(["--utc"])
        #expect(output.count == 4)
        #expect(output[1].contains("GET shop.test/static/app.js → 200 OK"))
        #expect(output[1].hasSuffix("(gzip)"))
        #expect(output.allSatisfy { !$0.contains("\u{1B}") }, "no colour when standard output is a pipe")
    }

    @Test(arguments: [
        (["--status", "4xx"], ["/favicon.ico"]),
        (["--status", "200-299", "--method", "POST"], ["/api/items"]),
        (["--path", "/api/*"], ["/api/items?page=2&per_page=3", "/api/items"]),
        (["--path", "*.js,*.ico"], ["/static/app.js", "/favicon.ico"]),
        (["--host", "shop.*", "--status", "201"], ["/api/items"]),
        (["--host", "other.test"], []),
    ])
    func filters(arguments: [String], uris: [String]) throws {
        let output = try lines(arguments + ["--json"])
        let got = try output.map { line -> String in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return (object["request"] as? [String: Any])?["uri"] as? String ?? "-"
        }
        #expect(got == uris)
    }

    @Test func colourIsForcedOrRefused() throws {
        #expect(try lines(["--color", "always"]).allSatisfy { $0.contains("\u{1B}[") })
        #expect(try lines(["--color", "never"], environment: ["TERM": "xterm"]).allSatisfy { !$0.contains("\u{1B}") })
    }

    @Test(arguments: [
        (["--http", "--status", "abc"], "invalid --status"),
        (["--status", "404"], "add --http"),
        (["--har", "/tmp/x.har"], "add --http"),
        (["--http", "--body-limit", "-1"], "--body-limit"),
        (["--http", "-w", "-"], "-w"),
    ])
    func badUsageSaysWhatToDo(arguments: [String], message: String) throws {
        let result = try run(Self.capture, ["-r", Self.sample] + arguments)
        #expect(result.status == 64)
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
    }

    @Test func harToAnUnwritablePlaceFailsClearly() throws {
        let result = try run(Self.capture, ["-r", Self.sample, "--http", "--har", "/nonexistent-dir/x.har"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("cannot write /nonexistent-dir/x.har: No such file or directory"))
    }
}
