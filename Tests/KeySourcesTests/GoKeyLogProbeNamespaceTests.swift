import Foundation
import KeySources
import SystemSupport
import Testing
import TestSupport

/// The uprobe source against a real Go 1.19 client (root): the client also writes its own key log through
/// `KeyLogWriter`, in the same run, and the lines the probe read must be that file's lines exactly; a client of the
/// same binary started before the probe (outside the followed tree) must not be read; and nothing of ours is left
/// in `uprobe_events` or `instances/` afterwards. The server is `openssl s_server` on loopback.
@Suite(.enabled(if: TestEnvironment.isRoot && GoToolchain.available && TestEnvironment.hasProgram("openssl"),
                "needs root, Debian's Go (/usr/bin/go) and openssl"), .serialized)
struct GoKeyLogProbeNamespaceTests {
    /// `client ADDRESS CONNECTIONS [DELAY_MS]`: CONNECTIONS sequential TLS connections, each a GET; with
    /// $CLIENT_KEYLOG, the program logs its own keys there (the oracle).
    static let client = """
        package main

        import (
        \t"crypto/tls"
        \t"fmt"
        \t"io"
        \t"os"
        \t"strconv"
        \t"time"
        )

        func main() {
        \tcount, _ := strconv.Atoi(os.Args[2])
        \tif len(os.Args) > 3 {
        \t\tdelay, _ := strconv.Atoi(os.Args[3])
        \t\ttime.Sleep(time.Duration(delay) * time.Millisecond)
        \t}
        \tconfig := &tls.Config{InsecureSkipVerify: true}
        \tif path := os.Getenv("CLIENT_KEYLOG"); path != "" {
        \t\tfile, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0600)
        \t\tif err != nil {
        \t\t\tpanic(err)
        \t\t}
        \t\tconfig.KeyLogWriter = file
        \t}
        \tfor i := 0; i < count; i++ {
        \t\tif i%2 == 1 {
        \t\t\tconfig.MaxVersion = tls.VersionTLS12
        \t\t} else {
        \t\t\tconfig.MaxVersion = tls.VersionTLS13
        \t\t}
        \t\tconn, err := tls.Dial("tcp", os.Args[1], config)
        \t\tif err != nil {
        \t\t\tfmt.Println(err)
        \t\t\tos.Exit(1)
        \t\t}
        \t\tfmt.Fprintf(conn, "GET / HTTP/1.0\\r\\n\\r\\n")
        \t\tio.ReadAll(conn)
        \t\tconn.Close()
        \t}
        }
        """

    struct Lab {
        var directory: URL
        var server: Process
        var address: String
    }

    static func startServer(in directory: URL) throws -> Lab {
        let key = directory.appendingPathComponent("key.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        try run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                            "-subj", "/CN=tk33.test"])
        let port = Int.random(in: 20_000..<40_000)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-www", "-quiet"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        usleep(300_000)
        return Lab(directory: directory, server: server, address: "127.0.0.1:\(port)")
    }

    final class Collected: @unchecked Sendable {
        let lock = NSLock()
        var lines: [String] = []
        var notices: [GoKeyLogProbe.Notice] = []
        func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        func add(_ notice: GoKeyLogProbe.Notice) { lock.lock(); notices.append(notice); lock.unlock() }
    }

    @Test(arguments: GoToolchain.Linking.allCases)
    func probeReadsWhatTheProgramLogs(linking: GoToolchain.Linking) throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tk33-probe-\(getpid())-\(linking)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = try GoToolchain.build(source: Self.client, name: "client", linking: linking, in: directory)
        let lab = try Self.startServer(in: directory)
        // SIGKILL: Foundation starts children with the test runner's blocked signals still blocked (SIGTERM would wait).
        defer { kill(lab.server.processIdentifier, SIGKILL); lab.server.waitUntilExit() }
        let tracefs = try Tracefs.open(mountIfAbsent: true)
        let group = "tk33_\(linking)", instance = "tk33-\(linking)-\(getpid())"
        let before = try tracefs.read(tracefs.root + "/uprobe_events")

        // Started before the probe, outside the followed tree: its handshake (after 1.5 s) must not be read.
        let outsider = Process()
        outsider.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        outsider.arguments = [binary, lab.address, "1", "1500"]
        outsider.standardOutput = FileHandle.nullDevice
        let outsiderLog = directory.appendingPathComponent("outsider.log").path
        outsider.environment = ["CLIENT_KEYLOG": outsiderLog]
        try outsider.run()
        usleep(200_000)

        let collected = Collected()
        let probe = try GoKeyLogProbe(tracefs: tracefs, instance: instance, group: group,
                                      followPIDs: GoKeyLogProbe.ownThreads(), followExecs: false,
                                      lines: { collected.add($0) }, notices: { collected.add($0) })
        probe.probe(binary: binary)
        #expect(tracefs.uprobeEvents(group: group) == ["\(group)/keylog_0"])
        let oracle = directory.appendingPathComponent("own.log").path
        let result = try run(binary, [lab.address, "6"], environment: ["CLIENT_KEYLOG": oracle])
        #expect(result.status == 0, "\(result.stdoutText)")
        outsider.waitUntilExit()
        usleep(200_000)
        probe.stop()

        let expected = try String(contentsOfFile: oracle, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(expected.count == 3 * 4 + 3 * 1, "3 TLS 1.3 sessions log 4 lines, 3 TLS 1.2 sessions 1")
        #expect(collected.lines == expected)
        let outsiderLines = Set(try String(contentsOfFile: outsiderLog, encoding: .utf8).split(separator: "\n").map(String.init))
        #expect(outsiderLines.count == 4)
        #expect(outsiderLines.isDisjoint(with: collected.lines))
        #expect(collected.notices.count == 1)
        if case .probing(_, let version, let foundIn) = collected.notices.first {
            #expect(version.hasPrefix("go1.19"))
            #expect(foundIn == (linking == .plain ? .symtab : .pclntab))
        } else {
            Issue.record("expected a probing notice, got \(collected.notices)")
        }
        // Nothing of ours left.
        #expect(tracefs.uprobeEvents(group: group).isEmpty)
        #expect(try tracefs.read(tracefs.root + "/uprobe_events") == before)
        #expect(!FileManager.default.fileExists(atPath: tracefs.instancePath(instance)))
    }
}
