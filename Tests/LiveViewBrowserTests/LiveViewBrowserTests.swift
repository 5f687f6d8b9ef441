import Foundation
import Testing
import TestSupport

/// The live view's page in a real browser: headless chromium, driven through chromium-driver by selenium
/// (drive_page.py beside this file), against the real `capture -r FILE --ui`. The page's rows, filters, JSON tree,
/// image preview, HAR download and script safety are checked against independent oracles (`--http --json`,
/// `--har`, the bodies' own bytes, `--status`), and 100,000 generated exchanges must filter and scroll within a
/// second. The run saves the README's screenshots (docs/images/liveview-*.png).
///
/// One test, one browser: starting chromium costs about a second, so every check shares it; the driver reports
/// each check by name and this suite expects all of them.
@Suite("Live view page in chromium",
       .enabled(if: LiveViewBrowser.available, "needs chromium, chromium-driver and python3 selenium (Scripts/setup --test)"))
struct LiveViewBrowserTests {
    static let checks = [
        "list http-sample", "filter", "json tree", "har download", "list tls13-h2 (h2, TLS)", "tls facts",
        "copy as curl", "pause and clear", "image preview", "markup runs nothing", "scale load", "scale filter and scroll", "no page errors",
    ]

    @Test("the page lists, filters and shows exchanges as --json and --har have them, and scales to 100,000")
    func page() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-liveview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let root = TestEnvironment.packageRoot
        // coreutils timeout bounds the run even if the driver hangs: TERM (the driver closes the browser and the
        // servers it started), then KILL 10 s later.
        let result = try run("/usr/bin/timeout", [
            "-k", "10", "180", "python3", root.appendingPathComponent("Tests/LiveViewBrowserTests/drive_page.py").path,
            "--capture", TestEnvironment.executable("capture").path,
            "--fixtures", TestEnvironment.fixtures.path,
            "--work", work.path,
            "--screenshots", root.appendingPathComponent("docs/images").path,
            "--generator", root.appendingPathComponent("Scripts/fixtures/liveview-captures.py").path,
        ])
        var seen: Set<String> = []
        var done = false
        for line in result.stdoutText.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if object["done"] as? Bool == true { done = true }
            guard let check = object["check"] as? String, let ok = object["ok"] as? Bool else { continue }
            seen.insert(check)
            print("measured: \(check): \(object["detail"] as? String ?? "")")
            if object["skipped"] as? Bool == true { print("skipped: \(check): \(object["detail"] as? String ?? "")") }
            #expect(ok, "\(check): \(object["detail"] as? String ?? "")")
        }
        #expect(done, "the driver stopped early (exit \(result.status)): \(result.stderrText.suffix(3000))")
        #expect(Set(Self.checks).subtracting(seen).isEmpty, "checks not run: \(Set(Self.checks).subtracting(seen).sorted())")
    }
}

enum LiveViewBrowser {
    static let available: Bool = {
        guard TestEnvironment.hasProgram("chromium"), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout"),
              let probe = try? run("python3", ["-c", "import selenium"]) else { return false }
        return probe.status == 0
    }()
}
