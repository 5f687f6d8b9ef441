import Foundation
import LinkConditioner
import Sandbox
import SystemSupport
import Testing
import TestSupport

private let enabled = TestEnvironment.isRoot && ["dnsmasq", "dig", "getent", "python3"].allSatisfy(TestEnvironment.hasProgram)

/// DNS faults as real resolvers inside a `condition run` sandbox see them: dig (the answer code it prints, the time
/// a timeout takes, UDP, TCP and the fall-back to TCP after a truncated answer), glibc through `getent` and Python's
/// `socket.getaddrinfo` (the error each gets). The host's name server is a real dnsmasq on a loopback address of
/// the test's own, and its query log is the oracle for what was forwarded and what was answered in the sandbox.
@Suite("sandbox DNS faults", .serialized, .enabled(if: enabled, "needs root (network namespaces), dnsmasq, dig (bind9-dnsutils), getent and python3"))
struct SandboxDNSFaultTests {
    /// Runs every client once and prints one JSON object: each check's outcome and seconds. Every wait is bounded
    /// (dig +timeout=1 +tries=1, 3 s for the delayed name; resolv.conf's `options timeout:1 attempts:1` for glibc;
    /// subprocess timeouts). The delay is a whole second so a loaded machine's slow answers cannot pass for it.
    static let clients = #"""
import json, re, socket, subprocess, time
out = {}
def timed(key, fn):
    start = time.monotonic()
    value = fn()
    out[key] = [value, round(time.monotonic() - start, 3)]
def dig(*args, wait=1):
    r = subprocess.run(["dig", "+tries=1", "+timeout=%d" % wait, *args], capture_output=True, text=True, timeout=10)
    m = re.search(r"status: (\w+)", r.stdout)
    status = m.group(1) if m else ("timeout" if "timed out" in r.stdout else "?" + r.stdout + r.stderr)
    answers = re.search(r"ANSWER: (\d+)", r.stdout)
    return status + ("/tcp-retry" if "retrying in TCP mode" in r.stdout else "") + ("/%s" % answers.group(1) if answers else "")
def getent(*args):
    r = subprocess.run(["getent", *args], capture_output=True, text=True, timeout=10)
    addresses = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    return "%d" % r.returncode if r.returncode else "0 %s %d" % (addresses[0], len(set(addresses)))
def gai(name):
    try:
        return sorted({a[4][0] for a in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)})[0]
    except socket.gaierror as e:
        return {socket.EAI_NONAME: "EAI_NONAME", socket.EAI_AGAIN: "EAI_AGAIN"}.get(e.errno, str(e.errno))
out["resolv"] = open("/etc/resolv.conf").read()
for name in ["blocked.test", "www.blocked.test", "broken.test", "deny.test", "silent.test", "ok.test"]:
    timed("dig " + name, lambda: dig(name))
timed("dig slow.test", lambda: dig("slow.test", wait=3))
timed("dig +tcp blocked.test", lambda: dig("+tcp", "blocked.test"))
timed("dig +tcp ok.test", lambda: dig("+tcp", "ok.test"))
timed("dig +noedns big.test TXT", lambda: dig("+noedns", "big.test", "TXT"))
for name in ["blocked.test", "ok.test"]:
    timed("getent hosts " + name, lambda: getent("hosts", name))
timed("getent ahostsv4 many.test", lambda: getent("ahostsv4", "many.test"))
for name in ["blocked.test", "broken.test", "silent.test", "ok.test"]:
    timed("gai " + name, lambda: gai(name))
print(json.dumps(out))
"""#

    @Test("NXDOMAIN, SERVFAIL, REFUSED, no answer and a delay, for some names, over UDP and TCP; other names from the host's server")
    func faultsAsRealResolversSeeThem() throws {
        let address = "127.\(Int.random(in: 10...250)).\(Int.random(in: 1...250)).53"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("w24-dnsfault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("dnsmasq.log")
        let server = try Self.startDNSMasq(address, log: log)
        defer {
            kill(server, SIGKILL)
            _ = ProcessSpawner.waitForExit(server, timeout: 5)
        }

        let environment = try Self.hostResolver(address, in: directory)
        let result = try run("timeout", ["-s", "KILL", "60", SandboxHarness.condition, "run",
                                         "--dns-fault", "nxdomain:blocked.test", "--dns-fault", "servfail:broken.test",
                                         "--dns-fault", "refused:deny.test", "--dns-fault", "timeout:silent.test",
                                         "--dns-fault", "delay=1s:slow.test", "--", "python3", "-c", Self.clients],
                             environment: environment)
        #expect(result.status == 0, "\(result.stderrText)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.stdoutText) \(result.stderrText)")
        func outcome(_ key: String) -> String { ((json[key] as? [Any])?.first as? String) ?? "missing" }
        func seconds(_ key: String) -> Double { ((json[key] as? [Any])?.last as? Double) ?? -1 }

        #expect((json["resolv"] as? String)?.hasPrefix("nameserver 10.") == true, "\(json["resolv"] ?? "")")
        #expect((json["resolv"] as? String)?.contains(address) == false, "the host's server is not asked directly")
        // dig's answer codes; a name under a faulted one is faulted too.
        #expect(outcome("dig blocked.test") == "NXDOMAIN/0")
        #expect(outcome("dig www.blocked.test") == "NXDOMAIN/0")
        #expect(outcome("dig broken.test") == "SERVFAIL/0")
        #expect(outcome("dig deny.test") == "REFUSED/0")
        #expect(outcome("dig silent.test") == "timeout")
        #expect((0.9...2.5).contains(seconds("dig silent.test")), "dig gave up after \(seconds("dig silent.test")) s (+timeout=1)")
        #expect(outcome("dig slow.test") == "NOERROR/1")
        #expect((1...2.8).contains(seconds("dig slow.test")), "answered after \(seconds("dig slow.test")) s (delay 1 s)")
        #expect(outcome("dig ok.test") == "NOERROR/1")
        #expect(seconds("dig ok.test") < 0.8, "no delay for names without a fault: \(seconds("dig ok.test")) s")
        // TCP: a fault answered, a name forwarded, and the fall-back after a truncated UDP answer.
        #expect(outcome("dig +tcp blocked.test") == "NXDOMAIN/0")
        #expect(outcome("dig +tcp ok.test") == "NOERROR/1")
        #expect(outcome("dig +noedns big.test TXT") == "NOERROR/tcp-retry/1")
        // glibc: getent's exit 2 ("not found"); all 40 addresses after glibc's own retry over TCP.
        #expect(outcome("getent hosts blocked.test") == "2")
        #expect(outcome("getent hosts ok.test") == "0 192.0.2.10 1")
        #expect(outcome("getent ahostsv4 many.test").hasSuffix(" 40"), "\(outcome("getent ahostsv4 many.test"))")
        // Python: the errors an app sees.
        #expect(outcome("gai blocked.test") == "EAI_NONAME")
        #expect(outcome("gai broken.test") == "EAI_AGAIN")
        #expect(outcome("gai silent.test") == "EAI_AGAIN")
        #expect((0.9...3).contains(seconds("gai silent.test")), "getaddrinfo gave up after \(seconds("gai silent.test")) s (timeout:1 attempts:1)")
        #expect(outcome("gai ok.test") == "192.0.2.10")

        // The oracle: the host's server saw the forwarded names and none that were answered in the sandbox.
        let queries = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        for name in ["ok.test", "slow.test", "big.test", "many.test"] {
            #expect(queries.contains("] \(name) from"), "\(name) reached the host's server: \(queries)")
        }
        for name in ["blocked.test", "broken.test", "deny.test", "silent.test"] {
            #expect(!queries.contains(name + " from"), "\(name) was answered in the sandbox, not forwarded")
        }
        #expect(result.stderrText.contains("condition: DNS queries: "), "\(result.stderrText)")
        #expect(result.stderrText.contains("answered NXDOMAIN") && result.stderrText.contains("left unanswered"), "\(result.stderrText)")
        let id = try #require(SandboxHarness.sandboxID(fromStderr: result.stderrText))
        #expect(try SandboxHarness.leftovers(of: id) == [])
    }
    /// A real dnsmasq on `address` (a loopback address of the test's own) logging its queries to `log`, answering
    /// ok.test, slow.test, big.test (TXT, larger than 512 bytes) and many.test (40 A records); once it answers.
    static func startDNSMasq(_ address: String, log: URL) throws -> pid_t {
        // 40 A records for many.test: 656 bytes, more than glibc's 512-byte UDP answers, so glibc asks again over TCP.
        let many = (1...40).map { "--host-record=many.test,192.0.2.\($0 + 100)" }
        // Spawned with the project's spawner, not Foundation's Process: a Process left running beside the `run(...)`
        // calls below hung the test here (Foundation's child monitor blocked in wait4 on dnsmasq).
        let server = try ProcessSpawner.spawn(
            ["/usr/sbin/dnsmasq", "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--listen-address=\(address)",
             "--bind-interfaces", "--port=53", "--user=root", "--group=root", "--pid-file=",
             "--address=/ok.test/192.0.2.10", "--address=/slow.test/192.0.2.11",
             "--txt-record=big.test," + Array(repeating: "\"" + String(repeating: "x", count: 200) + "\"", count: 4).joined(separator: ","),
             "--log-queries", "--log-facility=\(log.path)"] + many,
            options: SpawnOptions(stdin: .null, stdout: .null, stderr: .null)).pid
        var ready = false
        for _ in 0..<50 where !ready {
            ready = (try? run("dig", ["+tries=1", "+timeout=1", "@\(address)", "ok.test"]))?.stdoutText.contains("192.0.2.10") == true
            if !ready { usleep(100_000) }
        }
        if !ready {
            kill(server, SIGKILL)
            _ = ProcessSpawner.waitForExit(server, timeout: 5)
        }
        try #require(ready, "dnsmasq on \(address) did not answer")
        return server
    }

    /// The command's resolver asks with `options timeout:1 attempts:1`: DNS on a private dnsmasq of the test's own.
    static func hostResolver(_ address: String, in directory: URL) throws -> [String: String] {
        let resolv = directory.appendingPathComponent("resolv.conf")
        try Data("nameserver \(address)\noptions timeout:1 attempts:1\n".utf8).write(to: resolv)
        var environment = ProcessInfo.processInfo.environment
        environment["TAPKIT_RESOLV_CONF"] = resolv.path
        return environment
    }

    /// A profile's DNS delay held by the forwarder, so it needs no netem (Slow Net's 200 ms on a kernel without it):
    /// every query, forwarded or answered by a fault, comes that much later; the veth pair gets no DNS class; and
    /// `condition sandboxes` shows the forwarder's counts while the command runs.
    static let delayedClients = #"""
import json, os, subprocess, sys, time
out = {}
for name in ["ok.test", "blocked.test"]:
    start = time.monotonic()
    r = subprocess.run(["dig", "+tries=1", "+timeout=3", name], capture_output=True, text=True, timeout=10)
    out[name] = [("NXDOMAIN" if "NXDOMAIN" in r.stdout else "NOERROR" if "NOERROR" in r.stdout else r.stdout), round(time.monotonic() - start, 3)]
device = [d for d in os.listdir("/sys/class/net") if d != "lo"][0]
out["qdiscs"] = subprocess.run(["tc", "qdisc", "show", "dev", device], capture_output=True, text=True, timeout=10).stdout
out["sandboxes"] = json.loads(subprocess.run([sys.argv[1], "sandboxes", "--json"], capture_output=True, text=True, timeout=20).stdout)
print(json.dumps(out))
"""#

    @Test("the profile's DNS delay is held by the forwarder, without netem, and its counts show in `condition sandboxes`")
    func profileDNSDelayWithoutNetem() throws {
        let address = "127.\(Int.random(in: 10...250)).\(Int.random(in: 1...250)).53"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("w24-dnsdelay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try Self.startDNSMasq(address, log: directory.appendingPathComponent("dnsmasq.log"))
        defer {
            kill(server, SIGKILL)
            _ = ProcessSpawner.waitForExit(server, timeout: 5)
        }
        try Data(#"{"name": "W24 Slow DNS", "downlink": {"bandwidthKbit": 2000}, "uplink": {"bandwidthKbit": 1000}, "dnsDelayMs": 700}"#.utf8)
            .write(to: directory.appendingPathComponent("w24-slow-dns.json"))
        let result = try run("timeout", ["-s", "KILL", "60", SandboxHarness.condition, "run", "W24 Slow DNS", "--profiles", directory.path,
                                         "--dns-fault", "nxdomain:blocked.test", "--", "python3", "-c", Self.delayedClients,
                                         SandboxHarness.condition],
                             environment: try Self.hostResolver(address, in: directory))
        #expect(result.status == 0, "\(result.stderrText)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.stdoutText) \(result.stderrText)")
        func outcome(_ key: String) -> [Any] { json[key] as? [Any] ?? [] }
        #expect(outcome("ok.test").first as? String == "NOERROR")
        #expect((0.65...2.5).contains(outcome("ok.test").last as? Double ?? -1), "forwarded after \(outcome("ok.test")) s (DNS delay 700 ms)")
        #expect(outcome("blocked.test").first as? String == "NXDOMAIN")
        #expect((0.65...2.5).contains(outcome("blocked.test").last as? Double ?? -1), "NXDOMAIN after \(outcome("blocked.test")) s")
        let qdiscs = json["qdiscs"] as? String ?? ""
        #expect(qdiscs.contains("7ac0:") && !qdiscs.contains("netem") && !qdiscs.contains("7ac4:"), "the uplink tree: \(qdiscs)")
        #expect(result.stderrText.contains("every query held 700 ms (the profile's DNS delay)"), "\(result.stderrText)")
        let id = try #require(SandboxHarness.sandboxID(fromStderr: result.stderrText))
        let listed = (json["sandboxes"] as? [[String: Any]])?.first { $0["id"] as? String == id }
        let counts = listed?["dnsQueries"] as? [String: Int]
        #expect(counts?["nxdomain"] == 1 && counts?["forwarded"] == 1, "condition sandboxes --json: \(listed ?? [:])")
        #expect(result.stderrText.contains("condition: DNS queries: 1 answered NXDOMAIN, 1 answered by the host's name servers"),
                "\(result.stderrText)")
        #expect(try SandboxHarness.leftovers(of: id) == [])
        #expect(!FileManager.default.fileExists(atPath: SandboxRegistry().dnsCountsFile(id: id).path), "the counts go with the sandbox")
    }

    /// What `capture --profile NAME -- COMMAND` runs: glibc (getent), dig and curl asking for names; the qdiscs of the
    /// sandbox's own end; `condition sandboxes --json` while the command runs. Written to the file in argv[2], since
    /// capture's own output shares standard output with the command.
    static let captureClients = #"""
import json, os, re, subprocess, sys, time
out = {}
def timed(key, args):
    start = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True, timeout=10)
    m = re.search(r"status: (\w+)", r.stdout)
    out[key] = [m.group(1) if m else "exit %d %s" % (r.returncode, r.stdout.split("\n")[0]), round(time.monotonic() - start, 3)]
timed("getent ok.test", ["getent", "ahostsv4", "ok.test"])
timed("dig ok.test", ["dig", "+tries=1", "+timeout=3", "ok.test"])
timed("dig blocked.test", ["dig", "+tries=1", "+timeout=3", "blocked.test"])
timed("dig broken.test", ["dig", "+tries=1", "+timeout=3", "broken.test"])
timed("curl blocked.test", ["curl", "-s", "-4", "--max-time", "5", "-o", "/dev/null", "http://blocked.test/"])
device = [d for d in os.listdir("/sys/class/net") if d != "lo"][0]
out["qdiscs"] = subprocess.run(["tc", "qdisc", "show", "dev", device], capture_output=True, text=True, timeout=10).stdout
out["sandboxes"] = json.loads(subprocess.run([sys.argv[1], "sandboxes", "--json"], capture_output=True, text=True, timeout=20).stdout)
open(sys.argv[2], "w").write(json.dumps(out))
"""#

    @Test("capture --profile -- COMMAND answers the command's DNS with the profile's faults and delay, without netem")
    func captureProfileAnswersDNS() throws {
        let address = "127.\(Int.random(in: 10...250)).\(Int.random(in: 1...250)).53"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("w24f-capturedns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("dnsmasq.log")
        let server = try Self.startDNSMasq(address, log: log)
        defer {
            kill(server, SIGKILL)
            _ = ProcessSpawner.waitForExit(server, timeout: 5)
        }
        try Data((#"{"name": "W24F DNS", "downlink": {"bandwidthKbit": 2000}, "uplink": {"bandwidthKbit": 1000}, "dnsDelayMs": 700, "#
                 + #""faults": {"dns": ["nxdomain:blocked.test", "servfail:broken.test"]}}"#).utf8)
            .write(to: directory.appendingPathComponent("w24f-dns.json"))
        let report = directory.appendingPathComponent("clients.json")
        let pcap = directory.appendingPathComponent("sandbox.pcap")
        let result = try run("timeout", ["-s", "KILL", "60", SandboxHarness.capture, "-w", pcap.path, "--profiles", directory.path,
                                         "--profile", "W24F DNS", "--", "python3", "-c", Self.captureClients,
                                         SandboxHarness.condition, report.path],
                             environment: try Self.hostResolver(address, in: directory))
        #expect(result.status == 0, "\(result.stderrText)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any], "\(result.stderrText)")
        func outcome(_ key: String) -> (answer: String, seconds: Double) {
            let pair = json[key] as? [Any] ?? []
            return (pair.first as? String ?? "missing", pair.last as? Double ?? -1)
        }
        print("capture --profile with DNS faults and a 700 ms DNS delay: \(json.filter { $0.key.contains(" ") })")
        // Every query held 700 ms, forwarded or answered by a fault; the faults as the profile says.
        #expect(outcome("getent ok.test").answer.hasPrefix("exit 0 192.0.2.10 "), "\(outcome("getent ok.test"))")
        #expect((0.65...2.5).contains(outcome("getent ok.test").seconds), "getent: \(outcome("getent ok.test"))")
        #expect(outcome("dig ok.test").answer == "NOERROR")
        #expect((0.65...2.5).contains(outcome("dig ok.test").seconds), "dig ok.test: \(outcome("dig ok.test"))")
        #expect(outcome("dig blocked.test").answer == "NXDOMAIN")
        #expect((0.65...2.5).contains(outcome("dig blocked.test").seconds), "dig blocked.test: \(outcome("dig blocked.test"))")
        #expect(outcome("dig broken.test").answer == "SERVFAIL")
        // curl: "Could not resolve host" (exit 6), after the delay.
        #expect(outcome("curl blocked.test").answer.hasPrefix("exit 6"), "\(outcome("curl blocked.test"))")
        #expect((0.65...4).contains(outcome("curl blocked.test").seconds), "curl: \(outcome("curl blocked.test"))")
        let qdiscs = json["qdiscs"] as? String ?? ""
        #expect(qdiscs.contains("7ac0:") && !qdiscs.contains("netem") && !qdiscs.contains("7ac4:"), "the uplink tree: \(qdiscs)")
        #expect(result.stderrText.contains("capture: DNS of the command answered at 10."), "\(result.stderrText)")
        #expect(result.stderrText.contains("every query held 700 ms (the profile's DNS delay)"), "\(result.stderrText)")
        let id = try #require(CaptureSandboxID.from(result.stderrText), "\(result.stderrText)")
        let listed = (json["sandboxes"] as? [[String: Any]])?.first { $0["id"] as? String == id }
        let counts = listed?["dnsQueries"] as? [String: Int]
        // dig's one and curl's A query (-4) answered NXDOMAIN; dig's SERVFAIL; getent's and dig's ok.test forwarded.
        #expect(counts?["nxdomain"] == 2 && counts?["servfail"] == 1 && (counts?["forwarded"] ?? 0) >= 2,
                "condition sandboxes --json: \(listed ?? [:])")
        #expect(result.stderrText.contains("capture: DNS queries: 2 answered NXDOMAIN, 1 answered SERVFAIL, "), "\(result.stderrText)")
        // The oracle: the host's server saw ok.test and neither faulted name.
        let queries = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(queries.contains("] ok.test from"), "\(queries)")
        #expect(!queries.contains("blocked.test from") && !queries.contains("broken.test from"), "\(queries)")
        #expect(try SandboxHarness.leftovers(of: id) == [])
        #expect(!FileManager.default.fileExists(atPath: SandboxRegistry().dnsCountsFile(id: id).path), "the counts go with the sandbox")
    }
}

/// The sandbox id `capture -- COMMAND` printed ("... in sandbox 1a2b3c (interface ...").
enum CaptureSandboxID {
    static func from(_ text: String) -> String? {
        guard let range = text.range(of: #"in sandbox [0-9a-f]{6} "#, options: .regularExpression) else { return nil }
        return String(text[range].dropFirst("in sandbox ".count).dropLast())
    }
}
