import Foundation
import Testing
import TestSupport

/// `Scripts/install --bin-dir DIR PREFIX` and `Scripts/uninstall PREFIX` into a temporary prefix (root, as an
/// install to /usr/local is): the binaries, profiles, man pages and completions land where they belong, the
/// installed tools work from there (`capture --version`, `condition list` reading the installed profiles, the
/// demo's decoding of the bundled sample), and uninstalling leaves the prefix as it was, a file of someone
/// else's in a shared folder included.
@Suite("Install and uninstall", .serialized, .enabled(if: getuid() == 0, "installs files: run as root (Scripts/test does)"))
struct InstallNamespaceTests {
    static let root = TestEnvironment.packageRoot

    /// Every path under `folder`, relative, folders ending in "/".
    static func tree(_ folder: URL) -> [String] {
        let base = folder.resolvingSymlinksInPath().path + "/"
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isDirectoryKey]) else { return [] }
        return walker.compactMap { item -> String? in
            guard let url = item as? URL else { return nil }
            let relative = String(url.resolvingSymlinksInPath().path.dropFirst(base.count))
            return (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true ? relative + "/" : relative
        }.sorted()
    }

    @Test("install puts everything in place, the installed tools run from there, uninstall takes exactly it away")
    func installRunUninstall() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-install-\(UUID().uuidString)")
        // A folder install shares with others, holding someone else's page: it must stay.
        let shared = prefix.appendingPathComponent("share/man/man1")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        try Data("other".utf8).write(to: shared.appendingPathComponent("other.1"))
        defer { try? FileManager.default.removeItem(at: prefix) }
        let before = Self.tree(prefix)

        let bin = TestEnvironment.executable("capture").deletingLastPathComponent().path
        let install = try TestSupport.run(Self.root.appendingPathComponent("Scripts/install").path, ["--bin-dir", bin, prefix.path])
        #expect(install.status == 0, "install: \(install.stderrText)")

        let installed = Set(Self.tree(prefix))
        let profiles = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Profiles").path)
            .filter { $0.hasSuffix(".json") }
        var wanted = ["bin/capture", "bin/condition", "share/man/man1/capture.1", "share/man/man1/condition.1",
                      "share/bash-completion/completions/capture", "share/bash-completion/completions/condition",
                      "share/zsh/site-functions/_capture", "share/zsh/site-functions/_condition",
                      "share/fish/vendor_completions.d/capture.fish", "share/fish/vendor_completions.d/condition.fish",
                      "share/tapkit/installed"]
        wanted += profiles.map { "share/tapkit/profiles/\($0)" }
        #expect(wanted.filter { !installed.contains($0) } == [], "not installed")
        #expect(profiles.count >= 10)

        let capture = prefix.appendingPathComponent("bin/capture").path
        let condition = prefix.appendingPathComponent("bin/condition").path
        let version = try TestSupport.run(capture, ["--version"])
        #expect(version.status == 0)
        #expect(version.stdoutText == (try TestSupport.run(TestEnvironment.executable("capture").path, ["--version"])).stdoutText)

        // The installed profiles are the ones read: one is renamed in place, and `condition list` shows the new name
        // (the source tree's Profiles/ would show the old one). The environment names no profiles folder.
        let edge = prefix.appendingPathComponent("share/tapkit/profiles/edge.json")
        let text = try String(contentsOf: edge, encoding: .utf8)
        try text.replacingOccurrences(of: "\"name\": \"Edge\"", with: "\"name\": \"Installed Edge\"")
            .write(to: edge, atomically: false, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["TAPKIT_PROFILES_DIR"] = nil
        environment["XDG_CONFIG_HOME"] = prefix.appendingPathComponent("no-user-profiles").path
        let list = try TestSupport.run(condition, ["list"], environment: environment)
        #expect(list.status == 0, "condition list: \(list.stderrText)")
        #expect(list.stdoutText.contains("\nInstalled Edge "), "condition list did not read the installed profiles: \(list.stdoutText)")
        #expect(list.stdoutText.contains("\nSlow Net "))

        // The demo's decoding of the bundled sample, from the installed binary and from the build.
        let sample = Self.root.appendingPathComponent("Tests/Fixtures/http-sample.pcap").path
        let demo = try TestSupport.run(capture, ["-r", sample, "--http"])
        let built = try TestSupport.run(TestEnvironment.executable("capture").path, ["-r", sample, "--http"])
        #expect(demo.status == 0)
        #expect(demo.stdoutText == built.stdoutText && demo.stdoutText.contains("GET shop.test/api/items"))

        let uninstall = try TestSupport.run(Self.root.appendingPathComponent("Scripts/uninstall").path, [prefix.path])
        #expect(uninstall.status == 0, "uninstall: \(uninstall.stderrText)")
        #expect(Self.tree(prefix) == before, "left behind")
    }
}
