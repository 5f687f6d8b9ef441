import Testing
import TestSupport

/// The conditioner panel in a real browser against the real server (drive_page.py --live, in
/// Tests/LiveViewBrowserTests), one chromium for both parts:
/// - `capture -i IFACE --ui` on a veth whose peer is in a namespace the driver makes (w23-...), a server there: the
///   page's confirmation dialog, refused once (nothing changes, `tc qdisc show` byte-equal), then accepted (curl's
///   download from the namespace slows), the switch marked on the timeline, off and stopping the view restoring
///   `tc qdisc show` byte for byte;
/// - `capture --ui -- python3 CLIENT`, a download loop logging every read: rows appear while it runs; Slow Net
///   switched from the page once a download is under way brings the command's goodput to 32 kbit/s, Black Hole
///   silences it, off lets bytes through again, each switch marked on the timeline; every response the command read
///   is a row.
/// Root: namespaces, veth, tc and nftables.
@Suite("Live view's conditioner panel in chromium (interface and sandboxed command)",
       .enabled(if: TestEnvironment.isRoot, "needs root: a network namespace, a veth pair, tc and nftables"),
       .enabled(if: PageDriver.available && TestEnvironment.hasProgram("curl"),
                "needs chromium, chromium-driver, python3 selenium and curl (Scripts/setup --test)"))
struct LiveViewBrowserNamespaceTests {
    static let checks = [
        "interface: refused confirmation changes nothing", "interface: confirmed profile slows a download",
        "interface: off restores tc exactly", "interface: stopping the view restores tc exactly",
        "live rows while the command runs", "conditioner panel for the sandbox", "Slow Net from the page slows the command",
        "Black Hole from the page silences the command", "off from the page: bytes resume", "switches marked on the timeline",
        "every response the command read is a row",
    ]

    @Test("profiles switched from the page reach the interface (confirmed) and the command, measured by their clients")
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
