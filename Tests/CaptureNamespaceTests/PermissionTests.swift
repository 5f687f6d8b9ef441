import Foundation
import Testing
import TestSupport

/// Without capture rights, `capture -i` tells the user how to get them, naming the real binary.
@Suite(.enabled(if: TestEnvironment.isRoot && TestEnvironment.hasProgram("setpriv"),
                "needs root (to drop to an unprivileged user with setpriv)"))
struct PermissionTests {
    @Test func unprivilegedLiveCaptureExplainsSetcap() throws {
        let binary = TestEnvironment.executable("capture").resolvingSymlinksInPath().path
        let result = try run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary, "-i", "lo", "-c", "1"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("no permission to capture on lo"))
        #expect(result.stderrText.contains("sudo setcap cap_net_raw,cap_net_admin=eip \(binary)"))
        #expect(result.stdoutText.isEmpty)
    }
}
