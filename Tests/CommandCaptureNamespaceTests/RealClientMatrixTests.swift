import Foundation
import Testing
import TestSupport

/// Live equals offline, on real clients no one here wrote, each opening several connections at once: every run
/// under `capture --http --json -- CLIENT` and `condition run PROFILE --http -- CLIENT` (a bandwidth-only profile:
/// this kernel has no netem) must show each exchange nginx logged, with the bytes it served (sha256), and must
/// equal, exchange for exchange, what `capture -r` makes afterwards of tcpdump's capture of the same run with the
/// final key log. Each client runs several times per mode: timing bugs hide in single runs.
@Suite("real clients: live decryption equals offline", .serialized,
       .enabled(if: TestEnvironment.isRoot, "needs root: network namespaces, veth, nftables, live capture"),
       .enabled(if: ["nginx", "tcpdump", "openssl", "python3"].allSatisfy(TestEnvironment.hasProgram),
                "needs nginx, tcpdump, openssl and python3 (Scripts/setup --test)"),
       .enabled(if: CaptureFeatures.decryptsTLS, "needs a capture with --keylog"))
struct RealClientMatrixTests {
    /// Runs per client and mode (TAPKIT_REAL_CLIENT_RUNS overrides, for longer measurements by hand).
    static let runs = ProcessInfo.processInfo.environment["TAPKIT_REAL_CLIENT_RUNS"].flatMap(Int.init) ?? 3
    static let modes = ["capture", "condition run"]

    @Test("every exchange right and equal to the offline decode, in every run", arguments: RealClientLab.clients)
    func client(_ client: RealClientLab.Client) throws {
        guard TestEnvironment.hasProgram(client.program) else {
            print("skipped \(client.name): \(client.program) is not installed (Scripts/setup --test installs it)")
            return
        }
        let lab = try RealClientLab()
        defer { lab.stop() }
        let profiles = lab.directory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
        let profile = #"{"name": "Tkr Wide", "downlink": {"bandwidthKbit": 200000}, "uplink": {"bandwidthKbit": 200000}}"#
        try Data(profile.utf8).write(to: profiles.appendingPathComponent("tkr-wide.json"))
        var summary: [String] = []
        for mode in Self.modes {
            var right = 0
            for run in 1...Self.runs {
                let verdict = try RealClientRun(lab: lab, client: client, mode: mode, profiles: profiles, run: run).verdict()
                if verdict.problems.isEmpty { right += 1 }
                #expect(verdict.problems.isEmpty, "\(client.name) under \(mode), run \(run): \(verdict.problems.joined(separator: "\n"))")
            }
            summary.append("\(mode) \(right)/\(Self.runs)")
        }
        print("matrix: \(client.name): \(summary.joined(separator: ", "))")
    }

    /// The matrix compares JSON; the text view with -v (headers and bodies) and HAR must equal offline too. One
    /// live run gives both (-v on standard output, --har to a file); several clients, two runs each.
    @Test("live equals offline in the text view with -v and in HAR",
          arguments: ["curl-parallel", "node-fetch", "python-httpx-h2", "chromium-h1"])
    func textAndHAR(_ name: String) throws {
        let client = try #require(RealClientLab.clients.first { $0.name == name })
        guard TestEnvironment.hasProgram(client.program) else {
            print("skipped \(name): \(client.program) is not installed (Scripts/setup --test installs it)")
            return
        }
        let lab = try RealClientLab()
        defer { lab.stop() }
        for run in 1...2 {
            let file = { (suffix: String) in lab.directory.appendingPathComponent("\(name)-views-\(run).\(suffix)").path }
            let tcpdump = try TcpdumpBeside(interface: "any", filter: "tcp port \(lab.port)", file: file("pcap"))
            let live = try BackgroundCommandCapture(["--http", "-v", "--har", file("live.har"), "--"]
                                                    + lab.command(for: client, keysCopy: file("keys"))).finish(timeout: 60)
            tcpdump.stop()
            #expect(live.status == 0, "\(live.stderr.suffix(600))")
            let offline = try TestSupport.run(CommandCaptureHarness.capture, ["-r", file("pcap"), "--keylog", file("keys"),
                                                                              "--http", "-v", "--har", file("offline.har")])
            let liveBlocks = TextBlocks.normalized(live.stdout, serverPort: lab.port)
            let offlineBlocks = TextBlocks.normalized(offline.stdoutText, serverPort: lab.port)
            #expect(liveBlocks.count >= 11, "\(name) run \(run): \(liveBlocks.count) exchanges shown live")
            #expect(liveBlocks == offlineBlocks, """
                \(name) run \(run), -v: live only \(Set(liveBlocks).subtracting(offlineBlocks).map { $0.prefix(300) }), \
                offline only \(Set(offlineBlocks).subtracting(liveBlocks).map { $0.prefix(300) })
                """)
            let liveEntries = try HAREntries.normalized(file("live.har"))
            let offlineEntries = try HAREntries.normalized(file("offline.har"))
            #expect(liveEntries.count >= 11, "\(name) run \(run): \(liveEntries.count) HAR entries")
            #expect(liveEntries == offlineEntries, """
                \(name) run \(run), HAR: live only \(Set(liveEntries).subtracting(offlineEntries).map { $0.prefix(300) }), \
                offline only \(Set(offlineEntries).subtracting(liveEntries).map { $0.prefix(300) })
                """)
            print("views: \(name) | \(run) | \(liveBlocks.count) blocks, \(liveEntries.count) HAR entries | "
                  + "text \(liveBlocks == offlineBlocks ? "=" : "≠") offline, HAR \(liveEntries == offlineEntries ? "=" : "≠") offline")
        }
    }

    @Test("-w FILE.pcapng under -- COMMAND: pcapng with the key log embedded; tshark and capture -r read it decrypted")
    func pcapngWithSecrets() throws {
        guard TestEnvironment.hasProgram("tshark") else {
            print("skipped: tshark is not installed (Scripts/setup --test installs it)")
            return
        }
        let lab = try RealClientLab()
        defer { lab.stop() }
        let file = lab.directory.appendingPathComponent("run.pcapng").path
        let keys = lab.directory.appendingPathComponent("run.keys").path
        let client = try #require(RealClientLab.clients.first { $0.name == "curl-parallel" })
        let live = try BackgroundCommandCapture(["--http", "--json", "-w", file, "--"] + lab.command(for: client, keysCopy: keys))
            .finish(timeout: 60)
        #expect(live.status == 0, "\(live.stderr)")
        let magic = try #require(FileHandle(forReadingAtPath: file)?.readData(ofLength: 4))
        #expect(Array(magic) == [0x0A, 0x0D, 0x0D, 0x0A], "not pcapng: \(Array(magic))")
        // tshark with no key log of its own: the secrets can only come from the file.
        let tshark = try TestSupport.run("tshark", ["-r", file, "-o", "tls.keylog_file:", "-Y", "http.request",
                                                    "-T", "fields", "-e", "http.request.uri"])
        let uris = tshark.stdoutText.split(separator: "\n").map(String.init).sorted()
        #expect(uris == (RealClientLab.paths + ["/echo"]).sorted(), "tshark: \(uris) \(tshark.stderrText)")
        let offline = try TestSupport.run(CommandCaptureHarness.capture, ["-r", file, "--http", "--json"])
        let liveNormal = ExchangeLines.parse(live.stdout, serverPort: lab.port).map(ExchangeLines.normalized).sorted()
        let offlineNormal = ExchangeLines.parse(offline.stdoutText, serverPort: lab.port).map(ExchangeLines.normalized).sorted()
        #expect(liveNormal.count == 11)
        #expect(liveNormal == offlineNormal, "\(offline.stderrText)")
    }

    /// A file read while the capture still runs (or left by one that was killed) already holds the keys known so
    /// far, in a Decryption Secrets Block before the packets captured after they were read.
    @Test("-w FILE.pcapng: keys are written into the file as they become known", arguments: ["--http", "packets"])
    func pcapngSecretsAsKeysArrive(_ view: String) throws {
        let lab = try RealClientLab()
        defer { lab.stop() }
        let file = lab.directory.appendingPathComponent("streamed.pcapng").path
        let firstKeys = lab.directory.appendingPathComponent("first.keys").path
        let marker = lab.directory.appendingPathComponent("marker").path
        let base = "https://$TAPKIT_SANDBOX_HOST:\(lab.port)"
        let script = "curl -sk --http1.1 -o /dev/null -o /dev/null \(base)/index.html \(base)/api.json; "
            + "cp \"$SSLKEYLOGFILE\" \(firstKeys); sleep 0.3; curl -sk -o /dev/null \(base)/style.css; touch \(marker); sleep 3"
        let live = try BackgroundCommandCapture((view == "--http" ? ["--http"] : []) + ["-w", file, "--", "sh", "-c", script])
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: marker) && Date() < deadline { usleep(50_000) }
        usleep(200_000)
        let midRun = try Data(contentsOf: URL(fileURLWithPath: file))
        let result = live.finish(timeout: 30)
        #expect(result.status == 0, "\(result.stderr.suffix(600))")
        let known = try String(contentsOfFile: firstKeys, encoding: .utf8).split(separator: "\n").map(String.init)
        try #require(!known.isEmpty, "curl wrote no keys")
        let blocks = PcapngBlocks(Array(midRun))
        let secrets = Set(blocks.secrets.flatMap { $0.split(separator: "\n").map(String.init) })
        #expect(known.allSatisfy(secrets.contains), "mid-run file lacks keys: \(Set(known).subtracting(secrets).count) of \(known.count)")
        // Those keys come before the second request's packets: packets follow the block that completes them.
        var seen = Set<String>()
        let completing = try #require(blocks.types.indices.first { index in
            seen.formUnion(blocks.secretText(at: index)?.split(separator: "\n").map(String.init) ?? [])
            return known.allSatisfy(seen.contains)
        })
        #expect(blocks.types[(completing + 1)...].contains(6), "no packet after the keys in the mid-run file")
        // The finished file: one block with every key, first after the section header.
        let final = PcapngBlocks(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(final.types.prefix(3) == [0x0A0D_0D0A, 0x0A, 1], "\(final.types.prefix(4))")
        #expect(final.types.filter { $0 == 0x0A }.count == 1)
    }
}

/// One run of one client in one mode, with its two oracles.
struct RealClientRun {
    let lab: RealClientLab
    let client: RealClientLab.Client
    let mode: String
    let profiles: URL
    let run: Int

    struct Verdict {
        var exchangesRight: Int
        var exchangesLogged: Int
        var problems: [String]
    }

    func verdict() throws -> Verdict {
        try Data().write(to: lab.accessLog)
        let tag = "\(client.name)-\(mode.replacingOccurrences(of: " ", with: "-"))-\(run)"
        let keys = lab.directory.appendingPathComponent("\(tag).keys").path
        let packets = lab.directory.appendingPathComponent("\(tag).pcap").path
        // tcpdump beside the capture, on every interface: the sandbox's host end exists only once the run starts.
        let tcpdump = try TcpdumpBeside(interface: "any", filter: "tcp port \(lab.port)", file: packets)
        let command = lab.command(for: client, keysCopy: keys)
        let live = mode == "capture"
            ? try BackgroundCommandCapture(["--http", "--json", "--"] + command).finish(timeout: 60)
            : try BackgroundCommandCapture(["run", "Tkr Wide", "--profiles", profiles.path, "--http", "--json", "--"] + command,
                                           executable: "condition").finish(timeout: 60)
        tcpdump.stop()
        var problems: [String] = []
        if live.status != 0 { problems.append("exit status \(live.status): \(live.stderr.suffix(600))") }
        let logged = (try? String(contentsOf: lab.accessLog, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        let liveExchanges = ExchangeLines.parse(live.stdout, serverPort: lab.port)
        let judged = judge(liveExchanges, logged: logged)
        problems += judged.problems
        // Differential: the same packets decoded afterwards with the complete key log.
        let offline = try TestSupport.run(CommandCaptureHarness.capture, ["-r", packets, "--keylog", keys, "--http", "--json"])
        let offlineExchanges = ExchangeLines.parse(offline.stdoutText, serverPort: lab.port)
        let liveNormal = liveExchanges.map(ExchangeLines.normalized).sorted()
        let offlineNormal = offlineExchanges.map(ExchangeLines.normalized).sorted()
        if liveNormal != offlineNormal {
            problems.append("live differs from offline: live only \(Set(liveNormal).subtracting(offlineNormal).map { $0.prefix(300) }), "
                            + "offline only \(Set(offlineNormal).subtracting(liveNormal).map { $0.prefix(300) }); "
                            + "live standard error: \(live.stderr.suffix(1500))")
        }
        print("run: \(client.name) | \(mode) | \(run) | \(judged.right)/\(logged.count) right | "
              + "live \(liveNormal == offlineNormal ? "=" : "≠") offline")
        return Verdict(exchangesRight: judged.right, exchangesLogged: logged.count, problems: problems)
    }

    /// Each line nginx logged must have its own exchange with the same method, target and status, complete and
    /// without warnings, whose body is the file served (GET 200) or the body posted (the echo).
    func judge(_ exchanges: [[String: Any]], logged: [String]) -> (right: Int, problems: [String]) {
        var unused = Array(exchanges.indices)
        var right = 0
        var problems: [String] = []
        for line in logged {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 5 else { continue }
            let (method, uri, status) = (fields[0], fields[1], fields[2])
            let match = unused.firstIndex { index in
                let exchange = exchanges[index]
                guard let request = exchange["request"] as? [String: Any],
                      request["method"] as? String == method, request["uri"] as? String == uri else { return false }
                // A browser whose time budget ends while its POST waits for the echo: nginx logs the proxied 200 with
                // no body byte sent (the client was gone when it came); right when shown unfinished, with or
                // without the response's head.
                if method == "POST", fields[3] == "0", exchange["complete"] as? Bool == false {
                    return (exchange["response"] as? [String: Any]).map { "\($0["status"] ?? "")" == status } ?? true
                }
                guard let response = exchange["response"] as? [String: Any], "\(response["status"] ?? "")" == status
                else { return false }
                // A browser cancels a stream it no longer wants (RST_STREAM CANCEL) while nginx logs its 200: right
                // when shown as that.
                let http2 = exchange["http2"] as? [String: Any]
                if http2?["outcome"] as? String == "reset" && http2?["by"] as? String == "client" { return true }
                // A browser that leaves (its time budget spent) mid-download: nginx logs the 200 and the bytes it
                // sent, fewer than the file; right when shown incomplete.
                if let sent = Int(fields[3]), let size = lab.sizes[uri], sent < size, method == "GET", status == "200",
                   uri.hasSuffix(".bin") {
                    return exchange["complete"] as? Bool == false
                }
                guard exchange["complete"] as? Bool == true, (exchange["warnings"] as? [Any])?.isEmpty == true else { return false }
                let responseDigest = (response["body"] as? [String: Any])?["sha256"] as? String
                if method == "GET" && status == "200" { return responseDigest == lab.digests[uri] }
                if method == "POST" { return responseDigest == (request["body"] as? [String: Any])?["sha256"] as? String }
                return true
            }
            if let match {
                unused.remove(at: match)
                right += 1
            } else {
                problems.append("nginx served \(line), not shown right live")
            }
        }
        for index in unused {
            problems.append("shown live, not as nginx logged it: \(ExchangeLines.normalized(exchanges[index]).prefix(400))")
        }
        return (right, problems)
    }
}

/// Exchange lines of `--http --json` output.
enum ExchangeLines {
    /// The exchanges with the lab's server, as JSON objects (TLS lines and other servers' exchanges left out).
    static func parse(_ text: String, serverPort: Int) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["request"] != nil || object["response"] != nil else { return nil }
            return "\(object["server"] ?? "")".contains("\(serverPort)") ? object : nil
        }
    }

    /// What live and offline must agree on: all but the times (two captures of the same packets differ by
    /// microseconds) and the endpoints.
    static func normalized(_ exchange: [String: Any]) -> String {
        var kept = exchange
        for key in ["ts", "client", "server", "timing"] { kept.removeValue(forKey: key) }
        let data = (try? JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// The blocks of a pcapng file as `-w` writes it (little-endian), up to the last complete one.
struct PcapngBlocks {
    private(set) var types: [UInt32] = []
    private var bodies: [Int: ArraySlice<UInt8>] = [:]

    init(_ bytes: [UInt8]) {
        func word(_ at: Int) -> UInt32 { bytes[at..<at + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        var offset = 0
        while offset + 12 <= bytes.count {
            let length = Int(word(offset + 4))
            guard length >= 12, offset + length <= bytes.count else { break }
            let type = word(offset)
            if type == 0x0A, length >= 20 {
                let count = Int(word(offset + 12))
                if offset + 16 + count <= offset + length { bodies[types.count] = bytes[(offset + 16)..<(offset + 16 + count)] }
            }
            types.append(type)
            offset += length
        }
    }

    func secretText(at index: Int) -> String? { bodies[index].map { String(decoding: $0, as: UTF8.self) } }
    var secrets: [String] { bodies.keys.sorted().compactMap(secretText) }
}

/// Exchange blocks of the text view (a line starting with the time, then its indented header and body lines).
enum TextBlocks {
    /// The blocks about the lab's server, sorted (completion order may legitimately differ), without the start time
    /// and the duration on their first line (two captures of the same packets differ by microseconds).
    static func normalized(_ text: String, serverPort: Int) -> [String] {
        var blocks: [[Substring]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.wholeMatch(of: /\d\d:\d\d:\d\d\.\d{3} .*/) != nil {
                blocks.append([line])
            } else if !blocks.isEmpty {
                blocks[blocks.count - 1].append(line)
            }
        }
        return blocks.filter { $0[0].contains(":\(serverPort) ") }.map { block in
            let head = block[0].dropFirst(13).replacing(#/  \d+(\.\d+)? (µs|ms|s)  /#, with: "  ")
            return ([head] + block.dropFirst()).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        }.sorted()
    }
}

/// HAR entries, sorted, without what two captures of the same packets may disagree on: times and the
/// connection number.
enum HAREntries {
    static func normalized(_ path: String) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        let entries = (object?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        return try entries.map { entry in
            var kept = entry
            for key in ["startedDateTime", "time", "timings", "connection"] { kept.removeValue(forKey: key) }
            return String(decoding: try JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys]), as: UTF8.self)
        }.sorted()
    }
}

/// tcpdump writing a file while a test runs, stopped with SIGINT so its last packets are written.
final class TcpdumpBeside {
    private let process = Process()

    init(interface: String, filter: String, file: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // -Z root: the file is in a directory only root may write.
        process.arguments = ["tcpdump", "-i", interface, "-U", "-s", "0", "-B", "65536", "-Z", "root", "-w", file, filter]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Capturing once the file has its header (written when the handle is live).
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) < 24 {
            usleep(20_000)
        }
    }

    func stop() {
        kill(process.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
