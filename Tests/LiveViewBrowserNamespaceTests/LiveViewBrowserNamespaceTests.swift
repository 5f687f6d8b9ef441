import Testing
import TestSupport

/// The live view of a sandboxed command in a real browser (drive_page.py --live, in Tests/LiveViewBrowserTests):
/// `capture --ui -- sh -c LOOP`, the loop fetching a file from a loopback server with curl and logging each fetch's
/// code, bytes and time. Rows appear while it runs; Slow Net (or, on a kernel without netem, a rate-only profile)
/// and Black Hole, switched from the page's panel, show in the command's own log and as marks on the timeline;
/// every successful fetch is a row. Root: the sandbox is a network namespace with a veth and nftables.
@Suite("Live view of a sandboxed command in chromium",
       .enabled(if: TestEnvironment.isRoot, "needs root: the command's sandbox (network namespace, veth, nftables)"),
       .enabled(if: PageDriver.available && TestEnvironment.hasProgram("curl"),
                "needs chromium, chromium-driver, python3 selenium and curl (Scripts/setup --test)"))
struct LiveViewBrowserNamespaceTests {
    static let checks = [
        "live rows while the command runs", "conditioner panel for the sandbox", "Slow Net from the page slows the command",
        "Black Hole from the page silences the command", "switches marked on the timeline", "every fetch the command made is a row",
    ]

    @Test("rows appear while the command runs; profiles switched from the page reach the command")
    func liveAndConditioner() throws {
        let run = try PageDriver.run(["--live"], seconds: 90)
        for check in run.checks {
            print("\(check.skipped ? "skipped" : "measured"): \(check.name): \(check.detail)")
            #expect(check.ok, "\(check.name): \(check.detail)")
        }
        #expect(run.done, "the driver stopped early (exit \(run.status)): \(run.stderr)")
        #expect(run.missing(Self.checks).isEmpty, "checks not run: \(run.missing(Self.checks))")
    }
}
