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
            #expect(status.stdoutText.contains("  faults: "), "\(status.stdoutText)")
            #expect(!status.stdoutText.contains(" 0 packets"), "every fault acted: \(status.stdoutText)")
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
}
