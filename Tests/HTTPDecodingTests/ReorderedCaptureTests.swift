import Foundation
import TestSupport
import Testing

/// `capture -r F --http --json` over captures reordered the way real machines reorder them (Tests/Fixtures/robust,
/// made by Scripts/fixtures/robust.py from the project's own fixtures): interleaved directions, timestamps going
/// backwards, a SYN after data, duplicated and overlapping segments, two vantage points merged. Each must decode
/// exactly like the capture it came from: every field against what the server logged (robust/manifest.json).
private let robustManifestURL = TestEnvironment.fixtures.appendingPathComponent("robust/manifest.json")

@Suite(.enabled(if: FileManager.default.fileExists(atPath: robustManifestURL.path),
                "needs Tests/Fixtures/robust/manifest.json (Scripts/fixtures/robust.py)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: TestEnvironment.executable("capture").path),
                "needs the capture binary: run swift build first"))
struct ReorderedCaptureTests {
    static var fixtures: [[String: Any]] { FixtureManifestConformanceTests.manifestFixtures(robustManifestURL) }

    static let files: [String] = fixtures.compactMap { $0["file"] as? String }

    @Test(arguments: files)
    func decodesLikeTheOriginal(file: String) throws {
        let fixture = try #require(Self.fixtures.first { $0["file"] as? String == file })
        let expected = (fixture["exchanges"] as? [[String: Any]] ?? [])
            .map { FixtureManifestConformanceTests.summary($0, trailersIntoHeaders: true) }
        let path = TestEnvironment.fixtures.appendingPathComponent(file).path
        let result = try run(TestEnvironment.executable("capture").path, ["-r", path, "--http", "--json"])
        #expect(result.status == 0, "\(file): \(result.stderrText)")
        var actual: [FixtureManifestConformanceTests.Summary] = []
        for line in result.stdoutText.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["complete"] as? Bool == true, "\(file): incomplete exchange \(line)")
            #expect((object["warnings"] as? [String])?.isEmpty == true, "\(file): warnings in \(line)")
            // Durations are never negative, even when the capture's clock goes backwards.
            let timing = object["timing"] as? [String: Any] ?? [:]
            let timings = [timing["request_start"], timing["response_start"], timing["response_end"]]
                .compactMap { $0 as? Double }
            #expect(timings == timings.sorted(), "\(file): times go backwards within \(line)")
            actual.append(FixtureManifestConformanceTests.summary(object, trailersIntoHeaders: false))
        }
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
}
