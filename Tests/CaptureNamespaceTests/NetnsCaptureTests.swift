import Foundation
import Testing
import TestSupport

/// `capture --netns NAME|PATH` and `capture --pid PID` from the host namespace: nginx in a network namespace the
/// test makes, answered from inside that namespace by curl, Python's urllib and requests. Every exchange nginx
/// logged is shown with its status and body sha256; the capture's own threads all stay in the host namespace; the
/// capture ends by itself when the process exits or the name is removed; bad input is refused in words that say
/// what to do; nothing is left.
@Suite(.serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: creates a network namespace"),
       .enabled(if: ["curl", "python3", "ip"].allSatisfy(TestEnvironment.hasProgram)
                && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "needs nginx, curl, python3 and ip"))
struct NetnsCaptureTests {
    /// nginx on 127.0.0.1:PORT inside a fresh namespace `tk34-XXXXXX`, with its own access log as the oracle.
    final class ServerLab {
        let namespace = "tk34-" + String(UUID().uuidString.prefix(6)).lowercased()
        let directory = URL(fileURLWithPath: "/tmp/tk34-lab-\(UUID().uuidString.prefix(8))")
        let port = Int.random(in: 20_000..<40_000)
        let nginx = Process()
        var site: URL { directory.appendingPathComponent("site") }
        var accessLog: URL { directory.appendingPathComponent("access.log") }
        /// sha256 of each file by its path ("/b.bin").
        private(set) var digests: [String: String] = [:]
        /// Log entries before the clients ran (the readiness probes).
        private var probes = 0

        init() throws {
            try ip(["netns", "add", namespace])
            do {
                try ip(["-n", namespace, "link", "set", "lo", "up"])
                try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
                try makeSite()
                let config = """
                    daemon off; worker_processes 1; pid \(directory.path)/nginx.pid; error_log \(directory.path)/error.log;
                    events { worker_connections 64; }
                    http {
                      access_log off;
                      log_format oracle '$request_method $request_uri $status $body_bytes_sent';
                      types { text/plain txt; application/json json; application/octet-stream bin; }
                      client_body_temp_path \(directory.path);
                      server {
                        listen 127.0.0.1:\(port);
                        access_log \(accessLog.path) oracle;
                        root \(site.path);
                      }
                    }
                    """
                let configFile = directory.appendingPathComponent("nginx.conf")
                try Data(config.utf8).write(to: configFile)
                // `ip netns exec` execs nginx in place, so this pid is nginx's master.
                nginx.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                nginx.arguments = ["ip", "netns", "exec", namespace, "/usr/sbin/nginx", "-c", configFile.path, "-p", directory.path]
                nginx.standardOutput = FileHandle.nullDevice
                nginx.standardError = FileHandle.nullDevice
                try nginx.run()
                var ready = false
                for _ in 0..<50 where !ready {
                    usleep(100_000)
                    ready = try inside(["curl", "-s", "-o", "/dev/null", "--max-time", "1", url("/ready")]).status == 0
                }
                guard ready else { throw Failure(description: "nginx did not start in \(namespace)") }
                probes = try logEntries().count
            } catch {
                stop()
                throw error
            }
        }

        deinit { stop() }

        /// Stops nginx and removes the namespace and files; harmless when done already.
        func stop() {
            stopServer()
            if (try? run("ip", ["netns", "list"]).stdoutText.contains(namespace)) == true {
                _ = try? run("ip", ["netns", "delete", namespace])
            }
            try? FileManager.default.removeItem(at: directory)
        }

        func stopServer() {
            if nginx.isRunning {
                kill(nginx.processIdentifier, SIGTERM)
                nginx.waitUntilExit()
            }
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

        /// Runs a program inside the namespace.
        @discardableResult
        func inside(_ arguments: [String]) throws -> ProcessResult {
            try run("ip", ["netns", "exec", namespace] + arguments)
        }

        func ip(_ arguments: [String]) throws {
            let result = try run("ip", arguments)
            guard result.status == 0 else { throw Failure(description: "ip \(arguments.joined(separator: " ")): \(result.stderrText)") }
        }

        private func makeSite() throws {
            var generator = SystemRandomNumberGenerator()
            let files: [(String, [UInt8])] = [
                ("a.txt", Array(String(repeating: "hello from inside the namespace\n", count: 40).utf8)),
                ("b.bin", (0..<48_000).map { _ in UInt8.random(in: 0...255, using: &generator) }),
                ("c.json", Array(#"{"items":[1,2,3],"where":"tk34"}"#.utf8)),
                ("ready", Array("ok\n".utf8)),
            ]
            for (name, bytes) in files {
                let file = site.appendingPathComponent(name)
                try Data(bytes).write(to: file)
                digests["/" + name] = String(try run("sha256sum", [file.path]).stdoutText.prefix(64))
            }
        }

        /// curl (keep-alive, four requests on one connection), urllib and requests, all from inside the namespace.
        func runClients() throws {
            let curl = try inside(["curl", "-s", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                                   url("/a.txt"), url("/b.bin"), url("/c.json"), url("/missing")])
            #expect(curl.status == 0, "curl: \(curl.stderrText)")
            let script = """
                import sys, urllib.request, urllib.error, requests
                base = sys.argv[1]
                for path in ["/c.json", "/a.txt"]:
                    urllib.request.urlopen(base + path).read()
                with requests.Session() as session:
                    session.get(base + "/b.bin").content
                    session.get(base + "/a.txt").content
                    session.post(base + "/a.txt", data=b"x" * 100)
                """
            let python = try inside(["python3", "-c", script, url("")])
            #expect(python.status == 0, "python: \(python.stderrText)")
        }

        /// What nginx logged after the probes: method, uri, status, body bytes.
        func clientEntries() throws -> [[String]] { Array(try logEntries().dropFirst(probes)) }

        private func logEntries() throws -> [[String]] {
            try String(contentsOf: accessLog, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// The JSON exchanges printed so far, once at least `count` are there (or after `seconds`).
    static func exchanges(_ capture: RunningCapture, atLeast count: Int, within seconds: Double = 10) -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(seconds)
        var objects: [[String: Any]] = []
        repeat {
            objects = String(decoding: capture.stdout, as: UTF8.self).split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["request"] != nil }
            if objects.count >= count { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        return objects
    }

    /// Every logged exchange is shown once, with its status, body size and (for files served) body sha256.
    static func expectSameExchanges(_ shown: [[String: Any]], as logged: [[String]], lab: ServerLab) {
        func key(_ method: String, _ uri: String, _ status: Int, _ size: Int) -> String { "\(method) \(uri) \(status) \(size)" }
        var expected = logged.map { key($0[0], $0[1], Int($0[2]) ?? 0, Int($0[3]) ?? -1) }.sorted()
        var seen: [String] = []
        for object in shown {
            let request = object["request"] as? [String: Any] ?? [:]
            let response = object["response"] as? [String: Any] ?? [:]
            let body = response["body"] as? [String: Any] ?? [:]
            let method = request["method"] as? String ?? "?", uri = request["uri"] as? String ?? "?"
            let status = response["status"] as? Int ?? 0
            seen.append(key(method, uri, status, body["size"] as? Int ?? -1))
            if status == 200, let digest = lab.digests[uri] {
                #expect(body["sha256"] as? String == digest, "\(method) \(uri): body sha256")
            }
        }
        seen.sort()
        expected.sort()
        #expect(seen == expected, "shown \(seen.count), logged \(expected.count)")
    }

    /// Every thread of `pid` is in the same network namespace as this test.
    static func threadsStayHome(_ pid: Int32) throws -> Bool {
        let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        // A thread that ended between the listing and the look is not in any namespace.
        return tasks.allSatisfy { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/task/\($0)/ns/net")) ?? own == own }
    }

    static var capturePath: String { TestEnvironment.executable("capture").path }

    @Test func netnsShowsEveryExchangeAndEndsWhenTheNameIsRemoved() throws {
        let lab = try ServerLab()
        defer { lab.stop() }
        let file = lab.directory.appendingPathComponent("inside.pcap").path
        // Every interface there (any), and beside it one interface by name with a filter, saved to a file.
        let capture = try RunningCapture(["--netns", lab.namespace, "--http", "--json"])
        let saving = try RunningCapture(["--netns", lab.namespace, "-i", "lo", "-w", file, "tcp", "port", String(lab.port)])
        defer { capture.kill(); saving.kill() }
        try capture.waitFor("listening on any inside network namespace \"\(lab.namespace)\"")
        try saving.waitFor("listening on lo inside")
        try lab.runClients()
        let logged = try lab.clientEntries()
        #expect(logged.count == 9, "curl 4, urllib 2, requests 3: \(logged)")
        let shown = Self.exchanges(capture, atLeast: logged.count)
        Self.expectSameExchanges(shown, as: logged, lab: lab)
        #expect(try Self.threadsStayHome(capture.process.processIdentifier), "capture's threads stay in the host namespace")

        // Not in immediate mode (-w), the kernel hands over a block of packets every 200 ms; a stop reads the blocks
        // handed over already (as tcpdump does), so the last client's packets are given time to get there.
        Thread.sleep(forTimeInterval: 0.5)
        saving.interrupt()
        #expect(saving.waitForExit(seconds: 5) == 0)
        let reread = try run(Self.capturePath, ["-r", file, "--http", "--json"])
        let objects = reread.stdoutText.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["request"] != nil }
        Self.expectSameExchanges(objects, as: logged, lab: lab)

        // Removing the name ends the capture (the socket alone would keep the namespace alive).
        lab.stopServer()
        try lab.ip(["netns", "delete", lab.namespace])
        let status = capture.waitForExit(seconds: 5)
        #expect(status == 0, "ended by itself: \(capture.stderr)")
        #expect(capture.stderr.contains("/run/netns/\(lab.namespace) was removed"), "\(capture.stderr)")
        #expect(capture.stderr.contains("packets captured"))
    }

    @Test func pidShowsEveryExchangeAndEndsWhenTheProcessExits() throws {
        let lab = try ServerLab()
        defer { lab.stop() }
        let pid = lab.nginx.processIdentifier
        let capture = try RunningCapture(["--pid", String(pid), "--http", "--json"])
        defer { capture.kill() }
        try capture.waitFor("listening on any inside the network namespace of process \(pid)")
        try lab.runClients()
        let logged = try lab.clientEntries()
        let shown = Self.exchanges(capture, atLeast: logged.count)
        Self.expectSameExchanges(shown, as: logged, lab: lab)
        #expect(capture.process.isRunning)

        let stopped = Date()
        lab.stopServer()
        let status = capture.waitForExit(seconds: 5)
        #expect(status == 0, "ended by itself: \(capture.stderr)")
        #expect(capture.stderr.contains("process \(pid) exited, so the capture inside its network namespace ended"),
                "\(capture.stderr)")
        #expect(Date().timeIntervalSince(stopped) < 3)
    }

    /// `-i` names an interface inside: a veth end in the server's namespace, with the client in a second namespace
    /// behind its peer (as a container's eth0 is reached from outside), whose name does not exist on the host.
    @Test func interfaceNamedInsideIsTheNamespacesVeth() throws {
        let lab = try ServerLab()
        defer { lab.stop() }
        let client = lab.namespace + "c"
        let inner = "tk34i" + lab.namespace.suffix(6), outer = "tk34o" + lab.namespace.suffix(6)
        try lab.ip(["netns", "add", client])
        defer { _ = try? run("ip", ["netns", "delete", client]) }
        try lab.ip(["link", "add", inner, "netns", lab.namespace, "type", "veth", "peer", "name", outer, "netns", client])
        try lab.ip(["-n", lab.namespace, "addr", "add", "10.34.0.1/30", "dev", inner])
        try lab.ip(["-n", client, "addr", "add", "10.34.0.2/30", "dev", outer])
        try lab.ip(["-n", lab.namespace, "link", "set", inner, "up"])
        try lab.ip(["-n", client, "link", "set", outer, "up"])
        // nginx listens on loopback only: a second server on the veth address, python's.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["ip", "netns", "exec", lab.namespace, "python3", "-m", "http.server", "8034", "--bind", "10.34.0.1",
                            "--directory", lab.site.path]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        #expect(try run("ip", ["link", "show", inner]).status != 0, "the interface exists only inside")

        let capture = try RunningCapture(["--netns", lab.namespace, "-i", inner, "--http", "--json"])
        defer { capture.kill() }
        try capture.waitFor("listening on \(inner) inside network namespace")
        var answered = false
        for _ in 0..<30 where !answered {
            answered = try run("ip", ["netns", "exec", client, "curl", "-s", "-o", "/dev/null", "--max-time", "1",
                                      "http://10.34.0.1:8034/c.json"]).status == 0
            if !answered { usleep(100_000) }
        }
        try #require(answered, "the server on the veth answered")
        let shown = Self.exchanges(capture, atLeast: 1)
        let last = try #require(shown.last)
        #expect((last["client"] as? String)?.hasPrefix("10.34.0.2:") == true, "\(last)")
        #expect(last["server"] as? String == "10.34.0.1:8034")
        let body = (last["response"] as? [String: Any])?["body"] as? [String: Any]
        #expect(body?["sha256"] as? String == lab.digests["/c.json"])
        capture.interrupt()
        #expect(capture.waitForExit(seconds: 5) == 0)
    }

    @Test func badInputIsRefusedInWordsAndLeavesNothing() throws {
        let lab = try ServerLab()
        defer { lab.stop() }
        let before = try run("ip", ["netns", "list"]).stdoutText
        let server = lab.nginx.processIdentifier
        var missingPID: Int32 = 4_190_000
        while kill(missingPID, 0) == 0 || errno != ESRCH { missingPID += 1 }
        let cases: [(arguments: [String], status: Int32, words: String)] = [
            (["--pid", String(missingPID)], 1, "no process \(missingPID)"),
            (["--netns", "tk34-none-such"], 1, "no network namespace \"tk34-none-such\""),
            (["--netns", "tk34 bad"], 1, "invalid --netns"),
            (["--netns", "/etc/hostname"], 1, "/etc/hostname is a regular file, not a network namespace"),
            (["--netns", "/proc/\(server)/ns/mnt"], 1, "/proc/\(server)/ns/mnt is a mount namespace, not a network namespace"),
            (["--netns", "/proc/\(server)/ns/net", "-i", "tk34nosuch0"], 1,
             "no interface 'tk34nosuch0' inside the network namespace at /proc/\(server)/ns/net"),
            (["--netns", "/tmp/tk34-no-such-file"], 1, "no namespace file /tmp/tk34-no-such-file"),
            (["--netns", lab.namespace, "-i", "tk34nosuch0"], 1,
             "no interface 'tk34nosuch0' inside network namespace \"\(lab.namespace)\"; list its interfaces with: ip -n \(lab.namespace) link"),
            (["--netns", lab.namespace, "-i", "tk34nosuch0", "-L"], 1, "no interface 'tk34nosuch0' inside network namespace"),
            (["--netns", lab.namespace, "-r", "/dev/null"], 64, "-r reads a file"),
            (["--netns", lab.namespace, "--", "true"], 64, "-- COMMAND makes a sandbox of its own"),
            (["--netns", lab.namespace, "--pid", "1"], 64, "not both"),
            (["--pid", "0"], 64, "invalid --pid 0"),
            (["-D", "--netns", lab.namespace], 64, "ip -n NAME link"),
        ]
        for (arguments, status, words) in cases {
            let result = try run(Self.capturePath, arguments + ["-c", "1"])
            #expect(result.status == status, "\(arguments): \(result.stderrText)")
            #expect(result.stderrText.contains(words), "\(arguments): \(result.stderrText)")
        }
        // Without root: open works for a name (mode 0444) but entering needs CAP_SYS_ADMIN; a pid's is not readable.
        if let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile) {
            for target in [["--netns", lab.namespace], ["--pid", String(lab.nginx.processIdentifier)]] {
                let result = try run(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", Self.capturePath] + target)
                if result.stderrText.contains("Permission denied") && result.stderrText.contains(Self.capturePath) {
                    print("skipped: nobody cannot execute \(Self.capturePath)"); break
                }
                #expect(result.status == 1, "\(target): \(result.stderrText)")
                #expect(result.stderrText.contains("run as root (sudo)"), "\(target): \(result.stderrText)")
            }
        }
        #expect(try run("ip", ["netns", "list"]).stdoutText == before, "no namespace made or removed")
        let left = try run("pgrep", ["-f", "capture --netns \(lab.namespace)"])
        #expect(left.stdoutText.isEmpty, "no capture left running")
    }

    @Test func listingNamesTheNamespaceWithTheWordsToPass() throws {
        let lab = try ServerLab()
        defer { lab.stop() }
        let result = try run(Self.capturePath, ["-D"])
        #expect(result.status == 0)
        let text = result.stdoutText
        let heading = try #require(text.range(of: "Network namespaces (ip netns)"), "\(text)")
        let interfaces = text[..<heading.lowerBound]
        #expect(interfaces.contains(".lo ") && !interfaces.contains(lab.namespace), "namespaces come after the interfaces")
        let line = text[heading.upperBound...].split(separator: "\n").first { $0.hasPrefix("  \(lab.namespace) ") }
        #expect(line?.hasSuffix("  --netns \(lab.namespace)") == true, "\(text)")

        // A sandbox of `capture -- COMMAND` is listed under its own heading, with both ways to watch it.
        let sandboxed = try RunningCapture(["--", "sleep", "5"])
        defer { sandboxed.kill() }
        try sandboxed.waitFor("in sandbox ")
        let id = try #require(sandboxed.stderr.components(separatedBy: "in sandbox ").last?.prefix(6))
        let withSandbox = try run(Self.capturePath, ["-D"]).stdoutText
        let sandboxes = try #require(withSandbox.range(of: "Sandboxes (capture -- COMMAND, condition run)"), "\(withSandbox)")
        let entry = withSandbox[sandboxes.upperBound...].split(separator: "\n").first { $0.hasPrefix("  \(id)  ") }
        #expect(entry?.contains("sleep 5") == true && entry?.hasSuffix("-i tk-\(id)  (or --netns tapkit-\(id))") == true,
                "\(withSandbox)")
        #expect(!withSandbox[..<sandboxes.lowerBound].contains("  tapkit-\(id) "), "a sandbox is not listed twice")
        sandboxed.interrupt()
        #expect(sandboxed.waitForExit(seconds: 10) != nil)
    }
}
