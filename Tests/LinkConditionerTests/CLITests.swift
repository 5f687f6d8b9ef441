import Foundation
import LinkConditioner
import TestSupport
import Testing

/// The `condition` executable's interface: help text, plan output, and errors that say what to do.
/// None of these need root or change anything.
@Suite struct CLITests {
    let binary = TestEnvironment.executable("condition").path

    func condition(_ arguments: [String], home: URL? = nil) throws -> ProcessResult {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build first: swift build")
        var env = ProcessInfo.processInfo.environment
        let home = home ?? FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-home-\(UUID().uuidString)")
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = nil
        env["TAPKIT_STATE_DIR"] = home.appendingPathComponent("state").path
        return try run(binary, arguments, environment: env)
    }

    @Test func helpListsEveryCommand() throws {
        let help = try condition(["--help"]).stdoutText
        for command in ["list", "show", "apply", "off", "status", "plan", "doctor"] {
            #expect(help.contains("  \(command)"), "help lacks \(command)")
        }
        #expect(!help.contains("watchdog"))
    }

    @Test func applyHelpDocumentsEveryFlag() throws {
        let help = try condition(["apply", "--help"]).stdoutText
        for flag in ["--for <duration>", "--force", "--yes", "--no-wait", "-i, --interface <iface>", "--profiles <dir>",
                     "--engine <engine>"] {
            #expect(help.contains(flag), "apply help lacks \(flag)")
        }
    }

    @Test func statusAndOffHelp() throws {
        #expect(try condition(["status", "--help"]).stdoutText.contains("--json"))
        #expect(try condition(["off", "--help"]).stdoutText.contains("-i, --interface <iface>"))
        #expect(try condition(["plan", "--help"]).stdoutText.contains("nothing is run"))
    }

    @Test func listShowsAllBuiltInsAndMarksApproximateOnes() throws {
        let list = try condition(["list"])
        #expect(list.status == 0)
        for name in PlanTests.names { #expect(list.stdoutText.contains(name)) }
        #expect(list.stdoutText.contains("LTE *"))
        #expect(list.stdoutText.contains("Slow Net            32 kbit/s, 100 ms"))
    }

    @Test func showSaysWhatAProfileDoes() throws {
        let show = try condition(["show", "edge"])
        #expect(show.stdoutText.contains("Downlink: bandwidth 240 kbit/s, delay 400 ms, no jitter, no loss"))
        #expect(show.stdoutText.contains("Uplink:   bandwidth 200 kbit/s, delay 440 ms"))
        let unknown = try condition(["show", "Warp Speed"])
        #expect(unknown.status != 0)
        #expect(unknown.stderrText.contains("no profile named \"Warp Speed\""))
    }

    @Test func planPrintsTheExactCommands() throws {
        let plan = try condition(["plan", "DSL", "-i", "eth0"])
        #expect(plan.status == 0)
        let commands = plan.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        let expected = try #require(ExpectedPlans.eth0["DSL"])
        if plan.stdoutText.contains("# engine: netem") {
            #expect(commands == expected.apply + "\n" + expected.off)
        } else {
            // A kernel without netem: htb keeps the rates, the user-space engine the rest (UserspaceEngineTests).
            #expect(plan.stdoutText.contains("# engine: user space"))
            #expect(!commands.contains("netem"))
            #expect(commands.contains("nft add table inet tapkit_eth0"))
            #expect(commands.contains("__engine -i eth0"))
            #expect(commands.contains("nft delete table inet tapkit_eth0"))
        }
    }

    @Test(arguments: ["eth0;reboot", "-x", "waytoolonginterfacename"])
    func badInterfaceIsRejectedBeforeAnythingRuns(name: String) throws {
        let result = try condition(["plan", "DSL", "-i", name])
        #expect(result.status != 0)
        #expect(result.stderrText.contains("interface name") || result.stderrText.contains("Missing value"))
    }

    @Test func badDurationIsRejected() throws {
        let result = try condition(["apply", "DSL", "-i", "eth0", "--for", "soon"])
        #expect(result.status != 0)
        #expect(result.stderrText.contains("invalid --for \"soon\""))
    }

    @Test func userProfilesOverrideBuiltInsAndBadFilesAreNamed() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-home-\(UUID().uuidString)")
        let user = home.appendingPathComponent(".config/tapkit/profiles")
        try FileManager.default.createDirectory(at: user, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try Data(#"{"name": "DSL", "downlink": {"bandwidthKbit": 16000}}"#.utf8).write(to: user.appendingPathComponent("dsl.json"))
        #expect(try condition(["show", "DSL"], home: home).stdoutText.contains("bandwidth 16 Mbit/s"))

        let extra = home.appendingPathComponent("more")
        try FileManager.default.createDirectory(at: extra, withIntermediateDirectories: true)
        try Data(#"{"name": "DSL", "downlink": {"bandwidthKbit": "16 mbit"}}"#.utf8).write(to: extra.appendingPathComponent("dsl2.json"))
        // One bad file is reported; every other profile is still listed.
        let bad = try condition(["list", "--profiles", extra.path], home: home)
        #expect(bad.status == 0)
        #expect(bad.stderrText.contains("skipped "))
        #expect(bad.stderrText.contains("dsl2.json: field \"downlink.bandwidthKbit\": expected a number of kilobits per second"))
        #expect(bad.stdoutText.contains("Slow Net") && bad.stdoutText.contains("DSL"))
        // A bad file affects only itself: other profiles work, with a warning naming it...
        let show = try condition(["show", "Slow Net", "--profiles", extra.path], home: home)
        #expect(show.status == 0 && show.stdoutText.contains("32 kbit/s"))
        #expect(show.stderrText.contains("warning: skipped ") && show.stderrText.contains("dsl2.json"))
        // ...but asking for the profile it may have been (its name inside, or its file name) is that file's error,
        // not a silent fall back to the DSL of another directory.
        for name in ["DSL", "dsl2"] {
            let asked = try condition(["plan", name, "-i", "lo", "--profiles", extra.path], home: home)
            #expect(asked.status == 1, "\(name)")
            #expect(asked.stderrText.contains("dsl2.json: field \"downlink.bandwidthKbit\""), "\(name)")
            #expect(!asked.stderrText.contains("warning"), "\(name)")
        }
    }

    /// Issue 36: `apply` read the catalog twice (the schedule check, then the profile) and warned about a bad file
    /// twice. Root only: apply stops before reading profiles without it (the interface does not exist, so nothing
    /// is changed).
    @Test(.enabled(if: getuid() == 0, "apply reads profiles only as root"))
    func aBadProfileFileIsWarnedAboutOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"name": "Bad", "downlink": {"bandwidthKbit": "16 mbit"}}"#.utf8).write(to: dir.appendingPathComponent("bad.json"))
        for arguments in [["apply", "3G", "-i", "w36cnone0"], ["apply", "3G", "-i", "w36cnone0", "--for", "1s"], ["plan", "3G", "-i", "lo"],
                          ["show", "3G"]] {
            let result = try condition(arguments + ["--profiles", dir.path])
            let warnings = result.stderrText.split(separator: "\n").filter { $0.contains("warning: skipped") }
            #expect(warnings.count == 1, "\(arguments): \(result.stderrText)")
        }
    }

    /// Issue 36: `show` said "Needs: netem" where `list` said the user-space engine could carry the profile here.
    /// Both print the same judgement (`KernelFit`): show's `Here:` line is list's HERE column, word for word.
    @Test func showAndListGiveOneAnswerAboutThisKernel() throws {
        let list = try condition(["list"]).stdoutText.split(separator: "\n")
        for name in ["Slow Net", "3G", "Black Hole", "Very Bad Network"] {
            let row = try #require(list.first { $0.hasPrefix(name + "  ") }, "\(name) listed")
            let shown = try condition(["show", name]).stdoutText.split(separator: "\n")
            let here = try #require(shown.first { $0.hasPrefix("  Here:") }, "\(name): \(shown)")
            let verdict = here.dropFirst("  Here:".count).trimmingCharacters(in: .whitespaces)
            #expect(["yes", "yes (user-space engine)", "no: needs netem"].contains(verdict), "\(here)")
            #expect(row.hasSuffix("  " + verdict), "\(name): list says \(row), show says \(here)")
        }
    }

    /// Issue 36: the Profiles tables of README.md and docs/condition.md said "LTE (approximate)", a name `apply`
    /// refuses. Every row is `condition list`'s own (name with `*` when approximate, downlink, uplink, DNS), and
    /// every built-in is in them, so they cannot drift.
    @Test func theProfileTablesAreListsOwnRows() throws {
        let lines: [String] = try condition(["list"]).stdoutText.split(separator: "\n").dropFirst().map(String.init)
        var listed: [[String]] = []
        for line in lines.prefix(while: { !$0.isEmpty }) {
            let cells: [String] = line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if cells.count == 5 && cells[2] != "(schedule)" { listed.append([cells[0], cells[1], cells[2], cells[3] == "-" ? "" : cells[3]]) }
        }
        try #require(listed.count >= 10)
        let root = TestEnvironment.packageRoot
        for file in ["README.md", "docs/condition.md"] {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            let all: [String] = text.split(separator: "\n").map(String.init)
            let rows: [String] = Array(all.drop(while: { !$0.lowercased().hasPrefix("| profile | downlink | uplink | dns |") }).dropFirst(2)
                .prefix(while: { $0.hasPrefix("|") }))
            let table: [[String]] = rows.map { row in
                Array(row.components(separatedBy: "|").dropFirst().dropLast()).map { $0.trimmingCharacters(in: .whitespaces) }
            }
            #expect(Set(table) == Set(listed), "\(file): \(Set(table).symmetricDifference(Set(listed)))")
        }
    }

    /// Issue 36: the README's `condition list` sample lacked the HERE column. Its lines are `list`'s own: the header
    /// as printed, each row one `list` prints (the HERE verdict is this kernel's, so any of the three is taken).
    @Test func theReadmeListSampleIsListsOwnOutput() throws {
        let printed = try condition(["list"]).stdoutText.split(separator: "\n").map(String.init)
        let header = try #require(printed.first)
        let here = try #require(header.range(of: "HERE")?.lowerBound.utf16Offset(in: header))
        func columns(_ line: String) -> String { String(line.prefix(here)) }
        let verdicts = ["yes", "yes (user-space engine)", "no: needs netem"]
        let root = TestEnvironment.packageRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8).split(separator: "\n").map(String.init)
        let sample = Array(readme.drop(while: { $0 != "$ condition list" }).dropFirst().prefix(while: { !$0.isEmpty && !$0.hasPrefix("$ ") }))
        try #require(sample.count >= 4, "no `$ condition list` sample in README.md")
        #expect(sample.first == header)
        let rows = Dictionary(printed.dropFirst().map { (columns($0), $0) }, uniquingKeysWith: { first, _ in first })
        for line in sample.dropFirst() where line != "..." {
            #expect(rows[columns(line)] != nil, "README row not printed by `condition list`: \(line)")
            #expect(verdicts.contains(String(line.dropFirst(here))), "README row's HERE: \(line)")
        }
    }

    @Test func aDirectoryNamedLikeAProfileIsNamedNotACocoaError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("x.json"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let list = try condition(["list", "--profiles", dir.path])
        #expect(list.status == 0)
        #expect(list.stderrText.contains("x.json: is a directory; expected a profile file"))
        #expect(!list.stderrText.contains("NSCocoaErrorDomain"))
    }

    @Test func aProfileThatChangesNothingIsRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(#"{"name": "Nothing", "downlink": {"delayMs": 0}, "uplink": {}}"#.utf8).write(to: dir.appendingPathComponent("nothing.json"))
        let profile = try #require(try ProfileCatalog.loadDirectory(dir).first)
        #expect(profile.problems.contains { $0.hasPrefix("it changes nothing") })
        #expect(throws: ConditionerError.self) {
            try Conditioner(runner: RecordingRunner(), store: temporaryStore(), kernel: FixedKernelSupport(netem: true),
                            inInitialNamespace: false).apply(profile, to: try InterfaceName("eth0"))
        }
    }

    @Test func negativeDurationsAreBadDurationsNotMissingValues() throws {
        let result = try condition(["apply", "DSL", "-i", "eth0", "--for", "-3s"])
        #expect(result.status != 0)
        #expect(result.stderrText.contains("invalid --for \"-3s\": expected a positive duration"))
        #expect(!result.stderrText.contains("Missing value"))
    }

    @Test func aBadExclusionIsToldEveryForm() throws {
        let result = try condition(["plan", "DSL", "-i", "lo", "--exclude", "foo"])
        #expect(result.status != 0)
        #expect(result.stderrText.contains("ADDRESS:PORT"))
    }

    @Test func thePlansOffIsWhatOffRuns() throws {
        let plan = try condition(["plan", "Slow Net", "-i", "lo", "--force"]).stdoutText
        let off = plan.components(separatedBy: "# off\n")[1].split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.hasPrefix("nft ") && !$0.contains("tables-nft ") }
        // --force: off puts an (empty) ingress back, as rollBack does for a replaced one.
        #expect(off == ["tc qdisc del dev lo ingress", "tc qdisc del dev lo root",
                        "tc qdisc add dev lo handle ffff: ingress", "ip link del dev tk-lo"])
    }

    @Test func listSaysWhichProfilesThisKernelCanApply() throws {
        let list = try condition(["list"])
        let header = try #require(list.stdoutText.split(separator: "\n").first)
        #expect(header.hasSuffix("HERE"))
        // Bandwidth-only profiles need no netem, so they can be applied on any kernel with htb.
        for line in list.stdoutText.split(separator: "\n") where line.hasPrefix("Slow Net") || line.hasPrefix("Black Hole") {
            #expect(line.hasSuffix("yes") || line.hasSuffix("yes (user-space engine)") || line.hasSuffix("no: needs netem"), "\(line)")
        }
    }

    @Test func exportToAnUnwritablePlaceSaysCannotWrite() throws {
        let result = try condition(["export", "DSL", "--nlc", "-o", "/nonexistent-tapkit-dir/out.plist"])
        #expect(result.status == 1)
        #expect(result.stderrText == "condition: cannot write /nonexistent-tapkit-dir/out.plist: No such file or directory\n")
        #expect(!result.stderrText.contains("NSCocoaErrorDomain"))
    }

    @Test func importIntoAnUnwritablePlaceSaysCannotCreate() throws {
        let plist = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString).plist")
        defer { try? FileManager.default.removeItem(at: plist) }
        let exported = try condition(["export", "DSL", "--nlc", "-o", plist.path])
        try #require(exported.status == 0, "\(exported.stderrText)")
        let result = try condition(["import", plist.path, "--to", "/proc/tapkit-no/profiles"])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("condition: cannot create /proc/tapkit-no/profiles: "), "\(result.stderrText)")
        #expect(!result.stderrText.contains("NSCocoaErrorDomain"))
    }

    @Test func planShowsTheEngineAskedForOrApplysRefusal() throws {
        let userspace = try condition(["plan", "3G", "-i", "lo", "--engine", "userspace"])
        if userspace.status == 0 {
            #expect(userspace.stdoutText.contains("# engine: user space"))
            #expect(!userspace.stdoutText.contains("netem"))
            #expect(userspace.stdoutText.contains("__engine -i lo"))
        } else {
            #expect(userspace.stderrText.contains("--engine userspace: the user-space engine needs"), "\(userspace.stderrText)")
        }
        let netem = try condition(["plan", "3G", "-i", "lo", "--engine", "netem"])
        if netem.status == 0 {
            #expect(netem.stdoutText.contains("# engine: netem"))
        } else {
            #expect(netem.stderrText.contains("--engine netem: profile \"3G\" needs the netem qdisc"), "\(netem.stderrText)")
            #expect(netem.stdoutText.isEmpty)
        }
        // Bandwidth alone needs neither engine, whatever is asked.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-rate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"{"name": "Rate", "downlink": {"bandwidthKbit": 1000}, "uplink": {"bandwidthKbit": 500}}"#.utf8)
            .write(to: folder.appendingPathComponent("rate.json"))
        let rate = try condition(["plan", "Rate", "-i", "lo", "--engine", "netem", "--profiles", folder.path])
        #expect(rate.status == 0 && rate.stdoutText.contains("# engine: htb only"), "\(rate.stdoutText)\(rate.stderrText)")
        let bad = try condition(["plan", "3G", "-i", "lo", "--engine", "kernel"])
        #expect(bad.status != 0)
        #expect(bad.stderrText.contains("'auto', 'netem' or 'userspace'"), "\(bad.stderrText)")
        let ui = try condition(["run", "3G", "--engine", "userspace", "--ui", "--", "true"])
        #expect(ui.status != 0 && ui.stderrText.contains("leave --engine out"), "\(ui.stderrText)")
    }

    @Test func importOfADirectorySaysSo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString).plist")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try condition(["import", directory.path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("\(directory.path): cannot read: Is a directory"), "\(result.stderrText)")
        #expect(!result.stderrText.contains("NSCocoaErrorDomain"))
    }

    @Test func planOnAMissingInterfaceWarnsAndStillPrints() throws {
        let result = try condition(["plan", "DSL", "-i", "tapkitnone0"])
        #expect(result.status == 0)
        #expect(result.stderrText.contains("warning: no interface \"tapkitnone0\""))
        #expect(result.stdoutText.contains("tc qdisc add dev tapkitnone0 root handle 7ac0: htb default 0"))
    }

    @Test func offWithNothingActiveIsNotAnError() throws {
        let off = try condition(["off", "-i", "tapkit-none0"])
        // Not root: the lock directory may be unwritable, which must be a clear error rather than a crash.
        #expect(off.status == 0 || off.stderrText.contains("condition:"))
    }
}
