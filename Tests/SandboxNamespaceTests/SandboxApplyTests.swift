import Foundation
import LinkConditioner
import Sandbox
import Testing
import TestSupport

@Suite("condition apply --sandbox and condition sandboxes", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables"))
struct SandboxApplyTests {
    @Test("apply --sandbox switches a running sandbox's rates in place on both veth ends, and sandboxes shows it")
    func switchRunningSandbox() throws {
        let profiles = try SandboxHarness.profileDirectory([("Sandbox Before", 2000, 500), ("Sandbox After", 6000, 1500)])
        defer { try? FileManager.default.removeItem(at: profiles) }
        let run = try SandboxHarness.RunningCondition(["run", "Sandbox Before", "--profiles", profiles.path,
                                                       "--", "sleep", "30"])
        defer { kill(run.pid, SIGKILL) }
        let record = try #require(run.waitForRecord())
        let host = record.identity.hostInterface, namespace = record.identity.namespace

        func rates() throws -> (down: String, up: String) {
            let down = try TestSupport.run("tc", ["class", "show", "dev", host]).stdoutText
            let up = try TestSupport.run("tc", ["-n", namespace, "class", "show", "dev", "eth0"]).stdoutText
            return (down, up)
        }
        let before = try rates()
        #expect(before.down.contains("rate 2Mbit"), "\(before.down)")
        #expect(before.up.contains("rate 500Kbit"), "\(before.up)")

        let applied = try TestSupport.run(SandboxHarness.condition, ["apply", "Sandbox After", "--profiles", profiles.path,
                                                                      "--sandbox", record.identity.id])
        #expect(applied.status == 0, "\(applied.stderrText)")
        let after = try rates()
        #expect(after.down.contains("rate 6Mbit"), "\(after.down)")
        #expect(after.up.contains("rate 1500Kbit"), "\(after.up)")
        let listing = try TestSupport.run(SandboxHarness.condition, ["sandboxes", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: listing.stdout) as? [[String: Any]])
        let entry = try #require(entries.first { $0["id"] as? String == record.identity.id })
        #expect(entry["profile"] as? String == "Sandbox After")
        #expect(entry["interface"] as? String == host)
        #expect(entry["command"] as? [String] == ["sleep", "30"])

        kill(run.pid, SIGTERM)
        let result = run.finish(timeout: 15)
        #expect(result.status == 128 + SIGTERM, "the forwarded SIGTERM ended sleep: \(result.stderr)")
        #expect(try SandboxHarness.leftovers(of: record.identity.id) == [])
    }

    @Test("apply --sandbox with an unknown id says so")
    func unknownSandbox() throws {
        let result = try TestSupport.run(SandboxHarness.condition, ["apply", "3G", "--sandbox", "abc123"])
        #expect(result.status != 0)
        #expect(result.stderrText.contains("no running sandbox 'abc123'"), "\(result.stderrText)")
    }
}

@Suite("condition import and export")
struct NLCCommandTests {
    @Test("import writes profile files that list and export read back into the same plist")
    func importExportRoundTrip() throws {
        let fixture = TestEnvironment.fixtures.appendingPathComponent("nlc/prefPaneSimulate.plist")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nlc-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let imported = try run(SandboxHarness.condition, ["import", fixture.path, "--to", directory.path])
        #expect(imported.status == 0, "\(imported.stderrText)")
        let originals = try NLCPropertyList.read(contentsOf: fixture)
        for profile in originals {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(NLCConversion.fileName(for: profile.name)).path))
        }
        // Importing again without --force refuses and changes nothing.
        let again = try run(SandboxHarness.condition, ["import", fixture.path, "--to", directory.path])
        #expect(again.status != 0)
        #expect(again.stderrText.contains("--force"))

        let output = directory.appendingPathComponent("exported.plist")
        let exported = try run(SandboxHarness.condition, ["export"] + originals.map(\.name)
                               + ["--nlc", "--profiles", directory.path, "-o", output.path])
        #expect(exported.status == 0, "\(exported.stderrText)")
        #expect(try NLCPropertyList.read(contentsOf: output) == originals)
    }

    @Test("export needs --nlc; import of a bad file names it", arguments: [
        (["export", "3G"], "--nlc"),
        (["import", "/nonexistent/nlc.plist"], "/nonexistent/nlc.plist"),
    ])
    func badInvocations(arguments: [String], expected: String) throws {
        let result = try run(SandboxHarness.condition, arguments)
        #expect(result.status != 0)
        #expect(result.stderrText.contains(expected), "\(result.stderrText)")
    }
}
