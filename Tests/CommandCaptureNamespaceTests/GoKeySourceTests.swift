import Foundation
import SystemSupport
import Testing
import TestSupport

/// The Go key source end to end (root): a Go 1.19 net/http client that sets no KeyLogWriter (ten GETs over up to
/// six connections at once, then a JSON POST), built plain and with `-ldflags="-s -w"`, run by `sh -c` (so its
/// binary is found from the exec event) under `capture --http --json --`: every exchange nginx logged is decrypted
/// and right, live equals `capture -r` of tcpdump's capture of the same run with the key log the probe filled,
/// and no uprobe event or tracefs instance of ours remains, also after `kill -9` of capture.
@Suite("Go key source: a Go client without a key log, decrypted from writeKeyLog", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: namespaces, live capture, uprobes"),
       .enabled(if: ["nginx", "tcpdump", "openssl", "python3", "go"].allSatisfy(TestEnvironment.hasProgram),
                "needs nginx, tcpdump, openssl, python3 and go (Scripts/setup --test)"))
struct GoKeySourceTests {
    static let runs = 2
    static let tracefs = Tracefs(root: Tracefs.standardMount)

    /// Our uprobe events and instances present now (any sandbox's).
    static func ours() -> [String] {
        let events = ((try? tracefs.read(tracefs.root + "/uprobe_events")) ?? "").split(separator: "\n")
            .filter { $0.contains("tapkit_") }.map(String.init)
        let instances = ((try? FileManager.default.contentsOfDirectory(atPath: tracefs.root + "/instances")) ?? [])
            .filter { $0.hasPrefix("tapkit-") }
        return events + instances
    }

    @Test("every exchange right, live equals offline, nothing left", arguments: ["go-uprobe", "go-uprobe-stripped"])
    func client(_ name: String) throws {
        let lab = try RealClientLab()
        defer { lab.stop() }
        let before = Self.ours()
        var right = 0
        for run in 1...Self.runs {
            let client = RealClientLab.Client(name: name, program: "go")
            let verdict = try RealClientRun(lab: lab, client: client, mode: "capture", profiles: lab.directory, run: run).verdict()
            #expect(verdict.exchangesLogged == 11, "\(name) run \(run): nginx logged \(verdict.exchangesLogged)")
            #expect(verdict.problems.isEmpty, "\(name) run \(run): \(verdict.problems.joined(separator: "\n"))")
            if verdict.problems.isEmpty { right += 1 }
            #expect(Self.ours() == before, "left in tracefs after run \(run): \(Self.ours())")
        }
        print("matrix: \(name): capture \(right)/\(Self.runs)")
    }

    @Test("kill -9 of capture while its Go command runs: the watchdog removes the probe too")
    func killed() throws {
        let lab = try RealClientLab()
        defer { lab.stop() }
        let command = ["sh", "-c", "\(lab.directory.path)/goclient-nokeys \(lab.port); sleep 30"]
        let capture = try BackgroundCommandCapture(["--http", "--"] + command)
        let record = try #require(CommandCaptureHarness.record(ownedBy: capture.pid), "no sandbox: \(capture.stderrSoFar)")
        let deadline = Date().addingTimeInterval(20)
        while !capture.stderrSoFar.contains("Go key source: ") && Date() < deadline { usleep(50_000) }
        #expect(capture.stderrSoFar.contains("(go1.19"), "\(capture.stderrSoFar)")
        #expect(!Self.ours().isEmpty, "no probe while the command runs")
        kill(capture.pid, SIGKILL)
        _ = capture.finish(timeout: 5)
        #expect(try CommandCaptureHarness.waitUntilGone(record.identity.id, timeout: 5) == [])
        #expect(Self.ours().filter { $0.contains(record.identity.id) } == [], "\(Self.ours())")
    }
}
