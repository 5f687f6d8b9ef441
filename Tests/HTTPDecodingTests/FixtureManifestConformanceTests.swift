import Foundation
import TestSupport
import Testing

/// `capture -r F --http --json` over the project's own fixtures (Tests/Fixtures, real traffic plus reordered,
/// duplicated and relinked variants) against `manifest.json`, which records what the server really sent: every
/// exchange's method, URI, status and the sha256 of the decoded bodies must match, field by field.
private let manifestURL = TestEnvironment.fixtures.appendingPathComponent("manifest.json")

@Suite(.enabled(if: FileManager.default.fileExists(atPath: manifestURL.path),
                "needs Tests/Fixtures/manifest.json (Scripts/make-fixtures)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: TestEnvironment.executable("capture").path),
                "needs the capture binary: run swift build first"))
struct FixtureManifestConformanceTests {
    static var fixtures: [[String: Any]] { manifestFixtures(manifestURL) }

    /// The `fixtures` list of a manifest file (empty when it is missing or unreadable; the suites say so).
    static func manifestFixtures(_ url: URL) -> [[String: Any]] {
        guard let data = try? Data(contentsOf: url),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = object["fixtures"] as? [[String: Any]] else { return [] }
        return list
    }

    static let files: [String] = fixtures.compactMap { $0["file"] as? String }

    /// The fields compared, as one comparable value per exchange.
    struct Summary: Equatable, CustomStringConvertible {
        var client: String
        var server: String
        var method: String
        var uri: String
        var version: String
        var requestHeaders: [[String]]
        var requestBody: [String]  // size, sha256
        var status: Int
        var reason: String
        var responseHeaders: [[String]]
        var responseBody: [String]  // size, sha256
        var encoding: [String]
        var description: String {
            "\(client) \(method) \(uri) → \(status) req \(requestBody) resp \(responseBody) \(encoding)"
        }
    }

    static func body(_ object: Any?) -> [String] {
        let body = object as? [String: Any]
        return ["\(body?["size"] as? Int ?? -1)", body?["sha256"] as? String ?? "-"]
    }

    static func summary(_ exchange: [String: Any], trailersIntoHeaders: Bool) -> Summary {
        let request = exchange["request"] as? [String: Any] ?? [:]
        let response = exchange["response"] as? [String: Any] ?? [:]
        var responseHeaders = response["headers"] as? [[String]] ?? []
        if trailersIntoHeaders { responseHeaders += response["trailers"] as? [[String]] ?? [] }
        return Summary(client: exchange["client"] as? String ?? "-", server: exchange["server"] as? String ?? "-",
                       method: request["method"] as? String ?? "-", uri: request["uri"] as? String ?? "-",
                       version: request["version"] as? String ?? "-",
                       requestHeaders: request["headers"] as? [[String]] ?? [], requestBody: body(request["body"]),
                       status: response["status"] as? Int ?? -1, reason: response["reason"] as? String ?? "-",
                       responseHeaders: responseHeaders, responseBody: body(response["body"]),
                       encoding: (response["body"] as? [String: Any])?["encoding"] as? [String] ?? [])
    }

    @Test(arguments: files)
    func exchangesMatchTheManifest(file: String) throws {
        let fixture = try #require(Self.fixtures.first { $0["file"] as? String == file })
        let expected = (fixture["exchanges"] as? [[String: Any]] ?? []).map { Self.summary($0, trailersIntoHeaders: true) }
        let path = TestEnvironment.fixtures.appendingPathComponent(file).path
        let result = try run(TestEnvironment.executable("capture").path, ["-r", path, "--http", "--json"])
        #expect(result.status == 0, "\(file): \(result.stderrText)")
        var actual: [Summary] = []
        for line in result.stdoutText.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["complete"] as? Bool == true, "\(file): incomplete exchange \(line)")
            #expect((object["warnings"] as? [String])?.isEmpty == true, "\(file): warnings in \(line)")
            actual.append(Self.summary(object, trailersIntoHeaders: false))
        }
        // The manifest lists exchanges in the order the server answered; connections are compared one by one.
        let clients = Array(Set(expected.map(\.client) + actual.map(\.client))).sorted()
        for client in clients {
            let mine = actual.filter { $0.client == client }
            let theirs = expected.filter { $0.client == client }
            #expect(mine.count == theirs.count, "\(file) \(client): \(mine.count) exchanges, manifest has \(theirs.count)")
            for (got, want) in zip(mine, theirs) {
                #expect(got == want, "\(file): got \(got), manifest \(want)")
            }
        }
    }

    @Test(arguments: files)
    func interimResponsesAndHARForEveryFixture(file: String) throws {
        let path = TestEnvironment.fixtures.appendingPathComponent(file).path
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: har) }
        let result = try run(TestEnvironment.executable("capture").path,
                             ["-r", path, "--http", "-v", "--color", "never", "--har", har.path])
        #expect(result.status == 0, "\(file): \(result.stderrText)")
        #expect(!result.stdout.contains(0x1b), "\(file): escape bytes in --color never output")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: har)) as? [String: Any])
        let entries = try #require((object["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let fixture = try #require(Self.fixtures.first { $0["file"] as? String == file })
        let exchanges = fixture["exchanges"] as? [[String: Any]] ?? []
        #expect(entries.count == exchanges.count, "\(file): HAR entries")
        let statuses = entries.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }.sorted()
        #expect(statuses == exchanges.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }.sorted())
        // 100 Continue shows up in the verbose view before the final status.
        let interim = exchanges.flatMap { $0["interim"] as? [[String: Any]] ?? [] }.compactMap { $0["status"] as? Int }
        for status in interim { #expect(result.stdoutText.contains("  < \(status) "), "\(file): interim \(status) not shown") }
    }
}
