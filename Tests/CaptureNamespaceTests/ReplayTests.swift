import Foundation
import Testing
import TestSupport

/// Live capture on a real interface: two network namespaces joined by a veth pair (unique names per run),
/// `capture -i` on one end while `tcpreplay` sends a fixture from the other.
@Suite(.enabled(if: TestEnvironment.isRoot, "needs root: creates network namespaces and a veth pair"),
       .enabled(if: TestEnvironment.hasProgram("tcpreplay") && TestEnvironment.hasProgram("ip"), "needs tcpreplay and ip"),
       .enabled(if: TestEnvironment.publicFixtures != nil, "needs ../shared/fixtures/public"),
       .serialized)
struct ReplayTests {
    static let binary = TestEnvironment.executable("capture").path

    /// A veth pair between two fresh namespaces, removed when the test ends.
    final class VethLab {
        let suffix = String(UInt32.random(in: 0..<UInt32.max), radix: 16)
        var captureNamespace: String { "tkcap-a-\(suffix)" }
        var replayNamespace: String { "tkcap-b-\(suffix)" }
        var captureInterface: String { "tkca\(suffix)" }
        var replayInterface: String { "tkcb\(suffix)" }

        init() throws {
            try ip(["netns", "add", captureNamespace])
            try ip(["netns", "add", replayNamespace])
            for namespace in [captureNamespace, replayNamespace] {
                // No IPv6 autoconfiguration chatter on the link: only replayed packets should cross it.
                try run("ip", ["netns", "exec", namespace, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"])
                try run("ip", ["netns", "exec", namespace, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"])
            }
            try ip(["link", "add", captureInterface, "netns", captureNamespace, "type", "veth",
                    "peer", "name", replayInterface, "netns", replayNamespace])
            try ip(["-n", captureNamespace, "link", "set", captureInterface, "up"])
            try ip(["-n", replayNamespace, "link", "set", replayInterface, "up"])
        }

        deinit {
            _ = try? run("ip", ["netns", "del", captureNamespace])
            _ = try? run("ip", ["netns", "del", replayNamespace])
        }

        func ip(_ arguments: [String]) throws {
            let result = try run("ip", arguments)
            if result.status != 0 { throw LabError(message: "ip \(arguments.joined(separator: " ")): \(result.stderrText)") }
        }
    }

    struct LabError: Error, CustomStringConvertible { var message: String; var description: String { message } }

    /// A `capture` process running in the background with its output in files.
    final class BackgroundCapture {
        let process = Process()
        let stdoutPath = FileManager.default.temporaryDirectory.appendingPathComponent("tk-live-\(UUID().uuidString).out").path
        let stderrPath = FileManager.default.temporaryDirectory.appendingPathComponent("tk-live-\(UUID().uuidString).err").path

        init(namespace: String, arguments: [String]) throws {
            FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            FileManager.default.createFile(atPath: stderrPath, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["ip", "netns", "exec", namespace, ReplayTests.binary] + arguments
            process.environment = ["TZ": "UTC", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin"]
            process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
            process.standardError = FileHandle(forWritingAtPath: stderrPath)
            try process.run()
        }

        var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

        /// Waits until capture says it is listening (the handle is active), up to 10 s.
        func waitUntilListening() throws {
            for _ in 0..<100 where !stderr.contains("listening on") {
                if !process.isRunning { throw LabError(message: "capture exited early: \(stderr)") }
                usleep(100_000)
            }
        }

        /// Standard output's lines once there are at least `count`, or whatever there is after `seconds`.
        func lines(atLeast count: Int, within seconds: Int) -> [String] {
            var seen: [String] = []
            for _ in 0..<(seconds * 10) where seen.count < count {
                usleep(100_000)
                seen = stdout.split(separator: "\n").map(String.init)
            }
            return seen
        }

        /// Ctrl-C, then wait for a clean exit.
        func interrupt() -> Int32 {
            process.interrupt()
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// SIGTERM, then wait for a clean exit.
        func terminate() -> Int32 {
            process.terminate()
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit {
            if process.isRunning { process.terminate() }
            try? FileManager.default.removeItem(atPath: stdoutPath)
            try? FileManager.default.removeItem(atPath: stderrPath)
        }
    }

    func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test(arguments: ["zeek_http_get.pcap", "pcap2har_fhs.pcap", "zeek_http-vlan-0.pcap"])
    func everyReplayedPacketIsCaptured(fixture: String) throws {
        let fixturePath = TestEnvironment.publicFixtures!.appendingPathComponent(fixture).path
        let filter = ["tcp", "or", "udp", "or", "(vlan", "and", "tcp)"]
        let expected = lines(try run(Self.binary, ["-t", "-r", fixturePath] + filter).stdoutText)
        try #require(!expected.isEmpty)

        let lab = try VethLab()
        let written = FileManager.default.temporaryDirectory.appendingPathComponent("tk-live-\(lab.suffix).pcap").path
        defer { try? FileManager.default.removeItem(atPath: written) }
        let printer = try BackgroundCapture(namespace: lab.captureNamespace, arguments: ["-t", "-i", lab.captureInterface] + filter)
        let writer = try BackgroundCapture(namespace: lab.captureNamespace,
                                           arguments: ["-i", lab.captureInterface, "-B", "4096", "-w", written] + filter)
        // A third capture keeps only 80 bytes of each packet: every packet still arrives, marked as cut.
        let short = written + ".s80"
        defer { try? FileManager.default.removeItem(atPath: short) }
        let shortWriter = try BackgroundCapture(namespace: lab.captureNamespace,
                                                arguments: ["-i", lab.captureInterface, "-s", "80", "-w", short] + filter)
        try printer.waitUntilListening()
        try writer.waitUntilListening()
        try shortWriter.waitUntilListening()

        let replay = try run("ip", ["netns", "exec", lab.replayNamespace, "tcpreplay", "-q", "--pps", "2000",
                                    "-i", lab.replayInterface, fixturePath])
        #expect(replay.status == 0, "tcpreplay: \(replay.stderrText)")
        usleep(700_000)  // let the last packets reach the capture thread before stopping
        #expect(printer.interrupt() == 0)
        #expect(writer.interrupt() == 0)
        #expect(shortWriter.interrupt() == 0)
        let shortLines = try run(Self.binary, ["-t", "-r", short])
        #expect(lines(shortLines.stdoutText).count == expected.count)
        #expect(shortLines.stdoutText == (try run("tcpdump", ["-n", "-t", "-r", short])).stdoutText)
        let shortJSON = try run(Self.binary, ["--json", "-r", short])
        var cut = 0
        for line in lines(shortJSON.stdoutText) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let captured = try #require(object["captured_length"] as? Int)
            let original = try #require(object["original_length"] as? Int)
            #expect(captured == min(original, 80))
            #expect(object["truncated"] as? Bool == (original > 80))
            if original > 80 { cut += 1 }
        }
        #expect(cut > 0)

        // The printing capture saw every replayed packet, in order, decoded the same as offline.
        #expect(lines(printer.stdout) == expected)
        #expect(printer.stderr.contains("\(expected.count) packets captured"), "\(printer.stderr)")
        #expect(printer.stderr.contains("0 packets dropped by kernel"))
        // What -w wrote reads back to the same lines.
        let reread = try run(Self.binary, ["-t", "-r", written])
        #expect(reread.status == 0)
        #expect(lines(reread.stdoutText) == expected)
        #expect(writer.stderr.contains("\(expected.count) packets captured"), "\(writer.stderr)")
    }

    /// `-i any` captures as Linux cooked v2 and names the interface on each line, as tcpdump does.
    @Test func anyInterfaceWritesCookedV2() throws {
        let fixturePath = TestEnvironment.publicFixtures!.appendingPathComponent("zeek_http_get.pcap").path
        let expected = lines(try run(Self.binary, ["-t", "-r", fixturePath, "tcp"]).stdoutText)
        let lab = try VethLab()
        let written = FileManager.default.temporaryDirectory.appendingPathComponent("tk-any-\(lab.suffix).pcap").path
        defer { try? FileManager.default.removeItem(atPath: written) }
        let writer = try BackgroundCapture(namespace: lab.captureNamespace, arguments: ["-i", "any", "-w", written, "tcp"])
        try writer.waitUntilListening()
        #expect(writer.stderr.contains("link-type LINUX_SLL2"))
        let replay = try run("ip", ["netns", "exec", lab.replayNamespace, "tcpreplay", "-q", "--pps", "2000",
                                    "-i", lab.replayInterface, fixturePath])
        #expect(replay.status == 0, "tcpreplay: \(replay.stderrText)")
        usleep(700_000)
        #expect(writer.terminate() == 0)  // SIGTERM ends as cleanly as Ctrl-C
        #expect(writer.stderr.contains("\(expected.count) packets captured"), "\(writer.stderr)")
        // Read back inside the namespace so interface indexes resolve to the veth's name.
        let reread = try run("ip", ["netns", "exec", lab.captureNamespace, Self.binary, "-t", "-r", written])
        let ours = lines(reread.stdoutText)
        // Replayed frames carry foreign MAC addresses, so the kernel marks them "P" (to another host).
        #expect(ours == expected.map { "\(lab.captureInterface) P   \($0)" })
        let tcpdump = try run("ip", ["netns", "exec", lab.captureNamespace, "tcpdump", "-n", "-t", "-r", written])
        #expect(ours == lines(tcpdump.stdoutText))
    }

    /// With -l each line reaches a pipe or file while the capture is still running.
    @Test func lineBufferedOutputArrivesWhileCapturing() throws {
        let fixturePath = TestEnvironment.publicFixtures!.appendingPathComponent("zeek_http_get.pcap").path
        let expected = lines(try run(Self.binary, ["-t", "-r", fixturePath, "tcp"]).stdoutText)
        let lab = try VethLab()
        let printer = try BackgroundCapture(namespace: lab.captureNamespace, arguments: ["-l", "-t", "-i", lab.captureInterface, "tcp"])
        try printer.waitUntilListening()
        _ = try run("ip", ["netns", "exec", lab.replayNamespace, "tcpreplay", "-q", "-i", lab.replayInterface, fixturePath])
        let seen = printer.lines(atLeast: expected.count, within: 5)
        #expect(printer.process.isRunning)
        #expect(seen == expected)
        #expect(printer.interrupt() == 0)
    }
}
