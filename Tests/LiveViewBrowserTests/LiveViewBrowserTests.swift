import Testing
import TestSupport

/// The live view's page in a real browser: headless chromium, driven through chromium-driver by selenium
/// (drive_page.py beside this file), against the real `capture -r FILE --ui`. The page's rows, filters, JSON tree,
/// image preview, HAR download, copy as curl and script safety are checked against independent oracles
/// (`--http --json`, `--har`, the bodies' own bytes, the generator's manifest), and 100,000 generated exchanges
/// must filter and scroll within a second. The run saves the README's screenshots (docs/images/liveview-*.png).
///
/// One test, one browser: starting chromium costs about a second, so every check shares it; the driver reports
/// each check by name and this suite expects all of them.
@Suite("Live view page in chromium",
       .enabled(if: PageDriver.available, "needs chromium, chromium-driver and python3 selenium (Scripts/setup --test)"))
struct LiveViewBrowserTests {
    static let checks = [
        "list http-sample", "filter", "json tree", "har download", "copy as curl", "pause and clear",
        "list tls13-h2 (h2, TLS)", "tls facts", "list h3-resume (h3)", "quic facts", "websocket messages", "image preview", "markup runs nothing", "svg runs nothing",
        "copy as curl runs nothing", "scale load",
        "scale filter and scroll", "no page errors",
    ]

    @Test("the page lists, filters and shows exchanges as --json and --har have them, and scales to 100,000")
    func page() throws {
        let run = try PageDriver.run([], seconds: 180)
        for check in run.checks {
            print("\(check.skipped ? "skipped" : "measured"): \(check.name): \(check.detail)")
            #expect(check.ok, "\(check.name): \(check.detail)")
        }
        #expect(run.done, "the driver stopped early (exit \(run.status)): \(run.stderr)")
        #expect(run.missing(Self.checks).isEmpty, "checks not run: \(run.missing(Self.checks))")
    }
}
