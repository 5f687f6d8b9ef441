import Foundation
import LinkConditioner
import TestSupport
import Testing

private let enabled = TestEnvironment.isRoot && TestEnvironment.hasProgram("nft") && TestEnvironment.hasProgram("python3")

/// A Python HTTP server in the server namespace, a Python client in the conditioned one: each fault measured as
/// the client sees it (the errno, and how many body bytes arrived first). Every wait is bounded by a socket timeout.
@Suite(.serialized, .enabled(if: enabled, "needs root, nft and python3: creates network namespaces"))
struct ConnectionFaultsNamespaceTests {
    /// Downloads 4 MB from the server; prints `OUTCOME BYTES` with OUTCOME an errno name, `timeout` or `eof`.
    static let client = #"""
import errno, socket, sys
host, port, wait = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
got = 0
try:
    s = socket.create_connection((host, port), timeout=wait)
    s.sendall(b"GET /blob HTTP/1.0\r\nHost: x\r\n\r\n")
    while True:
        data = s.recv(65536)
        if not data:
            print("eof", got); break
        got += len(data)
except socket.timeout:
    print("timeout", got)
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)), got)
"""#

    func download(_ pair: NamespacePair, wait: Double = 2) throws -> (outcome: String, bytes: Int) {
        let result = try run("ip", ["netns", "exec", pair.client, "python3", "-c", Self.client, pair.serverAddress, "8080",
                                    String(wait)])
        let words = result.stdoutText.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return (words.first ?? "none: \(result.stderrText)", Int(words.last ?? "") ?? -1)
    }

    func serve(_ pair: NamespacePair) throws {
        let root = pair.stateDirectory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data(count: 4_000_000).write(to: root.appendingPathComponent("blob"))
        try pair.start(in: pair.server, ["python3", "-m", "http.server", "8080", "--bind", pair.serverAddress,
                                         "--directory", root.path])
        for _ in 0..<50 {
            if try download(pair).outcome == "eof" { return }
            usleep(100_000)
        }
        throw TestFailure("the HTTP server in \(pair.server) did not answer")
    }

    func profiles(_ pair: NamespacePair, _ faults: [String: String]) throws -> String {
        let directory = pair.stateDirectory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, json) in faults {
            try Data(#"{"name": "\#(name)", "faults": \#(json)}"#.utf8).write(to: directory.appendingPathComponent(name + ".json"))
        }
        return directory.path
    }

    func nftTables(_ pair: NamespacePair) throws -> String {
        try pair.must("ip", ["netns", "exec", pair.client, "nft", "list", "tables"]).stdoutText
    }

    @Test func resetAndStallAfterBytesAndRefusalsAreWhatTheClientSees() throws {
        let pair = try NamespacePair()
        try serve(pair)
        let dir = try profiles(pair, ["reset": #"{"resetAfterBytes": 300000}"#, "stall": #"{"stallAfterBytes": 300000}"#,
                                      "refuserst": #"{"refuse": "reset"}"#, "refuseicmp": #"{"refuse": "unreachable"}"#,
                                      "refusedrop": #"{"refuse": "timeout"}"#])
        let tablesBefore = try nftTables(pair)

        func applied(_ name: String, _ check: ((String, Int)) -> Void) throws {
            let plan = try pair.condition(["plan", name, "-i", "vc", "--profiles", dir, "--host", pair.serverAddress])
            #expect(plan.stdoutText.contains(ConnectionFaults.table(pair.clientInterface)), "\(plan.stdoutText)\(plan.stderrText)")
            let apply = try pair.condition(["apply", name, "-i", "vc", "--profiles", dir, "--host", pair.serverAddress])
            #expect(apply.status == 0, "\(apply.stderrText)")
            check(try download(pair))
            let status = try pair.condition(["status"])
            // One download, one connection acted on, however many packets the fault dropped or SYNs the client resent.
            let fault = name.hasPrefix("refuse") ? "refuse" : name
            #expect(status.stdoutText.contains("  faults: \(fault) 1 connection\n"), "\(status.stdoutText)")
            let off = try pair.condition(["off", "-i", "vc"])
            #expect(off.status == 0, "\(off.stderrText)")
            #expect(try nftTables(pair) == tablesBefore)
        }
        // The quota counts IP bytes both ways (headers and the request too), so the body stops a little before N.
        try applied("reset") { outcome, bytes in
            #expect(outcome == "ECONNRESET")
            #expect((200_000...300_000).contains(bytes), "reset after \(bytes) bytes")
        }
        try applied("stall") { outcome, bytes in
            #expect(outcome == "timeout")
            #expect((200_000...300_000).contains(bytes), "stalled after \(bytes) bytes")
        }
        try applied("refuserst") { outcome, bytes in #expect(outcome == "ECONNREFUSED" && bytes == 0) }
        try applied("refuseicmp") { outcome, bytes in #expect(outcome == "EHOSTUNREACH" && bytes == 0) }
        try applied("refusedrop") { outcome, bytes in #expect(outcome == "timeout" && bytes == 0) }
        // After off, the same download is whole again.
        let whole = try download(pair)
        #expect(whole.outcome == "eof" && whole.bytes > 4_000_000, "\(whole)")
    }

    /// Streams CHUNK bytes every INTERVAL s, TOTAL in all, to each connection on each PORT, then closes; logs one line per
    /// connection, "PORT OUTCOME SENT", OUTCOME `done` or the errno its socket got: the server's own account.
    static let streamingServer = #"""
import errno, socket, sys, threading, time
host, chunk, interval, total, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), open(sys.argv[5], "a", buffering=1)
def serve(c, port):
    sent = 0
    try:
        c.recv(100)
        while sent < total:
            c.sendall(b"x" * chunk); sent += chunk
            time.sleep(interval)
        c.shutdown(socket.SHUT_WR); c.settimeout(3); c.recv(10)
        log.write("%d done %d\n" % (port, sent))
    except OSError as e:
        log.write("%d %s %d\n" % (port, errno.errorcode.get(e.errno, str(e.errno)), sent))
    finally:
        c.close()
def listen(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((host, port)); s.listen(100)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, port), daemon=True).start()
for port in sys.argv[6:]:
    threading.Thread(target=listen, args=(int(port),), daemon=True).start()
while True: time.sleep(60)
"""#

    /// N connections one after another, each reading to the end; one line each: "OUTCOME BYTES SECONDS".
    static let repeatingClient = #"""
import errno, socket, sys, time
host, port, n, wait = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
for i in range(n):
    got, start = 0, time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=wait)
        s.sendall(b"go")
        while True:
            d = s.recv(65536)
            if not d: out = "eof"; break
            got += len(d)
    except socket.timeout: out = "timeout"
    except OSError as e: out = errno.errorcode.get(e.errno, str(e.errno))
    print(out, got, "%.3f" % (time.monotonic() - start), flush=True)
"""#

    func connections(_ pair: NamespacePair, port: Int, count: Int) throws -> [(outcome: String, bytes: Int, seconds: Double)] {
        let result = try run("ip", ["netns", "exec", pair.client, "python3", "-c", Self.repeatingClient, pair.serverAddress,
                                    String(port), String(count), "3"])
        return result.stdoutText.split(separator: "\n").map { line in
            let words = line.split(separator: " ").map(String.init)
            return (words[0], Int(words[1]) ?? -1, Double(words[2]) ?? -1)
        }
    }

    /// The server's log lines for `port` since `from` lines, once `count` are there (bounded wait: 5 s).
    func serverLog(_ log: URL, port: Int, count: Int) -> [String] {
        var lines: [String] = []
        for _ in 0..<50 {
            lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("\(port) ") }
            if lines.count >= count { break }
            usleep(100_000)
        }
        return lines
    }

    /// The flags (no profile), each fault seen by the client and by the server's own log: a reset after some time comes at
    /// the first packet after it; a share of connections is reset (inside its 99% binomial interval); `--exclude` keeps a
    /// port out of the faults. Every table is gone after `off`.
    @Test func flagsResetAfterTimeAShareOfConnectionsAndHonourExclusions() throws {
        let pair = try NamespacePair()
        let log = pair.stateDirectory.appendingPathComponent("server.log")
        try FileManager.default.createDirectory(at: pair.stateDirectory, withIntermediateDirectories: true)
        // 10 KB every 100 ms for 2 s on 8081 and 8082; 2 KB at once on 8083 (for the share of connections).
        try pair.start(in: pair.server, ["python3", "-c", Self.streamingServer, pair.serverAddress, "10000", "0.1", "200000",
                                         log.path, "8081", "8082"])
        try pair.start(in: pair.server, ["python3", "-c", Self.streamingServer, pair.serverAddress, "1000", "0.01", "2000",
                                         log.path, "8083"])
        let tablesBefore = try nftTables(pair)
        var ready = false
        for _ in 0..<50 where !ready {
            ready = (try? connections(pair, port: 8083, count: 1).first?.outcome) == "eof"
            if !ready { usleep(100_000) }
        }
        try #require(ready, "the server in \(pair.server) did not answer")

        // Reset 300 ms after opening; the exclusion keeps 8082 whole.
        let apply = try pair.condition(["apply", "-i", "vc", "--reset-after", "300ms", "--exclude", "\(pair.serverAddress):8082"])
        #expect(apply.status == 0, "\(apply.stderrText)")
        #expect(apply.stdoutText.contains("Faults: reset connections after 300 ms (TCP)."), "\(apply.stdoutText)")
        let timed = try connections(pair, port: 8081, count: 3)
        for connection in timed {
            #expect(connection.outcome == "ECONNRESET", "\(timed)")
            // Chunks come every 100 ms: the first after 300 ms is the one reset.
            #expect((0.28...0.8).contains(connection.seconds), "reset after \(connection.seconds) s")
            #expect((30_000...50_000).contains(connection.bytes), "\(connection.bytes) bytes before the reset")
        }
        let excluded = try connections(pair, port: 8082, count: 1)
        #expect(excluded.first?.outcome == "eof" && excluded.first?.bytes == 200_000, "\(excluded)")
        let resetLines = serverLog(log, port: 8081, count: 3)
        #expect(resetLines.count == 3 && resetLines.allSatisfy { $0.contains(" ECONNRESET ") || $0.contains(" EPIPE ") },
                "the server learns of each reset: \(resetLines)")
        #expect(serverLog(log, port: 8082, count: 1) == ["8082 done 200000"])

        // Half of new connections, reset at their first arriving packet; switched in place.
        let share = try pair.condition(["apply", "-i", "vc", "--reset-percent", "50"])
        #expect(share.status == 0, "\(share.stderrText)")
        let count = 60
        let drawn = try connections(pair, port: 8083, count: count)
        let resets = drawn.filter { $0.outcome == "ECONNRESET" }.count
        #expect(drawn.count == count && drawn.allSatisfy { $0.outcome == "ECONNRESET" || ($0.outcome == "eof" && $0.bytes == 2000) }, "\(drawn)")
        // 99.9% binomial interval of 60 draws at 50%: 30 ± 3.29 × 3.87 (99% would fail one CI run in a hundred).
        #expect((18...42).contains(resets), "\(resets) of \(count) reset")
        let serverSide = serverLog(log, port: 8083, count: count + 1).dropFirst() // the first is the readiness probe
        #expect(serverSide.filter { !$0.contains(" done ") }.count == resets, "server: \(serverSide)")
        let status = try pair.condition(["status"])
        #expect(status.stdoutText.contains("faults: reset \(resets) connection\(resets == 1 ? "" : "s")"), "\(status.stdoutText)")

        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
        #expect(try nftTables(pair) == tablesBefore)
    }
}
