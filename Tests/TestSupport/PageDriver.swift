import Foundation

/// The live view's browser driver (Tests/LiveViewBrowserTests/drive_page.py): headless chromium through
/// chromium-driver and selenium against the real `capture --ui`. It prints one JSON object per check and
/// `{"done": true}` at the end; the suites that run it expect each check by name.
public enum PageDriver {
    public struct Check: Sendable {
        public var name: String
        public var ok: Bool
        public var detail: String
        public var skipped: Bool
    }

    public struct Run: Sendable {
        public var checks: [Check]
        public var done: Bool
        public var status: Int32
        public var stderr: String
        public func missing(_ names: [String]) -> [String] { names.filter { name in !checks.contains { $0.name == name } } }
    }

    /// chromium, chromium-driver, python3 with selenium, and coreutils' timeout (Scripts/setup --test).
    public static let available: Bool = {
        guard TestEnvironment.hasProgram("chromium"), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout"),
              let probe = try? TestSupport.run("python3", ["-c", "import selenium"]) else { return false }
        return probe.status == 0
    }()

    /// Runs the driver with `extra` arguments in a fresh work folder, bounded by `seconds`: coreutils' timeout
    /// sends TERM (the driver then closes the browser and the servers it started), and KILL 10 s later.
    public static func run(_ extra: [String], seconds: Int) throws -> Run {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-liveview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let root = TestEnvironment.packageRoot
        let result = try TestSupport.run("/usr/bin/timeout", [
            "-k", "10", String(seconds), "python3", root.appendingPathComponent("Tests/LiveViewBrowserTests/drive_page.py").path,
            "--capture", TestEnvironment.executable("capture").path,
            "--fixtures", TestEnvironment.fixtures.path,
            "--work", work.path,
            "--screenshots", root.appendingPathComponent("docs/images").path,
            "--generator", root.appendingPathComponent("Scripts/fixtures/liveview-captures.py").path,
        ] + extra)
        var checks: [Check] = []
        var done = false
        for line in result.stdoutText.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if object["done"] as? Bool == true { done = true }
            guard let name = object["check"] as? String, let ok = object["ok"] as? Bool else { continue }
            checks.append(Check(name: name, ok: ok, detail: object["detail"] as? String ?? "",
                                skipped: object["skipped"] as? Bool ?? false))
        }
        return Run(checks: checks, done: done, status: result.status, stderr: String(result.stderrText.suffix(3000)))
    }
}
