import Foundation
import LinkConditioner
import Sandbox
import TestSupport
import Testing

/// Connection faults without root: the flags, the profile fields, and the exact `nft` script each lands in
/// (plan, apply, sandbox). What the faults do to real connections is ConnectionFaultsNamespaceTests'.
@Suite struct ConnectionFaultsTests {
    let binary = TestEnvironment.executable("condition").path

    func condition(_ arguments: [String]) throws -> ProcessResult {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build first: swift build")
        var env = ProcessInfo.processInfo.environment
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-home-\(UUID().uuidString)")
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = nil
        env["TAPKIT_STATE_DIR"] = home.appendingPathComponent("state").path
        return try run(binary, arguments, environment: env)
    }

    @Test func profileFieldsAreReadAndCheckedWithTheFieldNamed() throws {
        let profile = try ProfileFile.parse(Data(#"""
            {"name": "Flaky", "faults": {"resetAfterBytes": 1000, "resetAfterMs": 2500, "resetPercent": 30,
                                         "stallAfterBytes": 5000, "refuse": "unreachable"}}
            """#.utf8), file: "flaky.json")
        #expect(profile.faults == ConnectionFaults(resetAfterBytes: 1000, resetAfterMilliseconds: 2500, resetPercent: 30,
                                                   stallAfterBytes: 5000, refuse: .unreachable))
        #expect(profile.problems == [])
        for (json, field) in [(#"{"resetPercent": 0}"#, "faults.resetPercent"), (#"{"resetPercent": 101}"#, "faults.resetPercent"),
                              (#"{"resetAfterMs": 0}"#, "faults.resetAfterMs"), (#"{"resetAfterMs": 90000000}"#, "faults.resetAfterMs"),
                              (#"{"resetAfter": 1}"#, "faults.resetAfter")] {
            #expect(throws: ProfileFileError.self, "\(json)") {
                do { _ = try ProfileFile.parse(Data(#"{"name": "x", "faults": \#(json)}"#.utf8), file: "x.json") } catch let error as ProfileFileError {
                    #expect(error.field == field, "\(error)")
                    throw error
                }
            }
        }
        #expect(Profile(name: "x", faults: ConnectionFaults(resetPercent: 0)).problems.contains { $0.contains("resetPercent") })
    }

    @Test func flagsOverrideTheProfileFieldByField() {
        let profile = ConnectionFaults(resetAfterBytes: 1000, refuse: .reset)
        #expect(profile.overridden(by: ConnectionFaults(resetAfterMilliseconds: 5, refuse: .timeout))
                == ConnectionFaults(resetAfterBytes: 1000, resetAfterMilliseconds: 5, refuse: .timeout))
    }

    /// `plan` prints the very command apply runs: the table built by the one function, from the flags.
    @Test func planWithFlagsPrintsTheTableApplyRuns() throws {
        let result = try condition(["plan", "-i", "eth0", "--reset-after", "1.5s", "--reset-percent", "25%", "--stall-after-bytes", "9000",
                                    "--refuse", "timeout", "--host", "192.0.2.1", "--exclude", "192.0.2.1:22"])
        #expect(result.status == 0, "\(result.stderrText)")
        let faults = ConnectionFaults(resetAfterMilliseconds: 1500, resetPercent: 25, stallAfterBytes: 9000, refuse: .timeout)
        let selection = TrafficSelection(hosts: [try IPNetwork("192.0.2.1")],
                                         exclusions: [.init(try RemoteEndpoint("192.0.2.1:22"))])
        let command = ConnectionFaults.createTable(faults, interface: try InterfaceName("eth0"), selection: selection)
        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        let printed = try #require(lines.first { $0.hasPrefix("nft add table") })
        // No argument holds a space: the shell-quoted line splits back into the arguments.
        #expect(printed.split(separator: " ").map { $0.hasPrefix("'") ? String($0.dropFirst().dropLast()) : String($0) } == command)
        #expect(lines.contains("# faults: reset connections after 1500 ms (25% of connections), stall connections after 9000 bytes, "
                               + "let new connections time out (TCP)"), "\(result.stdoutText)")
        #expect(lines.contains("nft delete table inet tapkit_faults_eth0"))
    }

    @Test func badFlagsSayWhatIsExpected() throws {
        for (arguments, expected) in [(["--reset-after-bytes", "1k"], "invalid --reset-after-bytes \"1k\": expected a whole number of bytes"),
                                      (["--reset-after", "-2s"], "invalid --reset-after \"-2s\": expected a duration"),
                                      (["--reset-percent", "150"], "invalid --reset-percent \"150\""),
                                      (["--refuse", "maybe"], "maybe"),
                                      ([], "give a fault flag such as --refuse reset")] {
            let result = try condition(["plan", "-i", "eth0"] + arguments)
            #expect(result.status != 0)
            #expect(result.stderrText.contains(expected), "\(arguments): \(result.stderrText)")
        }
        let run = try condition(["run", "--", "true"])
        #expect(run.status != 0 && run.stderrText.contains("give a fault flag"), "\(run.stderrText)")
        let schedule = try condition(["apply", "3G", "-i", "eth0", "--then", "Edge", "--after", "2s", "--refuse", "reset"])
        #expect(schedule.status != 0 && schedule.stderrText.contains("fault flags apply to one profile"), "\(schedule.stderrText)")
    }

    /// --exclude reaches the fault rules: excluded far ends return before any fault, both ways.
    @Test func exclusionsReturnFirstInBothChains() throws {
        let selection = TrafficSelection(exclusions: [.init(try RemoteEndpoint("[2001:db8::7]:443")), .init(try RemoteEndpoint("10.1.0.0/16"))])
        let command = ConnectionFaults.createTable(ConnectionFaults(refuse: .reset), interface: try InterfaceName("eth0"),
                                                   selection: selection).joined(separator: " ")
        #expect(command.contains(#"add rule inet tapkit_faults_eth0 uplink oifname "eth0" ip6 daddr 2001:db8::7/128 meta l4proto { tcp, udp } th dport 443 return"#))
        #expect(command.contains(#"add rule inet tapkit_faults_eth0 downlink iifname "eth0" ip saddr 10.1.0.0/16 return"#))
        let refuse = try #require(command.range(of: "comment \"refuse\""))
        #expect(command.range(of: "return")!.lowerBound < refuse.lowerBound)
        // A profile's excludeLoopback reaches them too, through the plan.
        let plan = PlanBuilder.applyPlan(profile: Profile(name: "x", excludeLoopback: true, faults: ConnectionFaults(refuse: .reset)),
                                         interface: try InterfaceName("eth0")).map { $0.joined(separator: " ") }
        #expect(plan.contains { $0.contains("ip daddr 127.0.0.0/8 return") && $0.contains("ip6 saddr ::1/128 return") })
    }

    /// In a sandbox the table is made in its namespace, on its end of the veth, and a switch replaces it.
    @Test func sandboxFaultsGoInsideItsNamespace() throws {
        let identity = try SandboxIdentity(id: "abc123", slot: 7)
        let faults = ConnectionFaults(resetAfterBytes: 100_000)
        let plan = try SandboxConditioning.applyPlan(Profile(name: "F", faults: faults), to: identity)
        #expect(plan == [["ip", "netns", "exec", identity.namespace]
                         + ConnectionFaults.createTable(faults, interface: try InterfaceName("eth0"), selection: .allIP)])
        let switched = try SandboxConditioning.switchPlan(from: Profile(name: "F", faults: faults), to: Profile(name: "G"), on: identity)
        #expect(switched == [["ip", "netns", "exec", identity.namespace, "nft", "delete", "table", "inet", "tapkit_faults_eth0"]])
        #expect(SandboxConditions(recordText: SandboxConditions(Profile(name: "F", faults: faults)).recordText)?.profile.faults == faults)
        #expect(SandboxConditions(recordText: #"{"name":"old","downlink":{"bitsPerSecond":0,"delayMicroseconds":0,"jitterMicroseconds":0,"lossPercent":0},"uplink":{"bitsPerSecond":0,"delayMicroseconds":0,"jitterMicroseconds":0,"lossPercent":0},"dnsDelayMicroseconds":0}"#)?.faults == nil)
    }
}
