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

    /// `-Z nobody` as root: the capture opens the interface and its -w file as root, then runs as nobody (all four
    /// user and group ids, nobody's groups only), and still captures; an unknown user is refused.
    @Test func dashZDropsRootOnceTheCaptureIsOpen() throws {
        let namespace = "tkz-\(String(UInt32.random(in: 0..<UInt32.max), radix: 16))"
        #expect(try run("ip", ["netns", "add", namespace]).status == 0)
        defer { _ = try? run("ip", ["netns", "del", namespace]) }
        #expect(try run("ip", ["-n", namespace, "link", "set", "lo", "up"]).status == 0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tkz-\(UUID().uuidString).pcap").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let capture = try ReplayTests.BackgroundCapture(namespace: namespace,
                                                        arguments: ["-i", "lo", "-Z", "nobody", "-c", "4", "-w", file, "icmp"])
        try capture.waitUntilListening()
        // The drop follows the open: wait for it, then read the kernel's view of the process.
        var status = ""
        for _ in 0..<50 {
            status = (try? String(contentsOfFile: "/proc/\(capture.process.processIdentifier)/status", encoding: .utf8)) ?? ""
            if status.contains("Uid:\t65534") { break }
            usleep(100_000)
        }
        let fields = Dictionary(status.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: ":", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)) : nil
        }, uniquingKeysWith: { first, _ in first })
        #expect(fields["Uid"] == "65534\t65534\t65534\t65534", "\(status)")
        #expect(fields["Gid"] == "65534\t65534\t65534\t65534", "\(status)")
        #expect(fields["Groups"] == "65534", "root's groups replaced by nobody's own (initgroups, as tcpdump does): \(status)")
        #expect(try run("ip", ["netns", "exec", namespace, "ping", "-c", "2", "-i", "0.2", "127.0.0.1"]).status == 0)
        capture.process.waitUntilExit()
        #expect(capture.process.terminationStatus == 0, "\(capture.stderr)")
        let read = try run(TestEnvironment.executable("capture").path, ["-r", file, "-n"])
        #expect(read.stdoutText.split(separator: "\n").filter { $0.contains("ICMP echo") }.count == 4, "\(read.stdoutText)")

        let unknown = try run("ip", ["netns", "exec", namespace, TestEnvironment.executable("capture").path,
                                     "-i", "lo", "-Z", "tkz-no-such-user", "-c", "1"])
        #expect(unknown.status != 0)
        #expect(unknown.stderrText.contains("-Z tkz-no-such-user: no such user."), "\(unknown.stderrText)")
    }
}
