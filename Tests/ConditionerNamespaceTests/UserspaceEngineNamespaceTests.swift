import Foundation
import LinkConditioner
import TestSupport
import Testing

private let userspaceEngineWillBeUsed: Bool = {
    let kernel = LiveKernelSupport()
    return getuid() == 0 && !kernel.netemAvailable() && kernel.userspaceEngineAvailable()
}()

/// The user-space engine on this kernel (no sch_netem): delay through the netfilter queue, loss and Black Hole
/// through nftables, and nothing left behind by `off` or by an engine killed with SIGKILL. Real pings between two
/// namespaces; `ping -U` times user to user (its default uses the kernel's receive time stamp, taken before
/// netfilter holds an arriving packet, so it would not see the downlink delay an application sees).
@Suite(.serialized, .enabled(if: userspaceEngineWillBeUsed,
                             "runs where the kernel has no netem and the user-space engine can run (elsewhere netem is used)"))
struct UserspaceEngineNamespaceTests {
    func profiles(_ pair: NamespacePair, _ files: [String: String]) throws -> URL {
        let directory = pair.stateDirectory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, json) in files { try Data(json.utf8).write(to: directory.appendingPathComponent(name + ".json")) }
        return directory
    }

    /// Round-trip times in milliseconds of `count` pings `interval` seconds apart.
    func pings(_ pair: NamespacePair, count: Int, interval: String = "0.05", wait: String = "2") throws -> [Double] {
        let result = try run("ip", ["netns", "exec", pair.client, "ping", "-U", "-n", "-c", String(count), "-i", interval,
                                    "-W", wait, pair.serverAddress])
        return result.stdoutText.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("time=") }.flatMap { Double($0.dropFirst(5)) }
        }
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// What the engine leaves: its table, its queue rules, its process, its files, the ifb.
    func leftovers(_ pair: NamespacePair) throws -> [String] {
        var found: [String] = []
        let ruleset = try run("ip", ["netns", "exec", pair.client, "nft", "list", "ruleset"]).stdoutText
        if ruleset.contains("tapkit_") { found.append("nftables table") }
        if ruleset.contains("queue num") { found.append("queue rule") }
        if try run("pgrep", ["-f", "__engine -i vc .*\(pair.client)"]).status == 0 { found.append("engine process") }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: pair.stateDirectory.path)) ?? []
        found += files.filter { $0 != "profiles" }
        if try pair.links().contains(where: { $0.hasPrefix("tk-") }) { found.append("ifb") }
        return found
    }

    @Test func delayBothWaysIsAddedAndOffLeavesNothing() throws {
        let pair = try NamespacePair()
        let directory = try profiles(pair, ["delay": #"{"name": "Engine Delay", "downlink": {"delayMs": 50}, "uplink": {"delayMs": 30}}"#])
        let base = median(try pings(pair, count: 10))
        let applied = try pair.condition(["apply", "Engine Delay", "-i", "vc", "--profiles", directory.path])
        #expect(applied.status == 0, "\(applied.stderrText)")
        let status = try pair.condition(["status"]).stdoutText
        #expect(status.contains("engine: user space"), "\(status)")
        let times = try pings(pair, count: 40)
        try #require(times.count == 40, "all pings answered")
        let added = median(times) - base
        print("user-space engine: 80 ms profile, added RTT median \(added) ms, min \(times.min()! - base) ms")
        // A loaded, shared CI machine and a debug build: 5 ms here; Scripts/bench-condition measures the 2 ms target.
        #expect(abs(added - 80) <= 5, "added \(added) ms")
        #expect(times.min()! - base >= 79.5, "never early: \(times.min()!)")
        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
        #expect(try waitFor(timeout: 3) { try leftovers(pair).isEmpty }, "\((try? leftovers(pair)) ?? [])")
        #expect(median(try pings(pair, count: 5)) < 5)
    }

    /// Issue 36: ping's default RTT (the kernel's receive stamp, `SO_TIMESTAMP`) from the conditioned side missed
    /// the downlink delay (30.5 ms for 50 down + 30 up; 100.5 under Slow Net), because the stamp is taken as a
    /// packet reaches the interface and the engine holds it after that. With `ReceiveRestamp` it is taken at
    /// delivery, after the hold, as netem's is: every ping, from either side, IPv4 and IPv6, with the kernel's stamp
    /// or user space's (`-U`), sees both delays.
    @Test func pingSeesBothDelaysFromEitherSideAndFamily() throws {
        let pair = try NamespacePair()
        let directory = try profiles(pair, ["delay": #"{"name": "Engine Delay", "downlink": {"delayMs": 50}, "uplink": {"delayMs": 30}}"#])
        let applied = try pair.condition(["apply", "Engine Delay", "-i", "vc", "--profiles", directory.path])
        try #require(applied.status == 0, "\(applied.stderrText)")
        let serverIPv6 = pair.serverAddress.replacing("10.77.", with: "fd77:").replacing(/\.2$/, with: "::2")
        let clientAddress = pair.serverAddress.replacing(/\.2$/, with: ".1")
        let clientIPv6 = serverIPv6.replacing("::2", with: "::1")
        var figures: [String] = []
        for (namespace, target) in [(pair.client, pair.serverAddress), (pair.client, serverIPv6),
                                    (pair.server, clientAddress), (pair.server, clientIPv6)] {
            for userTime in [false, true] {
                let result = try run("ip", ["netns", "exec", namespace, "ping"] + (userTime ? ["-U"] : [])
                                     + ["-n", "-c", "10", "-i", "0.05", "-W", "2", target])
                let times = result.stdoutText.split(separator: "\n").compactMap { line in
                    line.split(separator: " ").first { $0.hasPrefix("time=") }.flatMap { Double($0.dropFirst(5)) }
                }
                let from = namespace == pair.client ? "conditioned side" : "far side"
                figures.append("\(from) \(target)\(userTime ? " -U" : ""): median \(times.isEmpty ? -1 : median(times)) ms")
                try #require(times.count >= 8, "\(from) \(target): \(result.stdoutText)")
                #expect(median(times) >= 79.5 && median(times) <= 90, "\(from) to \(target)\(userTime ? " (-U)" : ""): \(times)")
            }
        }
        print("user-space engine, 50 ms down + 30 ms up, ping RTTs: " + figures.joined(separator: "; "))
        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
        #expect(try waitFor(timeout: 3) { try leftovers(pair).isEmpty }, "\((try? leftovers(pair)) ?? [])")
    }

    @Test func lossIsInsideItsBinomialIntervalAndBlackHoleDropsAll() throws {
        let pair = try NamespacePair()
        let directory = try profiles(pair, ["loss": #"{"name": "Engine Loss", "uplink": {"lossPercent": 30}}"#])
        #expect(try pair.condition(["apply", "Engine Loss", "-i", "vc", "--profiles", directory.path]).status == 0)
        let sent = 600
        let received = try pings(pair, count: sent, interval: "0.002", wait: "1").count
        // 99.9% binomial interval for 30% loss over 600: 420 ± 3.29 × √(600 × 0.3 × 0.7). Not 99%: this runs in every
        // CI run, and a 99% interval fails one run in a hundred by chance alone (CI saw 452, 2.85 standard deviations;
        // six reruns gave 410-430). Scripts/bench-condition reports the 99% interval.
        let spread = 3.29 * (Double(sent) * 0.3 * 0.7).squareRoot()
        print("user-space engine: 30% uplink loss, \(received) of \(sent) answered (expected 420 ± \(Int(spread)))")
        #expect(abs(Double(received) - 420) <= spread, "\(received) answered")
        #expect(try pair.condition(["apply", "Black Hole", "-i", "vc", "--yes"]).status == 0)
        #expect(try pings(pair, count: 10, interval: "0.02", wait: "1").isEmpty)
        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
        #expect(try waitFor(timeout: 3) { try leftovers(pair).isEmpty }, "\((try? leftovers(pair)) ?? [])")
    }

    /// An upload from this host through a held uplink reaches the profile's rate: the engine sends copies and frees
    /// the originals, so TCP's small-queue limit does not throttle the sender (before: 2 Mbit/s at 50 Mbit/s, 20 ms).
    @Test(.enabled(if: TestEnvironment.hasProgram("iperf3"), "needs iperf3 (Scripts/setup --test)"))
    func anUploadThroughTheDelayReachesTheRate() throws {
        let pair = try NamespacePair()
        let directory = try profiles(pair, ["up": #"{"name": "Engine Up", "uplink": {"bandwidthKbit": 8000, "delayMs": 20}}"#])
        #expect(try pair.condition(["apply", "Engine Up", "-i", "vc", "--profiles", directory.path]).status == 0)
        let port = String(Int.random(in: 20_000...29_999))
        try pair.start(in: pair.server, ["iperf3", "-s", "-1", "-B", pair.serverAddress, "-p", port])
        usleep(500_000)
        let result = try run("ip", ["netns", "exec", pair.client, "timeout", "20", "iperf3", "-c", pair.serverAddress,
                                    "-p", port, "-t", "5", "-f", "k", "-J"])
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let end = try #require(json["end"] as? [String: Any])
        let received = try #require((end["sum_received"] as? [String: Any])?["bits_per_second"] as? Double)
        print("user-space engine: upload through 20 ms at 8 Mbit/s: \(Int(received / 1000)) kbit/s received")
        // Goodput is about 95% of htb's frame rate; TCP's start takes a little of five seconds.
        #expect(received >= 8_000_000 * 0.85, "\(received)")
        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
    }

    @Test func aKilledEngineIsCleanedUpByItsSupervisor() throws {
        let pair = try NamespacePair()
        #expect(try pair.condition(["apply", "3G", "-i", "vc"]).status == 0)
        let worker = try run("pgrep", ["-f", "__engine -i vc .*--role worker"]).stdoutText
            .split(separator: "\n").compactMap { Int32($0) }
        // Only this pair's engine: its record names this pair's state directory.
        let ours = try worker.filter { pid in
            try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).contains(pair.stateDirectory.path)
        }
        try #require(ours.count == 1, "one engine worker: \(worker)")
        kill(ours[0], SIGKILL)
        #expect(try waitFor(timeout: 5) { try leftovers(pair).isEmpty }, "\((try? leftovers(pair)) ?? [])")
        #expect(median(try pings(pair, count: 5)) < 5)
    }

    /// The engine processes of this pair's profile (their command lines name its state directory), by role.
    func engineProcesses(_ pair: NamespacePair, role: String) throws -> [Int32] {
        try run("pgrep", ["-f", "__engine -i vc .*--role \(role)"]).stdoutText.split(separator: "\n").compactMap { Int32($0) }
            .filter { pid in
                ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains(pair.stateDirectory.path)
            }
    }

    /// Everything the profile may change in the client namespace, to compare before and after.
    func listings(_ pair: NamespacePair) throws -> [String] {
        try [["nft", "list", "ruleset"], ["tc", "qdisc", "show"], ["ip", "-o", "link", "show"]].map { command in
            try pair.must("ip", ["netns", "exec", pair.client] + command).stdoutText
        }
    }

    /// kill -9 of the supervisor: the engine sees it gone, stops and turns the profile off itself; the ruleset
    /// (iptables-nft's mangle tables included), qdiscs and links are as before apply.
    @Test func aKilledSupervisorLeavesNothingBehind() throws {
        let pair = try NamespacePair()
        let before = try listings(pair)
        #expect(try pair.condition(["apply", "3G", "-i", "vc"]).status == 0)
        let supervisor = try engineProcesses(pair, role: "supervise")
        try #require(supervisor.count == 1, "one supervisor: \(supervisor)")
        kill(supervisor[0], SIGKILL)
        #expect(try waitFor(timeout: 5) { try leftovers(pair).isEmpty && engineProcesses(pair, role: "worker").isEmpty },
                "\((try? leftovers(pair)) ?? [])")
        #expect(try listings(pair) == before)
    }

    /// Both killed at once: nothing runs to clean up, so the next `status` (or `apply`) finds the engine gone,
    /// says so, and restores the interface; `off` alone also restores exactly what was there.
    @Test func theNextCommandRestoresWhatAKilledEngineLeft() throws {
        let pair = try NamespacePair()
        let before = try listings(pair)
        for next in [["status"], ["off", "-i", "vc"], ["apply", "DSL", "-i", "vc"]] {
            #expect(try pair.condition(["apply", "3G", "-i", "vc"]).status == 0)
            let processes = try engineProcesses(pair, role: "supervise") + engineProcesses(pair, role: "worker")
            try #require(processes.count == 2, "supervisor and worker: \(processes)")
            for pid in processes { kill(pid, SIGKILL) }
            #expect(try waitFor(timeout: 3) { try engineProcesses(pair, role: "worker").isEmpty })
            #expect(try listings(pair) != before, "the rules stay while nothing runs")
            let result = try pair.condition(next)
            #expect(result.status == 0, "\(next): \(result.stderrText)")
            if next[0] != "off" {
                #expect(result.stderrText.contains("had stopped (its processes were killed)"), "\(next): \(result.stderrText)")
            }
            if next[0] == "apply" {
                // A fresh apply with an engine of its own, not a switch onto the dead one.
                #expect(try engineProcesses(pair, role: "worker").count == 1)
                #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
            }
            #expect(try leftovers(pair).isEmpty, "\(next): \((try? leftovers(pair)) ?? [])")
            #expect(try listings(pair) == before, "\(next)")
        }
    }
}
