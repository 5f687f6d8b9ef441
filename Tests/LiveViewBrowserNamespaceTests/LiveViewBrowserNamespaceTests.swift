import Foundation
import Testing
import TestSupport

/// The live view of a sandboxed command in a real browser (drive_page.py --live, in Tests/LiveViewBrowserTests):
/// `capture --ui -- sh -c LOOP`, the loop fetching a 3 KB file from a loopback server every 0.2 s and logging
/// each fetch's code, bytes and time. Rows appear while it runs; Slow Net and then Black Hole, switched from the
/// page's panel, show in the command's own log (Slow Net's 32 kbit/s, Black Hole's silence) and as marks on the
/// timeline; every successful fetch is a row. Root: the sandbox is a network namespace with a veth and nftables.
@Suite("Live view of a sandboxed command in chromium",
       .enabled(if: TestEnvironment.isRoot, "needs root: the command's sandbox (network namespace, veth, nftables)"),
       .enabled(if: LiveViewBrowserNamespace.available,
                "needs chromium, chromium-driver, python3 selenium and curl (Scripts/setup --test)"))
struct LiveViewBrowserNamespaceTests {
    static let checks = [
        "live rows while the command runs", "conditioner panel for the sandbox", "Slow Net from the page slows the command",
        "Black Hole from the page silences the command", "switches marked on the timeline", "every fetch the command made is a row",
    ]

    @Test("rows appear while the command runs; Slow Net and Black Hole switched from the page reach the command")
    func liveAndConditioner() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-liveview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let root = TestEnvironment.packageRoot
        let result = try run("/usr/bin/timeout", [
            "-k", "10", "90", "python3", root.appendingPathComponent("Tests/LiveViewBrowserTests/drive_page.py").path,
            "--live", "--capture", TestEnvironment.executable("capture").path,
            "--fixtures", TestEnvironment.fixtures.path, "--work", work.path,
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
            if object["skipped"] as? Bool == true { print("skipped: \(check): \(object["detail"] as? String ?? "")") }
            print("measured: \(check): \(object["detail"] as? String ?? "")")
            #expect(ok, "\(check): \(object["detail"] as? String ?? "")")
        }
        #expect(done, "the driver stopped early (exit \(result.status)): \(result.stderrText.suffix(3000))")
        #expect(Set(Self.checks).subtracting(seen).isEmpty, "checks not run: \(Set(Self.checks).subtracting(seen).sorted())")
    }
}

enum LiveViewBrowserNamespace {
    static let available: Bool = {
        guard TestEnvironment.hasProgram("chromium"), TestEnvironment.hasProgram("curl"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
              let probe = try? run("python3", ["-c", "import selenium"]) else { return false }
        return probe.status == 0
    }()
}
