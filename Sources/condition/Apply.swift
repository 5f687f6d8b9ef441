import ArgumentParser
import Foundation
import LinkConditioner

struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply a profile to an interface, or switch the active one in place.",
        discussion: """
            Over an active profile, apply switches in place: class rates changed and leaf qdiscs replaced, \
            the ifb redirect untouched, so traffic is never unconditioned. A failure part-way rolls back to \
            the state before. With --for, a watchdog outside this process (a systemd timer, or a detached \
            `condition watchdog`) turns the profile off on time even if this process is killed; apply waits \
            in the foreground until then (Ctrl-C turns it off early) unless --no-wait is given.
            """)

    @OptionGroup var profiles: ProfileOptions
    @Argument(help: "Profile name (see `condition list`); leave out with --schedule.") var name: String?
    @OptionGroup var interface: InterfaceOrSandboxOption
    // Unconditional, so `--for -3s` reaches validate() and is called a bad duration, not a missing value.
    @Option(name: .customLong("for"), parsing: .unconditional, help: ArgumentHelp(
        "Turn the profile off after this long: 3s, 500ms, 2m, 1h, 1m30s or seconds.", valueName: "duration"))
    var duration: String?
    @Flag(help: "Replace a root or ingress qdisc TapKit did not create (recorded; off puts it back).")
    var force = false
    @Flag(help: "Apply a profile that cuts remote sessions (Black Hole, loss >= 90%) without --for.")
    var yes = false
    @Flag(help: "With --for, return at once and leave the revert to the watchdog.")
    var noWait = false
    @OptionGroup var targets: TargetOptions
    @OptionGroup var engine: EngineOption
    @OptionGroup(title: "Connection faults") var faults: FaultOptions
    @OptionGroup var namespace: NamespaceOptions
    @Option(name: .customLong("then"), help: ArgumentHelp(
        "After --after, switch in place to this profile (and stay until off, --for or Ctrl-C).", valueName: "profile"))
    var then: String?
    @Option(name: .customLong("after"), parsing: .unconditional, help: ArgumentHelp("When --then switches: 10s, 500ms, 2m...", valueName: "duration"))
    var after: String?
    @Option(name: .customLong("schedule"), help: ArgumentHelp(
        "Follow a schedule file instead of one profile: {\"steps\": [{\"profile\": \"Slow Net\", \"for\": \"10s\"}, ...], \"repeat\": true}.",
        valueName: "file"))
    var scheduleFile: String?
    @Option(name: .customLong("trace-downlink"), help: ArgumentHelp(
        "With a profile: take the downlink bandwidth from a Mahimahi trace, one step per --interval.", valueName: "file"))
    var traceDownlink: String?
    @Option(name: .customLong("trace-uplink"), help: ArgumentHelp("The same for the uplink.", valueName: "file"))
    var traceUplink: String?
    @Option(name: .customLong("interval"), parsing: .unconditional, help: ArgumentHelp("Step of a trace (default 1s).", valueName: "duration"))
    var traceInterval: String?

    func validate() throws {
        if name == nil && scheduleFile == nil && !faults.given {
            throw ValidationError("name a profile (see `condition list`), give --schedule FILE, or give a fault flag such as --refuse reset")
        }
        if name != nil && scheduleFile != nil { throw ValidationError("give either a profile name or --schedule FILE, not both") }
        if faults.given && (scheduleFile != nil || then != nil || traceDownlink != nil || traceUplink != nil) {
            throw ValidationError("fault flags apply to one profile, not to --schedule, --then or a trace: put a \"faults\" object "
                                  + "in the profile files the steps name")
        }
        if (then == nil) != (after == nil) { throw ValidationError("--then and --after go together: --then \"Black Hole\" --after 10s") }
        if let after, DurationParser.seconds(after) == nil {
            throw ValidationError("invalid --after \"\(after)\": expected a positive duration such as 10s, 500ms, 2m or 1m30s")
        }
        if then != nil && scheduleFile != nil { throw ValidationError("--then is a schedule of its own; put its step in the --schedule file") }
        if (traceDownlink != nil || traceUplink != nil) && (then != nil || scheduleFile != nil || name == nil) {
            throw ValidationError("--trace-downlink/--trace-uplink take a profile name (for everything but the bandwidth), without --then or --schedule")
        }
        if interface.sandbox != nil && (then != nil || scheduleFile != nil) {
            throw ValidationError("--then and --schedule work on -i IFACE, not on a sandbox")
        }
        if interface.sandbox != nil && (!targets.isEmpty || namespace.netns != nil || namespace.pid != nil) {
            throw ValidationError("--sandbox conditions everything the sandbox sends and receives; targets, --exclude, "
                                  + "--netns and --pid apply to -i IFACE only")
        }
        if let duration, DurationParser.seconds(duration) == nil {
            throw ValidationError("invalid --for \"\(duration)\": expected a positive duration such as 3s, 500ms, 2m, 1h or 1m30s")
        }
        if noWait && duration == nil { throw ValidationError("--no-wait only makes sense with --for") }
    }

    func run() throws {
        try report { try Privileges.require("condition apply (it changes qdiscs with tc)") }
        if let sandbox = interface.sandbox {
            return try report { try SandboxApply.run(profile: faults.profile(name, catalog: { try profiles.catalog(for: name) }, use: "--sandbox"),
                                                     sandbox: sandbox, duration: duration, engine: engine.engine) }
        }
        if traceDownlink != nil || traceUplink != nil { return try runTrace() }
        if let (schedule, file) = try report({ try requestedSchedule() }) {
            let catalog = try report { try profiles.catalog(warnings: false) }
            let steps = try report { try catalog.stepProfiles(of: schedule, file: file) }
            return try runSchedule(steps.map { ($0.profile, $0.seconds) }, repeats: schedule.repeats)
        }
        let seconds = duration.flatMap(DurationParser.seconds)
        let (profile, device) = try report {
            (try faults.profile(name, catalog: { try profiles.catalog(for: name) }, use: "apply"), try interface.name)
        }
        // With --for, Ctrl-C means "turn it off now": catch it from the start, so one arriving while
        // applying is not lost and never kills us half-way.
        let interrupt = seconds == nil ? nil : try report { try SignalCatcher(signals: [SIGINT, SIGTERM, SIGHUP]) }
        let conditioner = try report { try namespace.conditioner() }
        restoreStoppedEngines(conditioner)
        // The SSH session we were started from stays usable: on the machine's own interfaces (where it
        // arrives) its connection is excluded unless --include-ssh.
        let machineInterface = conditioner.inInitialNamespace && device.rawValue != "lo"
        let selection = try report {
            try targets.selection(sshConnection: machineInterface ? ConditionEnvironment.variables["SSH_CONNECTION"] : nil)
        }
        let requested: TrafficSelection? = selection == .allIP ? nil : selection
        if seconds != nil, conditioner.needsConfirmation(profile, on: device) {
            FileHandle.standardError.write(Data(("condition: warning: \"\(profile.name)\" drops (nearly) every packet on \(device): "
                + "remote sessions such as SSH over it are cut until it turns itself off in \(duration ?? "")\n").utf8))
        }
        let outcome = try report {
            try conditioner.apply(profile, to: device,
                                  options: ApplyOptions(force: force, confirmed: yes, duration: seconds,
                                                        selection: requested, engine: engine.engine))
        }
        let state = outcome.state
        if let seconds, let deadline = state.expiresAt {
            let revert: RevertScheduler.Mechanism
            do {
                revert = try RevertScheduler.schedule(interface: device, token: state.token, deadline: deadline,
                                                      extra: try namespace.target()?.arguments ?? [],
                                                      runner: conditioner.runner,
                                                      unitEnvironment: ConditionEnvironment.unitEnvironment)
            } catch {
                _ = try? conditioner.off(device, token: state.token)
                try report { throw ReportedError(description: "\(error); the profile was turned off again because --for could not be guaranteed") }
                throw ExitCode.failure
            }
            announce(outcome, profile: profile, device: device, suffix: " for \(TCUnits.trim(seconds))s")
            if noWait { return }
            print("Waiting until then; Ctrl-C turns it off now.")
            _ = interrupt?.wait(until: deadline)
            let turnedOff = try report { try conditioner.off(device, token: state.token) }
            RevertScheduler.cancel(revert, runner: conditioner.runner)
            // A switch meanwhile (without a --for of its own) kept this deadline: what is off is that profile.
            if let turnedOff { print("Turned \"\(turnedOff.name)\" off on \(device).") }
        } else if outcome.kind == .switched, let deadline = state.expiresAt {
            let left = TCUnits.trim((max(0, deadline.timeIntervalSinceNow) * 10).rounded() / 10)
            announce(outcome, profile: profile, device: device, suffix: " (the running --for still turns it off in \(left)s)")
        } else {
            announce(outcome, profile: profile, device: device, suffix: "")
        }
    }

    /// `--schedule FILE`, a profile that is a schedule (`NAME` with steps), or `NAME --then NAME2 --after D` as a
    /// two-step schedule, with what to name in errors about its steps; nil for a plain apply.
    private func requestedSchedule() throws -> (Schedule, String)? {
        if let scheduleFile {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: scheduleFile)) } catch {
                throw ReportedError(description: "cannot read \(scheduleFile): \(systemReason(error))")
            }
            return (try Schedule.parse(data, file: scheduleFile), scheduleFile)
        }
        guard let name else { return nil }
        let named = try profiles.catalog(for: name).profile(named: name)
        if let schedule = named.schedule {
            if faults.given {
                throw ReportedError(description: "\"\(named.name)\" is a schedule; fault flags apply to one profile (put a \"faults\" "
                                    + "object in the profile files its steps name)")
            }
            if then != nil {
                throw ReportedError(description: "\"\(named.name)\" is a schedule already; --then adds a step to one profile "
                                    + "(add the step to \(named.source ?? "its file") instead)")
            }
            return (schedule, named.source ?? "profile \"\(named.name)\"")
        }
        guard let then, let after = after.flatMap(DurationParser.seconds) else { return nil }
        return (Schedule(steps: [.init(profile: name, seconds: after), .init(profile: then, seconds: nil)]),
                "--then \"\(then)\"")
    }

    /// Applies the first step, then switches in place at each step's time, measured from the first apply (so
    /// lateness never accumulates), in the foreground. Ctrl-C, SIGTERM or --for turn the profile off.
    /// A profile whose bandwidth follows Mahimahi traces, interval by interval, repeating.
    private func runTrace() throws {
        let interval = traceInterval.map { DurationParser.seconds($0) } ?? 1
        guard let interval, interval >= 0.1 else {
            try report { throw ReportedError(description: "invalid --interval \"\(traceInterval ?? "")\": expected a duration of at least 100ms") }
            return
        }
        let base = try report { try profiles.catalog(for: name).profileWithSettings(named: name ?? "", for: "--trace-downlink/--trace-uplink") }
        func read(_ path: String?) throws -> [UInt64]? {
            guard let path else { return nil }
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw ReportedError(description: "cannot read \(path): \(systemReason(error))")
            }
            return try BandwidthTrace.rates(data, file: path, interval: interval)
        }
        let steps = try report { BandwidthTrace.steps(base: base, downlink: try read(traceDownlink), uplink: try read(traceUplink),
                                                      interval: interval) }
        try runSchedule(steps.map { ($0.0, Optional($0.1)) }, repeats: true)
    }

    private func runSchedule(_ steps: [(Profile, Double?)], repeats: Bool) throws {
        let schedule = Schedule(steps: steps.map { Schedule.Step(profile: $0.0.name, seconds: $0.1) }, repeats: repeats)
        let stepProfiles = steps.map(\.0)
        let device = try report { try interface.name }
        let catcher = try report { try SignalCatcher(signals: [SIGINT, SIGTERM, SIGHUP]) }
        let conditioner = try report { try namespace.conditioner() }
        restoreStoppedEngines(conditioner)
        let machineInterface = conditioner.inInitialNamespace && device.rawValue != "lo"
        let selection = try report {
            try targets.selection(sshConnection: machineInterface ? ConditionEnvironment.variables["SSH_CONNECTION"] : nil)
        }
        let cuts = stepProfiles.contains { conditioner.needsConfirmation($0, on: device) }
        if cuts && duration == nil && !yes {
            try report { throw ConditionerError.needsConfirmation(profile: stepProfiles.first { conditioner.needsConfirmation($0, on: device) }!.name,
                                                                  interface: device.rawValue) }
        }
        let start = Date()
        let deadline = duration.flatMap(DurationParser.seconds).map { start.addingTimeInterval($0) }
        var current = 0
        var state: ConditionState
        let options = { (first: Bool) in
            ApplyOptions(force: first && force, confirmed: true,
                         duration: deadline.map { max(0.001, $0.timeIntervalSinceNow) },
                         selection: selection == .allIP ? nil : selection, engine: engine.engine)
        }
        /// After a step's change: each switch makes a new token, so the watchdog of the one before stands down;
        /// start its successor.
        func guardStep(_ state: ConditionState) {
            guard let deadline else { return }
            _ = try? RevertScheduler.schedule(interface: device, token: state.token, deadline: deadline,
                                              extra: try namespace.target()?.arguments ?? [], runner: conditioner.runner,
                                              unitEnvironment: ConditionEnvironment.unitEnvironment)
        }
        let applyStarted = Date()
        state = try report { try conditioner.apply(stepProfiles[0], to: device, options: options(true)).state }
        // Step times count from when the first step was in force, so a slow first apply does not eat into it.
        let stepsStart = Date()
        // Each switch is prepared (checks, queries, plan, and with batching a `tc -batch -` started and waiting) as
        // soon as the step before is in force, and only its change runs at its time, started early by what the
        // change took before, so it is complete at its time. Without a tc started ahead, a change is one process
        // start: the first one's estimate is what one program took in the first apply.
        let firstPlan = PlanBuilder.applyPlan(profile: stepProfiles[0], interface: device, selection: selection)
        let firstProcesses = conditioner.batchesTC ? TCBatch.segments(firstPlan).count : firstPlan.count
        let secondsPerProcess = Date().timeIntervalSince(applyStarted) / Double(max(1, firstProcesses + 5))
        guardStep(state)
        var commitSeconds: Double?
        print("Applied \"\(stepProfiles[0].name)\" to \(device) (schedule step 1 of \(schedule.steps.count)"
              + (schedule.repeats ? ", repeating" : "") + "); Ctrl-C turns it off.")
        var elapsed = 0.0
        func stopped(_ until: Date) -> Bool {
            let wakeAt = [until, deadline].compactMap { $0 }.min()!
            return catcher.wait(until: wakeAt) != nil || (deadline.map { Date() >= $0 } ?? false)
        }
        while true {
            let (_, next) = schedule.step(at: elapsed)
            guard let next else {
                _ = catcher.wait(until: deadline ?? .distantFuture)
                break
            }
            let (index, _) = schedule.step(at: next + 0.000_001)
            let planned = stepsStart.addingTimeInterval(next)
            elapsed = next + 0.000_001
            // The same step again (a one-step repeating schedule, a one-interval trace): nothing to switch, but its
            // time is still waited for, so Ctrl-C, SIGTERM and --for are heard (skipping ahead without waiting spun
            // at 100% CPU with the signals held, for good).
            if index == current {
                if stopped(planned) { break }
                continue
            }
            let prepared = try report { try conditioner.prepareSwitch(to: stepProfiles[index], on: device, options: options(false)) }
            let commitLead = min(2.0, commitSeconds ?? (prepared?.startedBatch != nil ? 0.01 : secondsPerProcess))
            if stopped(planned.addingTimeInterval(-commitLead)) {
                if let prepared { conditioner.discard(prepared) }
                break
            }
            let began = Date()
            // nil: nothing active to switch from any more (turned off from outside): apply afresh.
            let outcome = try report {
                try prepared.map { try conditioner.commit($0) }
                    ?? conditioner.apply(stepProfiles[index], to: device, options: options(false))
            }
            // In force when its last command was done; the record is written after that.
            let landed = outcome.changedAt ?? Date()
            state = outcome.state
            current = index
            commitSeconds = 0.5 * (commitSeconds ?? commitLead) + 0.5 * landed.timeIntervalSince(began)
            let programs = conditioner.batchesTC ? TCBatch.segments(outcome.commands).count : outcome.commands.count
            print(String(format: "Switched %@ to \"%@\" at +%.3fs: %d commands in %d process%@ from %+.1f to %+.1f ms of its time",
                         device.rawValue, stepProfiles[index].name, next, outcome.commands.count, programs,
                         programs == 1 ? "" : "es", began.timeIntervalSince(planned) * 1000, landed.timeIntervalSince(planned) * 1000))
            guardStep(state)
        }
        let turnedOff = try report { try conditioner.off(device, token: state.token) }
        if turnedOff != nil { print("Turned \"\(turnedOff!.name)\" off on \(device).") }
    }

    private func announce(_ outcome: ApplyOutcome, profile: Profile, device: InterfaceName, suffix: String) {
        let verb = outcome.kind == .switched ? "Switched \(device) to" : "Applied"
        let target = outcome.kind == .switched ? "" : " to \(device)"
        print("\(verb) \"\(profile.name)\"\(target)\(suffix): downlink \(ProfileDescription.short(profile.downlink)), "
              + "uplink \(ProfileDescription.short(profile.uplink))"
              + (profile.dnsDelayMicroseconds > 0 ? ", DNS +\(TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds))" : "")
              + (outcome.state.replacedRoot.map { " (replaced \($0.kind) \($0.handle); off restores it)" } ?? ""))
        let selection = profile.effectiveSelection(outcome.state.selection ?? .allIP)
        if selection.isTargeted { print("Only \(selection.summary) is conditioned; everything else passes untouched.") }
        for exclusion in selection.exclusions { print("Not conditioned: \(exclusion)") }
        if let faults = ProfileDescription.faults(profile.faults) { print("Faults: \(faults).") }
        if let source = profile.source { print("Profile from \(source)") }
    }
}

struct Off: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn the profile on an interface off and put back what was there before.")

    @OptionGroup var interface: InterfaceOption
    @OptionGroup var namespace: NamespaceOptions
    @Option(help: .hidden) var token: String?

    func run() throws {
        try report { try Privileges.require("condition off (it changes qdiscs with tc)") }
        let device = try report { try interface.name }
        let profile = try report { try namespace.conditioner().off(device, token: token) }
        if let profile {
            print("Turned \"\(profile.name)\" off on \(device).")
        } else if token == nil {
            print("No profile is active on \(device); nothing to do.")
        }
    }
}

/// The `--for` revert, started detached by `apply`: sleeps until the deadline, then turns the profile off,
/// unless it was switched or turned off meanwhile (its token no longer matches).
struct Watchdog: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn a profile off at a deadline (started by apply --for).", shouldDisplay: false)

    @OptionGroup var interface: InterfaceOption
    @Option var token: String
    @Option(help: "Deadline in seconds since 1970.") var at: Double
    @OptionGroup var namespace: NamespaceOptions

    func run() throws {
        let device = try interface.name
        let conditioner = try namespace.conditioner()
        while true {
            let left = at - Date().timeIntervalSince1970
            if left <= 0 { break }
            // Leave early when the profile this watchdog guards is gone or replaced.
            if (try? conditioner.store.load(device))?.token != token { return }
            Thread.sleep(forTimeInterval: min(left, 0.5))
        }
        _ = try conditioner.off(device, token: token)
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show active profiles: interface, since when, time left, and live tc counters.")

    @Flag(help: "Print JSON (schema in docs/condition.md).") var json = false
    @Option(name: [.short, .customLong("interface")], help: "Only this interface.") var interface: String?
    @OptionGroup var namespace: NamespaceOptions

    func run() throws {
        if namespace.netns != nil || namespace.pid != nil {
            try report { try Privileges.require("condition status --netns/--pid (it enters another network namespace)") }
        }
        let conditioner = try report { try namespace.conditioner() }
        if Privileges.hasNetworkAdmin { restoreStoppedEngines(conditioner) }
        var statuses = conditioner.status()
        if let interface { statuses = statuses.filter { $0.interface == interface } }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(["active": statuses]), as: UTF8.self))
            return
        }
        // Sandboxes are conditioned on their own veth pairs, which status does not list: say where they are.
        let running = ConditionEnvironment.registry.records().filter(\.ownerIsAlive)
        let sandboxes = running.count
        defer {
            if sandboxes > 0 {
                print("\(sandboxes) sandbox\(sandboxes == 1 ? " is" : "es are") running (condition run); "
                      + "`condition sandboxes` lists them and their profiles.")
            }
            for record in running {
                let sandbox = "  sandbox \(record.identity.id) (\(record.identity.hostInterface)): "
                if let engine = SandboxEngine.status(of: record, registry: ConditionEnvironment.registry) {
                    print(sandbox + "\(record.profile), delay and loss by " + engine.summary)
                }
                guard let counts = SandboxesCommand.dnsCounts(record.identity.id) else { continue }
                print(sandbox + "DNS queries: " + SandboxDNSAnswering.describe(counts))
            }
        }
        if statuses.isEmpty {
            print(namespace.netns == nil && namespace.pid == nil ? "No profile is active in this network namespace."
                  : "No profile is active in that network namespace.")
            return
        }
        let formatter = ISO8601DateFormatter()
        for status in statuses {
            var line = "\(status.interface): \"\(status.profile)\" since \(formatter.string(from: status.since))"
            if let left = status.secondsLeft { line += ", \(TCUnits.trim((left * 10).rounded() / 10))s left" }
            if let replaced = status.replacedRoot { line += ", replaced \(replaced)" }
            print(line)
            print("  engine: \(status.engine)" + (status.engineCounters.map {
                " (pid \($0.worker ?? $0.pid): \($0.delayed) packets held, \($0.passed) sent at once, \($0.dropped) dropped)"
            } ?? ""))
            if let faults = status.faults {
                print("  faults: " + faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) connection\($0.value == 1 ? "" : "s")" }.joined(separator: ", "))
            }
            if let conditions = status.conditions { print("  only: \(conditions)") }
            for excluded in status.excluded ?? [] { print("  not conditioned: \(excluded)") }
            for (label, counters) in [("uplink", status.uplink), ("downlink", status.downlink)] {
                guard let counters else { print("  \(label): unchanged"); continue }
                if let loss = counters.lossPercent, loss >= 100 {
                    print("  \(label): every packet dropped (100% loss): \(counters.dropped) packets"
                          + (counters.droppedBytes.map { " (\($0) bytes)" } ?? "") + " dropped so far")
                    continue
                }
                print("  \(label): \(counters.packets) packets (\(counters.bytes) bytes) sent, \(counters.dropped) dropped, "
                      + "\(counters.overlimits) overlimits, \(counters.queued) queued")
            }
            if let problem = status.problem { print("  problem: \(problem)") }
        }
    }
}

/// Puts right what a user-space engine killed with its supervisor left behind, saying so: run first by `apply`
/// and `status` (`off` cleans its own interface anyway).
func restoreStoppedEngines(_ conditioner: Conditioner) {
    for state in conditioner.restoreStoppedEngines() {
        FileHandle.standardError.write(Data(("condition: the user-space engine of \"\(state.profile.name)\" on \(state.interface) had "
            + "stopped (its processes were killed); the profile was turned off and \(state.interface) restored\n").utf8))
    }
}
