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
    @Argument(help: "Profile name (see `condition list`).") var name: String
    @OptionGroup var interface: InterfaceOrSandboxOption
    @Option(name: .customLong("for"), help: ArgumentHelp(
        "Turn the profile off after this long: 3s, 500ms, 2m, 1h, 1m30s or seconds.", valueName: "duration"))
    var duration: String?
    @Flag(help: "Replace a root or ingress qdisc TapKit did not create (recorded; off puts it back).")
    var force = false
    @Flag(help: "Apply a profile that cuts remote sessions (Black Hole, loss >= 90%) without --for.")
    var yes = false
    @Flag(help: "With --for, return at once and leave the revert to the watchdog.")
    var noWait = false

    func validate() throws {
        if let duration, DurationParser.seconds(duration) == nil {
            throw ValidationError("invalid --for \"\(duration)\": expected a duration such as 3s, 500ms, 2m, 1h or 1m30s")
        }
        if noWait && duration == nil { throw ValidationError("--no-wait only makes sense with --for") }
    }

    func run() throws {
        if let sandbox = interface.sandbox {
            return try report { try SandboxApply.run(profile: profiles.catalog().profile(named: name), sandbox: sandbox,
                                                     duration: duration) }
        }
        let seconds = duration.flatMap(DurationParser.seconds)
        let (profile, device) = try report { (try profiles.catalog().profile(named: name), try interface.name) }
        // With --for, Ctrl-C means "turn it off now": catch it from the start, so one arriving while
        // applying is not lost and never kills us half-way.
        let interrupt = seconds == nil ? nil : InterruptWaiter()
        let conditioner = Conditioner(logger: makeLogger())
        if seconds != nil, conditioner.needsConfirmation(profile, on: device) {
            FileHandle.standardError.write(Data(("condition: warning: \"\(profile.name)\" drops (nearly) every packet on \(device): "
                + "remote sessions such as SSH over it are cut until it turns itself off in \(duration ?? "")\n").utf8))
        }
        let outcome = try report {
            try conditioner.apply(profile, to: device,
                                  options: ApplyOptions(force: force, confirmed: yes, duration: seconds))
        }
        let state = outcome.state
        if let seconds, let deadline = state.expiresAt {
            do {
                _ = try RevertScheduler.schedule(interface: device, token: state.token, deadline: deadline)
            } catch {
                _ = try? conditioner.off(device, token: state.token)
                try report { throw ReportedError(description: "\(error); the profile was turned off again because --for could not be guaranteed") }
            }
            announce(outcome, profile: profile, device: device, suffix: " for \(TCUnits.trim(seconds))s")
            if noWait { return }
            print("Waiting until then; Ctrl-C turns it off now.")
            interrupt?.wait(until: deadline)
            let turnedOff = try report { try conditioner.off(device, token: state.token) }
            if turnedOff != nil { print("Turned \"\(profile.name)\" off on \(device).") }
        } else {
            announce(outcome, profile: profile, device: device, suffix: "")
        }
    }

    private func announce(_ outcome: ApplyOutcome, profile: Profile, device: InterfaceName, suffix: String) {
        let verb = outcome.kind == .switched ? "Switched \(device) to" : "Applied"
        let target = outcome.kind == .switched ? "" : " to \(device)"
        print("\(verb) \"\(profile.name)\"\(target)\(suffix): downlink \(ProfileDescription.short(profile.downlink)), "
              + "uplink \(ProfileDescription.short(profile.uplink))"
              + (profile.dnsDelayMicroseconds > 0 ? ", DNS +\(TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds))" : "")
              + (outcome.state.replacedRoot.map { " (replaced \($0.kind) \($0.handle); off restores it)" } ?? ""))
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP from creation on, so `wait(until:)` can end early.
final class InterruptWaiter {
    private let woken = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [woken] in woken.signal() }
            source.resume()
            sources.append(source)
        }
    }

    /// Sleeps until `deadline`, or until a signal came (also one that came before this call).
    func wait(until deadline: Date) {
        _ = woken.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow))
    }

    deinit { sources.forEach { $0.cancel() } }
}

struct Off: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn the profile on an interface off and put back what was there before.")

    @OptionGroup var interface: InterfaceOption
    @Option(help: .hidden) var token: String?

    func run() throws {
        let device = try report { try interface.name }
        let profile = try report { try Conditioner(logger: makeLogger()).off(device, token: token) }
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

    func run() throws {
        let device = try interface.name
        let conditioner = Conditioner(logger: makeLogger())
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

    func run() throws {
        var statuses = Conditioner(logger: makeLogger()).status()
        if let interface { statuses = statuses.filter { $0.interface == interface } }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(["active": statuses]), as: UTF8.self))
            return
        }
        if statuses.isEmpty {
            print("No profile is active in this network namespace.")
            return
        }
        let formatter = ISO8601DateFormatter()
        for status in statuses {
            var line = "\(status.interface): \"\(status.profile)\" since \(formatter.string(from: status.since))"
            if let left = status.secondsLeft { line += ", \(TCUnits.trim((left * 10).rounded() / 10))s left" }
            if let replaced = status.replacedRoot { line += ", replaced \(replaced)" }
            print(line)
            for (label, counters) in [("uplink", status.uplink), ("downlink", status.downlink)] {
                guard let counters else { print("  \(label): unchanged"); continue }
                print("  \(label): \(counters.packets) packets (\(counters.bytes) bytes) sent, \(counters.dropped) dropped, "
                      + "\(counters.overlimits) overlimits, \(counters.queued) queued")
            }
            if let problem = status.problem { print("  problem: \(problem)") }
        }
    }
}
