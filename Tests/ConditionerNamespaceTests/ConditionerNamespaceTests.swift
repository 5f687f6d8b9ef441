import Foundation
import LinkConditioner
import TestSupport
import Testing

private let enabled = TestEnvironment.isRoot && TestEnvironment.hasProgram("ip") && TestEnvironment.hasProgram("tc")

/// Real kernel, namespaces this suite creates. The kernel here has no netem, so these use bandwidth-only
/// profiles; delay and loss are proven in the VM tests.
@Suite(.serialized, .enabled(if: enabled, "needs root, ip and tc: creates network namespaces"))
struct ConditionerNamespaceTests {
    /// iperf3 through the conditioned veth: upload (client egress, htb on vc) and download (vc's ingress
    /// redirected to the ifb) each within 10% of the profile; curl's download too.
    @Test(.enabled(if: TestEnvironment.hasProgram("iperf3") && TestEnvironment.hasProgram("curl"), "needs iperf3 and curl"))
    func throughputMatchesTheProfileInEachDirection() throws {
        let pair = try NamespacePair()
        let profiles = try pair.profileDirectory(downKbit: 4000, upKbit: 2000)
        let port = String(Int.random(in: 20000...40000))
        try pair.start(in: pair.server, ["iperf3", "-s", "-B", pair.serverAddress, "-p", port])
        let web = pair.stateDirectory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: web, withIntermediateDirectories: true)
        try Data((0..<(1_500_000)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }).write(to: web.appendingPathComponent("blob"))
        let webPort = String(Int.random(in: 40001...60000))
        try pair.start(in: pair.server, ["python3", "-m", "http.server", webPort, "--bind", pair.serverAddress, "--directory", web.path])

        let applied = try pair.condition(["apply", "Test BW", "-i", "vc", "--profiles", profiles.path])
        #expect(applied.status == 0, "\(applied.stderrText)")
        #expect(applied.stdoutText.contains("Applied \"Test BW\" to vc"))

        func iperf(_ extra: [String]) throws -> Double {
            var result: ProcessResult?
            // The server may need a moment to listen.
            _ = try waitFor(timeout: 5, interval: 0.2) {
                result = try run("ip", ["netns", "exec", pair.client, "iperf3", "-c", pair.serverAddress, "-p", port,
                                        "-t", "8", "-O", "2", "-J"] + extra)
                return result?.status == 0
            }
            let output = try #require(result)
            try #require(output.status == 0, "iperf3 failed: \(output.stdoutText.suffix(300)) \(output.stderrText)")
            let json = try #require(try JSONSerialization.jsonObject(with: output.stdout) as? [String: Any])
            let end = try #require(json["end"] as? [String: Any])
            let received = try #require(end["sum_received"] as? [String: Any])
            return try #require(received["bits_per_second"] as? Double)
        }
        let upload = try iperf([])
        let download = try iperf(["-R"])
        print("measured: upload \(upload / 1e6) Mbit/s (profile 2), download \(download / 1e6) Mbit/s (profile 4)")
        #expect(abs(upload - 2_000_000) / 2_000_000 <= 0.10, "upload \(upload) bit/s not within 10% of 2 Mbit/s")
        #expect(abs(download - 4_000_000) / 4_000_000 <= 0.10, "download \(download) bit/s not within 10% of 4 Mbit/s")

        let curl = try run("ip", ["netns", "exec", pair.client, "curl", "-s", "-o", "/dev/null", "-w", "%{speed_download}",
                                  "http://\(pair.serverAddress):\(webPort)/blob"])
        let curlBits = (Double(curl.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) * 8
        print("measured: curl download \(curlBits / 1e6) Mbit/s (profile 4)")
        #expect(abs(curlBits - 4_000_000) / 4_000_000 <= 0.10, "curl download \(curlBits) bit/s not within 10% of 4 Mbit/s")

        // The downlink really went through the ifb.
        let ifbRoot = try #require(try pair.qdiscs("tk-vc").first { $0["handle"] as? String == "7ac0:" })
        #expect(ifbRoot["kind"] as? String == "htb")
        let status = try pair.condition(["status", "--json"])
        #expect(status.status == 0)
        let active = try #require((try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])?["active"] as? [[String: Any]])
        let downlink = try #require(active.first?["downlink"] as? [String: Any])
        #expect((downlink["packets"] as? Int ?? 0) > 1000)
        #expect((active.first?["profile"] as? String) == "Test BW")

        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
    }

    @Test func offRestoresExactlyTheQdiscsThatWereThere() throws {
        let pair = try NamespacePair()
        let profiles = try pair.profileDirectory()
        let linksBefore = try pair.links()
        let defaultBefore = try pair.qdiscJSON()
        #expect(try pair.condition(["apply", "Test BW", "-i", "vc", "--profiles", profiles.path]).status == 0)
        #expect(try pair.qdiscs().contains { $0["handle"] as? String == "ffff:" })
        #expect(try pair.links().contains("tk-vc"))
        let off = try pair.condition(["off", "-i", "vc"])
        #expect(off.stdoutText.contains("Turned \"Test BW\" off on vc"))
        #expect(try pair.qdiscJSON() == defaultBefore)
        #expect(try pair.links() == linksBefore)

        // A foreign root qdisc: refused, then replaced with --force, then put back exactly.
        try pair.must("tc", ["-n", pair.client, "qdisc", "add", "dev", "vc", "root", "handle", "5:", "tbf",
                             "rate", "1mbit", "burst", "32kbit", "latency", "400ms"])
        let foreignBefore = try pair.qdiscJSON()
        let refused = try pair.condition(["apply", "Test BW", "-i", "vc", "--profiles", profiles.path])
        #expect(refused.status != 0)
        #expect(refused.stderrText.contains("tbf 5:"))
        #expect(try pair.qdiscJSON() == foreignBefore)
        let forced = try pair.condition(["apply", "Test BW", "-i", "vc", "--profiles", profiles.path, "--force"])
        #expect(forced.status == 0, "\(forced.stderrText)")
        #expect(try pair.qdiscs().first { $0["root"] as? Bool == true }?["handle"] as? String == "7ac0:")
        #expect(try pair.condition(["off", "-i", "vc"]).status == 0)
        #expect(try pair.qdiscJSON() == foreignBefore)
        #expect(try pair.links() == linksBefore)
    }

    /// `apply --for 3s` is killed with SIGKILL right after applying; the detached watchdog still reverts on time.
    @Test func killedApplyStillRevertsOnTime() throws {
        let pair = try NamespacePair()
        let profiles = try pair.profileDirectory()
        let before = try pair.qdiscJSON()
        let linksBefore = try pair.links()
        let started = Date()
        let apply = try pair.start(in: pair.client, [TestEnvironment.executable("condition").path, "apply", "Test BW",
                                                     "-i", "vc", "--profiles", profiles.path, "--for", "3s"],
                                   environment: pair.environment)
        let applied = try waitFor(timeout: 2.5) { try pair.qdiscJSON().contains("7ac0:") && pair.links().contains("tk-vc") }
        try #require(applied, "apply did not take effect")
        // Give apply a moment to start its watchdog, then kill it outright.
        _ = try waitFor(timeout: 1) { try run("pgrep", ["-f", "watchdog -i vc"]).status == 0 }
        #expect(try run("ps", ["-o", "comm=", "-p", String(apply.processIdentifier)]).stdoutText.hasPrefix("condition"))
        kill(apply.processIdentifier, SIGKILL)
        apply.waitUntilExit()
        #expect(apply.terminationReason == .uncaughtSignal)
        #expect(Date().timeIntervalSince(started) < 2.5)
        #expect(try pair.qdiscJSON().contains("7ac0:"), "still conditioned after the kill")

        let restored = try waitFor(timeout: 6) { try pair.qdiscJSON() == before && pair.links() == linksBefore }
        let elapsed = Date().timeIntervalSince(started)
        print("measured: restored \(elapsed) s after apply --for 3s started (killed with SIGKILL)")
        #expect(restored, "not restored after \(elapsed) s")
        #expect(elapsed >= 2.8 && elapsed <= 4.5, "restored after \(elapsed) s, expected about 3 s")
        // `off` removes the state file just after restoring the qdiscs; under load status may run in between.
        #expect(try waitFor(timeout: 1) { try pair.condition(["status"]).stdoutText.contains("No profile is active") })
    }

    /// `apply --for` waits in the foreground, shows the time left in `status`, and reverts at the deadline;
    /// SIGINT reverts at once.
    @Test func applyForWaitsAndRevertsAndInterruptRevertsEarly() throws {
        let pair = try NamespacePair()
        let profiles = try pair.profileDirectory()
        let before = try pair.qdiscJSON()
        let started = Date()
        let apply = try pair.start(in: pair.client, [TestEnvironment.executable("condition").path, "apply", "Test BW",
                                                     "-i", "vc", "--profiles", profiles.path, "--for", "2s"],
                                   environment: pair.environment)
        try #require(try waitFor(timeout: 1.5) { try pair.qdiscJSON().contains("7ac0:") })
        let status = try pair.condition(["status", "--json"])
        let active = try #require((try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])?["active"] as? [[String: Any]])
        let left = try #require(active.first?["secondsLeft"] as? Double)
        #expect(left > 0 && left <= 2, "seconds left: \(left)")  // how much is left depends on how busy the machine is
        apply.waitUntilExit()
        let elapsed = Date().timeIntervalSince(started)
        #expect(apply.terminationStatus == 0)
        #expect(elapsed >= 1.9 && elapsed < 3.5, "apply --for 2s returned after \(elapsed) s")
        #expect(try pair.qdiscJSON() == before)

        let interrupted = try pair.start(in: pair.client, [TestEnvironment.executable("condition").path, "apply", "Test BW",
                                                           "-i", "vc", "--profiles", profiles.path, "--for", "1m"],
                                         environment: pair.environment)
        try #require(try waitFor(timeout: 1.5) { try pair.qdiscJSON().contains("7ac0:") })
        _ = try waitFor(timeout: 1) { try run("pgrep", ["-f", "watchdog -i vc"]).status == 0 }
        kill(interrupted.processIdentifier, SIGINT)
        let reverted = try waitFor(timeout: 3) { try !interrupted.isRunning && pair.qdiscJSON() == before }
        #expect(reverted, "Ctrl-C did not turn the profile off")
        #expect(interrupted.terminationStatus == 0)
        // The watchdog saw its profile go and left without touching anything.
        #expect(try waitFor(timeout: 2) { try run("pgrep", ["-f", "watchdog -i vc"]).status != 0 })
    }

    /// A failure injected at each step of a real apply leaves vc exactly as before.
    @Test(arguments: [1, 2, 4, 5, 6, 8, 9, 10])
    func failurePartWayRollsBackOnTheRealKernel(step: Int) throws {
        let pair = try NamespacePair()
        try pair.must("tc", ["-n", pair.client, "qdisc", "add", "dev", "vc", "root", "handle", "9:", "pfifo", "limit", "77"])
        let before = try pair.qdiscJSON()
        let linksBefore = try pair.links()
        let profile = Profile(name: "Test BW", downlink: LinkSettings(bitsPerSecond: 4_000_000), uplink: LinkSettings(bitsPerSecond: 2_000_000))
        let conditioner = pair.conditioner(runner: FailingRunner(base: NamespaceCommandRunner(namespace: pair.client), failAt: step))
        let error = #expect(throws: ConditionerError.self) {
            try conditioner.apply(profile, to: pair.clientInterface, options: ApplyOptions(force: true))
        }
        #expect(error?.description.contains("rolled back to the state before") == true, "\(String(describing: error))")
        #expect(try pair.qdiscJSON() == before)
        #expect(try pair.links() == linksBefore)
        #expect(try conditioner.store.load(pair.clientInterface) == nil)
    }

    /// Switching profiles changes the classes in place; the ifb and the redirect stay as they are.
    @Test func switchingKeepsTheRedirectAndChangesRates() throws {
        let pair = try NamespacePair()
        let conditioner = pair.conditioner()
        let first = Profile(name: "A", downlink: LinkSettings(bitsPerSecond: 4_000_000), uplink: LinkSettings(bitsPerSecond: 2_000_000))
        let second = Profile(name: "B", downlink: LinkSettings(bitsPerSecond: 1_000_000), uplink: LinkSettings(bitsPerSecond: 512_000))
        _ = try conditioner.apply(first, to: pair.clientInterface)
        let ifbBefore = try pair.must("ip", ["-n", pair.client, "-j", "link", "show", "dev", "tk-vc"]).stdoutText
        let filterBefore = try pair.must("tc", ["-n", pair.client, "-j", "filter", "show", "dev", "vc", "parent", "ffff:"]).stdoutText
        let outcome = try conditioner.apply(second, to: pair.clientInterface)
        #expect(outcome.kind == .switched)
        #expect(try pair.must("ip", ["-n", pair.client, "-j", "link", "show", "dev", "tk-vc"]).stdoutText.contains(
            ifbBefore.components(separatedBy: ",").first ?? "x"))  // same ifindex
        #expect(try pair.must("tc", ["-n", pair.client, "-j", "filter", "show", "dev", "vc", "parent", "ffff:"]).stdoutText == filterBefore)
        let upClasses = try pair.must("tc", ["-n", pair.client, "class", "show", "dev", "vc"]).stdoutText
        let downClasses = try pair.must("tc", ["-n", pair.client, "class", "show", "dev", "tk-vc"]).stdoutText
        #expect(upClasses.contains("rate 512Kbit"), "\(upClasses)")
        #expect(downClasses.contains("rate 1Mbit"), "\(downClasses)")
        try conditioner.off(pair.clientInterface)
        #expect(try !pair.links().contains("tk-vc"))
    }

    /// Without netem the user-space engine carries delay and loss (UserspaceEngineNamespaceTests); what only netem
    /// does (duplication) is refused before anything changes.
    @Test func netemOnlyProfilesStopBeforeChangingAnythingWithoutNetem() throws {
        let pair = try NamespacePair()
        try #require(!LiveKernelSupport().netemAvailable(), "this kernel has netem; the VM tests cover it")
        let directory = pair.stateDirectory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"{"name": "Dup", "downlink": {"delayMs": 10, "duplicatePercent": 1}}"#.utf8)
            .write(to: directory.appendingPathComponent("dup.json"))
        let before = try pair.qdiscJSON()
        let result = try pair.condition(["apply", "Dup", "-i", "vc", "--profiles", directory.path])
        #expect(result.status != 0)
        #expect(result.stderrText.contains("netem"))
        #expect(result.stderrText.contains("nothing was changed"))
        #expect(try pair.qdiscJSON() == before)
        #expect(try !pair.links().contains("tk-vc"))
    }
}

/// Issue 11: a switch is one `tc -batch` on the real kernel, and a batch that fails part-way (tc has applied the
/// lines before the failing one) leaves the old profile exactly as it was.
@Suite(.serialized, .enabled(if: enabled, "needs root, ip and tc: creates network namespaces"))
struct BatchedSwitchNamespaceTests {
    /// Passes commands on, keeping the ones that change something; can slip a line tc refuses into the next batch.
    final class BatchRunner: CommandRunner, @unchecked Sendable {
        let base: any CommandRunner
        private let lock = NSLock()
        private var changes: [[String]] = []
        private var sabotageNext = false

        init(base: any CommandRunner) { self.base = base }

        var changing: [[String]] { lock.withLock { changes } }
        func sabotageNextBatch() { lock.withLock { sabotageNext = true } }

        func run(_ arguments: [String]) throws -> CommandResult {
            if !RecordingRunner.isQuery(arguments) { lock.withLock { changes.append(arguments) } }
            if arguments.count == 3, arguments[0] == "tc", arguments[1] == "-batch", lock.withLock({ sabotageNext }) {
                lock.withLock { sabotageNext = false }
                // After the batch's first line: a class tc cannot find, so tc stops there with one line applied.
                var lines = try String(contentsOfFile: arguments[2], encoding: .utf8).split(separator: "\n").map(String.init)
                lines.insert("class change dev vc parent 7ac0: classid 7ac0:99 htb rate 1mbit", at: 1)
                try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: arguments[2]))
            }
            return try base.run(arguments)
        }
    }

    @Test func aSwitchIsOneBatchAndAFailingOneChangesNothing() throws {
        let pair = try NamespacePair()
        let runner = BatchRunner(base: NamespaceCommandRunner(namespace: pair.client))
        let conditioner = Conditioner(runner: runner, store: StateStore(directory: pair.stateDirectory, namespaceID: pair.client),
                                      kernel: FixedKernelSupport(netem: false), inInitialNamespace: false)
        let first = Profile(name: "A", downlink: LinkSettings(bitsPerSecond: 4_000_000), uplink: LinkSettings(bitsPerSecond: 2_000_000))
        let second = Profile(name: "B", downlink: LinkSettings(bitsPerSecond: 1_000_000), uplink: LinkSettings(bitsPerSecond: 512_000))
        _ = try conditioner.apply(first, to: pair.clientInterface)
        // The pfifo leaves htb adds get handles the kernel numbers itself (8000: up, one counter for every device),
        // so a re-applied tree has other ones: those are left out of the comparison.
        func snapshot() throws -> [String] {
            try ["vc", "tk-vc"].flatMap { device in
                [try pair.qdiscJSON(device), try pair.must("tc", ["-n", pair.client, "class", "show", "dev", device]).stdoutText]
            }.map { $0.replacing(/\b[89a-f][0-9a-f]{3}:/, with: "AUTO:") }
        }
        let before = try snapshot()
        let filtersBefore = try pair.must("tc", ["-n", pair.client, "-j", "filter", "show", "dev", "vc", "parent", "ffff:"]).stdoutText

        runner.sabotageNextBatch()
        let error = #expect(throws: ConditionerError.self) { try conditioner.apply(second, to: pair.clientInterface) }
        // tc names line 2 of the file, which the runner took over; the error names the plan's command at that line.
        #expect(error?.description.contains("RTNETLINK answers") == true, "tc's own message: \(String(describing: error))")
        #expect(error?.description.contains("Command failed") == false, "\(String(describing: error))")
        #expect(error?.description.contains("rolled back") == true)
        #expect(try snapshot() == before, "the old profile's tree, classes and rates, exactly")
        #expect(try pair.must("tc", ["-n", pair.client, "-j", "filter", "show", "dev", "vc", "parent", "ffff:"]).stdoutText == filtersBefore)
        #expect(try conditioner.store.load(pair.clientInterface)?.profile.name == "A")

        let changesBefore = runner.changing.count
        let outcome = try conditioner.apply(second, to: pair.clientInterface)
        #expect(outcome.kind == .switched)
        let switchChanges = Array(runner.changing.dropFirst(changesBefore))
        #expect(switchChanges.count == 1 && switchChanges.first?.starts(with: ["tc", "-batch"]) == true, "\(switchChanges)")
        #expect(try pair.must("tc", ["-n", pair.client, "class", "show", "dev", "vc"]).stdoutText.contains("rate 512Kbit"))
        #expect(try pair.must("tc", ["-n", pair.client, "class", "show", "dev", "tk-vc"]).stdoutText.contains("rate 1Mbit"))
        try conditioner.off(pair.clientInterface)
        #expect(try !pair.links().contains("tk-vc"))
    }

    /// A schedule's switch: prepared ahead with `tc -batch -` started and waiting, committed by feeding it the plan.
    @Test func aPreparedSwitchRunsInItsWaitingTcAndAFailureRestores() throws {
        let pair = try NamespacePair()
        let conditioner = Conditioner(runner: NamespaceCommandRunner(namespace: pair.client),
                                      store: StateStore(directory: pair.stateDirectory, namespaceID: pair.client),
                                      kernel: FixedKernelSupport(netem: false), inInitialNamespace: false)
        let first = Profile(name: "A", downlink: LinkSettings(bitsPerSecond: 4_000_000), uplink: LinkSettings(bitsPerSecond: 2_000_000))
        let second = Profile(name: "B", downlink: LinkSettings(bitsPerSecond: 1_000_000), uplink: LinkSettings(bitsPerSecond: 512_000))
        func classes(_ device: String) throws -> String {
            try pair.must("tc", ["-n", pair.client, "class", "show", "dev", device]).stdoutText
        }
        _ = try conditioner.apply(first, to: pair.clientInterface)
        let prepared = try #require(try conditioner.prepareSwitch(to: second, on: pair.clientInterface))
        #expect(prepared.startedBatch != nil, "a tc -batch - waits for the plan")
        #expect(try classes("vc").contains("rate 2Mbit"), "preparing changes nothing")
        #expect(try conditioner.commit(prepared).kind == .switched)
        #expect(try classes("vc").contains("rate 512Kbit") && classes("tk-vc").contains("rate 1Mbit"))

        // Discarded: the waiting tc ends having done nothing.
        let discarded = try #require(try conditioner.prepareSwitch(to: first, on: pair.clientInterface))
        conditioner.discard(discarded)
        #expect(try classes("vc").contains("rate 512Kbit"))

        // The ifb's tree removed behind the prepared switch's back: its lines fail in the waiting tc, and B (the
        // profile in force before) is applied afresh, in full.
        let failing = try #require(try conditioner.prepareSwitch(to: first, on: pair.clientInterface))
        try pair.must("tc", ["-n", pair.client, "qdisc", "del", "dev", "tk-vc", "root"])
        let error = #expect(throws: ConditionerError.self) { try conditioner.commit(failing) }
        #expect(error?.description.contains("rolled back") == true, "\(String(describing: error))")
        #expect(try classes("vc").contains("rate 512Kbit") && classes("tk-vc").contains("rate 1Mbit"))
        #expect(try conditioner.store.load(pair.clientInterface)?.profile.name == "B")
        try conditioner.off(pair.clientInterface)
        #expect(try !pair.links().contains("tk-vc"))
    }
}
