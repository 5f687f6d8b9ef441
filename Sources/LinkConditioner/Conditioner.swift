import Foundation
import Logging
import SystemSupport

/// Options for `apply`.
public struct ApplyOptions: Sendable {
    /// Replace a foreign root or ingress qdisc (recorded and restored by `off`).
    public var force: Bool = false
    /// Accept a profile that cuts remote sessions on a non-private interface.
    public var confirmed: Bool = false
    /// Turn the profile off after this long (the caller arranges the watchdog).
    public var duration: TimeInterval?
    /// Which traffic to condition. nil: all IP on a first apply, and whatever is active on a switch.
    public var selection: TrafficSelection?
    /// Which engine carries delay and loss (`--engine`); a switch keeps the active one and refuses another.
    public var engine: EngineRequest

    public init(force: Bool = false, confirmed: Bool = false, duration: TimeInterval? = nil,
                selection: TrafficSelection? = nil, engine: EngineRequest = .auto) {
        self.force = force
        self.confirmed = confirmed
        self.duration = duration
        self.selection = selection
        self.engine = engine
    }
}

/// What `apply` did.
public struct ApplyOutcome: Sendable {
    public enum Kind: Sendable, Equatable { case applied, switched }
    public var kind: Kind
    public var state: ConditionState
    /// The commands that changed something, in order.
    public var commands: [[String]]
    /// When the last command was done, before the record was written: the moment the new profile was in force.
    public var changedAt: Date? = nil
}

/// What `status` reports for one interface.
public struct InterfaceStatus: Sendable, Codable {
    public var interface: String
    public var ifb: String
    public var profile: String
    public var since: Date
    public var expiresAt: Date?
    public var secondsLeft: Double?
    public var replacedRoot: String?
    /// The targets in words, when only some IP traffic is conditioned.
    public var conditions: String?
    /// Far ends never conditioned, with why ("192.0.2.7:52100 (the SSH session condition was started from)").
    public var excluded: [String]?
    public var uplink: DirectionCounters?
    public var downlink: DirectionCounters?
    /// What carries delay and loss (`ConditioningEngine.summary`, or "htb only" when the profile needs neither).
    public var engine: String = ""
    /// The user-space engine's own report (its counters), when it is the engine.
    public var engineCounters: EngineReport?
    /// Connections each connection fault acted on (`reset`, `stall`, `refuse`: see `ConnectionFaults.counters`), when the profile has faults.
    public var faults: [String: UInt64]?
    public var problem: String?
}

/// Applies, switches and removes profiles on interfaces, keeping a record so it can always undo.
public struct Conditioner: Sendable {
    public let runner: any CommandRunner
    public let store: StateStore
    public let kernel: any KernelSupport
    /// Whether the interfaces are in the machine's initial network namespace (where SSH arrives).
    public let inInitialNamespace: Bool
    /// Whether consecutive tc commands of a plan run as one `tc -batch` (`TCBatch`), so a switch lands in one
    /// process start (the default); off, every command is its own process (tests that look at single commands).
    public let batchesTC: Bool
    /// The `condition` executable the user-space engine runs as (`condition __engine`).
    public let engineExecutable: String
    let logger: Logger

    public init(runner: any CommandRunner = ProcessRunner(), store: StateStore = StateStore(),
                kernel: (any KernelSupport)? = nil, inInitialNamespace: Bool? = nil, batchesTC: Bool = true,
                engineExecutable: String = RevertScheduler.currentExecutable(),
                logger: Logger = Logger(label: "tapkit.condition")) {
        self.runner = runner
        self.engineExecutable = engineExecutable
        self.store = store
        self.batchesTC = batchesTC
        self.kernel = kernel ?? LiveKernelSupport(runner: runner)
        self.inInitialNamespace = inInitialNamespace ?? NetworkNamespace.isInitialNamespace(runner: runner)
        self.logger = logger
    }

    // MARK: - Inspection

    public func qdiscs(_ device: InterfaceName, statistics: Bool = false) throws -> InterfaceQdiscs {
        let arguments = ["tc"] + (statistics ? ["-s"] : []) + ["-j", "qdisc", "show", "dev", device.rawValue]
        let result = try runner.run(arguments)
        guard result.status == 0 else {
            if result.stderr.contains("Cannot find device") { throw ConditionerError.noSuchInterface(device.rawValue) }
            throw CommandFailedError(arguments: arguments, status: result.status, stderr: result.stderr)
        }
        return try InterfaceQdiscs(json: result.stdout, device: device.rawValue)
    }

    public func interfaceExists(_ device: InterfaceName) throws -> Bool {
        try runner.run(["ip", "link", "show", "dev", device.rawValue]).status == 0
    }

    /// The interface's MTU as `ip link show` prints it ("... mtu 1500 qdisc ..."), nil when it does not say.
    public static func mtu(_ device: InterfaceName, runner: any CommandRunner) -> Int? {
        guard let shown = try? runner.run(["ip", "link", "show", "dev", device.rawValue]), shown.status == 0 else { return nil }
        let words = shown.stdout.split(whereSeparator: \.isWhitespace)
        guard let index = words.firstIndex(of: "mtu"), index + 1 < words.count, let mtu = Int(words[index + 1]), mtu > 0 else {
            return nil
        }
        return mtu
    }

    /// Whether the ingress on `interface` is ours: it redirects to our ifb.
    func ingressIsOurs(_ interface: InterfaceName) throws -> Bool {
        let result = try runner.run(["tc", "-j", "filter", "show", "dev", interface.rawValue, "parent", ReservedHandles.ingress])
        return result.status == 0 && result.stdout.contains("\"to_dev\":\"\(interface.ifbName.rawValue)\"")
    }

    /// Whether TapKit qdiscs or its ifb are on the interface.
    func hasLeftovers(_ interface: InterfaceName, current: InterfaceQdiscs) throws -> Bool {
        if current.hasOurRoot { return true }
        if current.ingress != nil, try ingressIsOurs(interface) { return true }
        return try interfaceExists(interface.ifbName) || engineTableExists(interface)
    }

    /// The user-space engine's report for a record, if it wrote one.
    func engineReport(_ state: ConditionState) -> EngineReport? {
        EngineReport.read(from: store.url(state.interface, suffix: "engine"))
    }

    /// Whether a complete record's user-space engine is gone: neither its supervisor nor the engine runs (both
    /// killed at once, or the machine's processes but not /run went away). An apply returns only once the engine has
    /// reported, so a complete record without a report has lost its engine too.
    public func engineStopped(_ state: ConditionState) -> Bool {
        guard state.activeEngine == .userspace, state.complete else { return false }
        return !(engineReport(state)?.isRunning(engineID: state.engineID ?? "") ?? false)
    }

    /// Turns off every profile in this namespace whose user-space engine is gone, restoring its interface (its
    /// nftables table and queue rules would otherwise stay, and htb and nftables loss with them); returns those
    /// records. The CLI runs it first in `apply` and `status` (`off` restores its own interface anyway), so the next
    /// command puts things right.
    public func restoreStoppedEngines() -> [ConditionState] {
        store.all().filter(engineStopped).compactMap { found in
            try? store.withLock(found.interface) { () -> ConditionState? in
                guard let state = try store.load(found.interface), state.engineID == found.engineID, engineStopped(state) else { return nil }
                return rollBack(interface: state.interface, state: state).isEmpty ? state : nil
            }
        }
    }

    /// Whether the user-space engine's nftables table is there (false where nft is missing).
    func engineTableExists(_ interface: InterfaceName) -> Bool {
        (try? runner.run(["nft", "list", "table", "inet", UserspaceEngine.table(interface)]))?.status == 0
    }

    /// Whether a profile may be applied here without --for or --yes.
    public func needsConfirmation(_ profile: Profile, on interface: InterfaceName) -> Bool {
        profile.cutsRemoteSessions && inInitialNamespace && interface.rawValue != "lo"
    }

    // MARK: - Apply

    /// Applies `profile` to `interface`, or switches in place when a profile is already active there.
    /// Any failure part-way is rolled back to the state before.
    public func apply(_ profile: Profile, to interface: InterfaceName, options: ApplyOptions = ApplyOptions()) throws -> ApplyOutcome {
        let engine = try check(profile, for: interface, options: options)
        return try store.withLock(interface) {
            let current = try qdiscs(interface)
            if let state = try store.load(interface) {
                if state.complete, current.ingress != nil, try interfaceExists(state.ifb), state.activeEngine == engine,
                   !engineStopped(state) {
                    return try switchProfile(from: state, to: profile, interface: interface, current: current, options: options)
                }
                // A record without its tree (an interrupted apply, or someone removed it), or one whose engine cannot
                // carry the new profile (from bandwidth only to delay where netem is missing): start afresh.
                if state.activeEngine == engine { logger.warning("cleaning up an incomplete earlier apply on \(interface)") }
                try removeEverything(interface: interface, state: state)
            } else if try hasLeftovers(interface, current: current) {
                logger.warning("removing TapKit qdiscs left on \(interface) without a record")
                try removeEverything(interface: interface, state: nil)
            }
            return try freshApply(profile, interface: interface, engine: engine, options: options)
        }
    }

    /// A switch worked out ahead of its time by `prepareSwitch`: the commands `commit` runs and the record it writes.
    public struct PreparedSwitch: Sendable {
        public let interface: InterfaceName
        /// The commands the switch runs, in order.
        public let plan: [[String]]
        let old: ConditionState
        let new: ConditionState
        /// The record as it was when prepared: `commit` runs nothing if it changed since.
        let recordBytes: Data?
        /// With batching, a `tc -batch -` started while preparing, waiting for the plan (nil: run it as usual).
        public let startedBatch: (any PendingCommand)?
    }

    /// Does everything a switch to `profile` needs before changing anything (checks, queries, the plan), so a
    /// schedule can do it ahead of a step's time and only run the change at it. nil when no complete profile is
    /// active on `interface` (then `apply` it instead).
    public func prepareSwitch(to profile: Profile, on interface: InterfaceName,
                              options: ApplyOptions = ApplyOptions()) throws -> PreparedSwitch? {
        let engine = try check(profile, for: interface, options: options)
        return try store.withLock(interface) {
            let current = try qdiscs(interface)
            guard let state = try store.load(interface), state.complete, current.ingress != nil,
                  try interfaceExists(state.ifb), state.activeEngine == engine else { return nil }
            let (plan, new) = try planSwitch(from: state, to: profile, interface: interface, current: current, options: options)
            // tc started now is loaded and waiting at the switch's time: only its netlink conversation is left then.
            let started = batchesTC && TCBatch.isOneBatch(plan) ? try? TCBatch.start(runner: runner) : nil
            return PreparedSwitch(interface: interface, plan: plan, old: state, new: new,
                                  recordBytes: store.recordBytes(interface), startedBatch: started ?? nil)
        }
    }

    /// Runs a prepared switch: only the change itself (one `tc -batch` when batching) and the record. When the
    /// interface's record changed since `prepareSwitch` (switched or turned off meanwhile), nothing is run and
    /// `ConditionerError.unexpectedOutput` says so. A failure part-way restores the old profile, as `apply` does.
    public func commit(_ prepared: PreparedSwitch) throws -> ApplyOutcome {
        try store.withLock(prepared.interface) {
            // The same bytes as when prepared is the same record (token included), without decoding it again.
            guard let bytes = store.recordBytes(prepared.interface), bytes == prepared.recordBytes else {
                discard(prepared)
                throw ConditionerError.unexpectedOutput("the profile on \(prepared.interface) changed between preparing and making a switch; nothing was run")
            }
            return try runSwitch(prepared.plan, from: prepared.old, to: prepared.new, interface: prepared.interface,
                                 started: prepared.startedBatch)
        }
    }

    /// Lets a prepared switch go without running it: a tc started for it ends having done nothing.
    public func discard(_ prepared: PreparedSwitch) {
        _ = try? prepared.startedBatch?.finish(input: "")
    }

    /// What makes a profile unfit for `interface` before anything is looked at or changed; returns the engine that
    /// will carry it.
    private func check(_ profile: Profile, for interface: InterfaceName, options: ApplyOptions) throws -> ConditioningEngine {
        if !profile.problems.isEmpty {
            throw ConditionerError.invalidProfile(profile: profile.name, problems: profile.problems)
        }
        guard try interfaceExists(interface) else { throw ConditionerError.noSuchInterface(interface.rawValue) }
        let active = try? store.load(interface)
        // A switch keeps a running --for (`planSwitch`), which bounds the cut as a --for of its own would.
        let ends = options.duration != nil || (active.map { $0.complete && ($0.expiresAt.map { $0 > Date() } ?? false) } ?? false)
        if needsConfirmation(profile, on: interface) && !ends && !options.confirmed {
            throw ConditionerError.needsConfirmation(profile: profile.name, interface: interface.rawValue)
        }
        return try engine(for: profile, active: active, requested: options.engine)
    }

    /// netem where the kernel has it, else the user-space engine, unless `requested` names one (`EngineRequest`).
    /// The engine of the active profile stays when it can carry the new one, and a profile with netem already
    /// active here proves the kernel has it: a switch then skips the probes (a throwaway namespace and a process
    /// each), which would otherwise delay every step of a schedule. htb alone is recorded as netem.
    func engine(for profile: Profile, active: ConditionState?, requested: EngineRequest = .auto) throws -> ConditioningEngine {
        let inForce: ConditioningEngine? = active.flatMap {
            $0.activeEngine == .userspace ? .userspace : $0.profile.needsNetem ? .netem : nil
        }
        return try requested.engine(for: profile, active: inForce,
                                    remedy: "Run `condition off -i \(active?.interface.rawValue ?? "IFACE")` first",
                                    netemAvailable: kernel.netemAvailable,
                                    userspaceAvailable: kernel.userspaceEngineAvailable) ?? .netem
    }

    public static func netemNeeds(_ profile: Profile) -> String {
        var needs: [String] = []
        if profile.downlink.delayMicroseconds > 0 || profile.uplink.delayMicroseconds > 0 { needs.append("delay") }
        if profile.downlink.jitterMicroseconds > 0 || profile.uplink.jitterMicroseconds > 0 { needs.append("jitter") }
        if profile.downlink.lossPercent > 0 || profile.uplink.lossPercent > 0 { needs.append("packet loss") }
        let both = [profile.downlink, profile.uplink]
        if both.contains(where: { $0.reorderPercent > 0 }) { needs.append("reordering") }
        if both.contains(where: { $0.duplicatePercent > 0 }) { needs.append("duplication") }
        if both.contains(where: { $0.corruptPercent > 0 }) { needs.append("corruption") }
        if profile.dnsDelayMicroseconds > 0 { needs.append("DNS delay") }
        return needs.joined(separator: ", ")
    }

    private func freshApply(_ profile: Profile, interface: InterfaceName, engine: ConditioningEngine,
                            options: ApplyOptions) throws -> ApplyOutcome {
        let current = try qdiscs(interface)
        var state = ConditionState(interface: interface, profile: profile, expiresAt: options.duration.map { Date().addingTimeInterval($0) })
        let selection = options.selection ?? .allIP
        state.selection = selection
        state.engine = engine
        state.mtu = Self.mtu(interface, runner: runner)
        if engine == .userspace {
            state.engineID = UUID().uuidString
            state.restampsReceive = kernel.receiveRestampAvailable() ? true : nil
            // Queue numbers come from the name; two interfaces sharing one would feed each other's engine.
            let mine = Set(UserspaceEngine.queues(interface).map(\.number))
            if let other = store.all().first(where: { $0.interface != interface && $0.activeEngine == .userspace
                    && !mine.isDisjoint(with: UserspaceEngine.queues($0.interface).map(\.number)) }) {
                throw ConditionerError.unexpectedOutput("\(interface) and \(other.interface) would share netfilter queue numbers; "
                    + "turn \(other.interface) off first (`condition off -i \(other.interface)`)")
            }
        }
        let tcProfile = engine == .userspace ? UserspaceEngine.rateOnly(profile) : profile
        let needsRoot = PlanBuilder.uplinkSpec(tcProfile, selection: selection).needsTree
        var replaceRoot = false
        if needsRoot, let foreign = current.foreignRoot {
            guard options.force else {
                throw ConditionerError.foreignRootQdisc(interface: interface.rawValue, kind: foreign.kind, handle: foreign.handle)
            }
            state.replacedRoot = try record(foreign, current: current, interface: interface)
            replaceRoot = true
        }
        if current.ingress != nil {
            guard options.force else { throw ConditionerError.foreignIngress(interface: interface.rawValue) }
            state.replacedIngress = true
        }
        // Written before the first change, so a crash part-way still leaves what off needs.
        try store.save(state)
        if engine == .userspace {
            // iptables-nft makes the `mangle` tables the queue rules need and never removes them: note those it makes.
            let absent = ["ip", "ip6"].filter { (try? runner.run(["nft", "list", "table", $0, "mangle"]))?.status != 0 }
            if !absent.isEmpty { try store.setCreatedMangleTables(store.createdMangleTables().union(absent)) }
        }
        let plan = PlanBuilder.applyPlan(state: state, executable: engineExecutable, store: store, replaceRoot: replaceRoot)
        let restamp = state.restampsReceive == true ? URL(fileURLWithPath: PlanBuilder.restampObjectPath(interface, store: store)) : nil
        // tc reads the program when it adds the filter; the kernel keeps it from then on, so the file goes after.
        defer { if let restamp { try? FileManager.default.removeItem(at: restamp) } }
        do {
            if let restamp { try Data(ReceiveRestamp.object()).write(to: restamp) }
            try execute(plan, interface: interface)
        } catch {
            let problems = rollBack(interface: interface, state: state)
            throw ConditionerError.applyFailed(cause: "\(error)", rollbackProblems: problems)
        }
        state.complete = true
        try store.save(state)
        return ApplyOutcome(kind: .applied, state: state, commands: plan)
    }

    /// Runs a plan's changes in order, stopping at the first failure (the caller rolls back).
    private func execute(_ plan: [[String]], interface: InterfaceName) throws {
        if batchesTC {
            try TCBatch.run(plan, runner: runner, file: store.url(interface, suffix: "batch"))
        } else {
            for command in plan { try runner.check(command) }
        }
    }

    private func record(_ foreign: QdiscInfo, current: InterfaceQdiscs, interface: InterfaceName) throws -> RecordedQdisc {
        let recorded = RecordedQdisc(foreign)
        if recorded.restoreArguments() == nil {
            throw ConditionerError.notRestorable(interface: interface.rawValue,
                                                 what: "a \(foreign.kind) root qdisc whose settings tc does not print in full")
        }
        if let child = current.children.first {
            throw ConditionerError.notRestorable(interface: interface.rawValue,
                                                 what: "a qdisc tree (\(foreign.kind) \(foreign.handle) with \(child.kind) \(child.handle) below it)")
        }
        // tbf shows an internal class of its own; only htb's classes are configuration.
        let classes = try runner.run(["tc", "class", "show", "dev", interface.rawValue])
        if foreign.kind == "htb", classes.status == 0, !classes.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ConditionerError.notRestorable(interface: interface.rawValue,
                                                 what: "a \(foreign.kind) root qdisc with classes")
        }
        return recorded
    }

    private func switchProfile(from old: ConditionState, to profile: Profile, interface: InterfaceName,
                               current: InterfaceQdiscs, options: ApplyOptions) throws -> ApplyOutcome {
        let (plan, state) = try planSwitch(from: old, to: profile, interface: interface, current: current, options: options)
        return try runSwitch(plan, from: old, to: state, interface: interface)
    }

    /// The commands of a switch and the record after it; nothing is changed.
    private func planSwitch(from old: ConditionState, to profile: Profile, interface: InterfaceName,
                            current: InterfaceQdiscs, options: ApplyOptions) throws -> (plan: [[String]], state: ConditionState) {
        let selection = old.selection ?? .allIP
        // The filters stay as they are during a switch (so nothing is ever unclassified); other targets
        // or exclusions would need new filters.
        if let wanted = options.selection, wanted != selection {
            throw ConditionerError.selectionChanged(interface: interface.rawValue, active: selection.summary,
                                                    activeExclusions: selection.exclusions.map(\.description))
        }
        if profile.excludeLoopback != old.profile.excludeLoopback {
            throw ConditionerError.selectionChanged(interface: interface.rawValue,
                                                    active: "excludeLoopback \(old.profile.excludeLoopback)",
                                                    activeExclusions: [])
        }
        var state = old
        state.profile = profile
        state.since = Date()
        // A switch without a duration of its own keeps the running one, and its token with it, so the watchdog
        // and the `apply --for` waiting in the foreground still turn it off on time; a new duration replaces both.
        if let duration = options.duration {
            state.token = UUID().uuidString
            state.expiresAt = Date().addingTimeInterval(duration)
        } else if let deadline = old.expiresAt, deadline > Date() {
            state.expiresAt = deadline
        } else {
            state.token = UUID().uuidString
            state.expiresAt = nil
        }
        let userspace = old.activeEngine == .userspace
        let oldUplink = PlanBuilder.uplinkSpec(userspace ? UserspaceEngine.rateOnly(old.profile) : old.profile, selection: selection)
        let newUplink = PlanBuilder.uplinkSpec(userspace ? UserspaceEngine.rateOnly(profile) : profile, selection: selection)
        if !oldUplink.needsTree && newUplink.needsTree, let foreign = current.foreignRoot {
            guard options.force else {
                throw ConditionerError.foreignRootQdisc(interface: interface.rawValue, kind: foreign.kind, handle: foreign.handle)
            }
            state.replacedRoot = try record(foreign, current: current, interface: interface)
        } else if oldUplink.needsTree && !newUplink.needsTree {
            state.replacedRoot = nil
        }
        let plan = PlanBuilder.switchPlan(from: old, to: state)
        return (plan, state)
    }

    /// Runs a switch's commands; on a failure, back to the old profile (taken down and applied afresh).
    private func runSwitch(_ plan: [[String]], from old: ConditionState, to new: ConditionState,
                           interface: InterfaceName, started: (any PendingCommand)? = nil) throws -> ApplyOutcome {
        var state = new
        let selection = old.selection ?? .allIP
        let changedAt: Date
        do {
            if let started {
                try TCBatch.finish(started, commands: plan)
            } else {
                try execute(plan, interface: interface)
            }
            changedAt = Date()
        } catch {
            // Back to the old profile: take everything down and apply it afresh.
            var problems = rollBack(interface: interface, state: old)
            if problems.isEmpty {
                do {
                    _ = try freshApply(old.profile, interface: interface, engine: old.activeEngine,
                                       options: ApplyOptions(force: old.replacedRoot != nil, confirmed: true,
                                                             selection: selection))
                    var restored = try store.load(interface) ?? old
                    restored.replacedRoot = old.replacedRoot
                    restored.since = old.since
                    restored.expiresAt = old.expiresAt
                    restored.token = old.token
                    try store.save(restored)
                } catch {
                    problems.append("re-applying \"\(old.profile.name)\" failed: \(error)")
                }
            }
            throw ConditionerError.applyFailed(cause: "\(error)", rollbackProblems: problems)
        }
        state.complete = true
        try store.save(state)
        return ApplyOutcome(kind: .switched, state: state, commands: plan, changedAt: changedAt)
    }

    // MARK: - Off

    /// Removes the profile on `interface` and restores what was there before.
    /// With `token`, does nothing unless the active profile is the one that token belongs to (the watchdog).
    /// Returns the profile that was turned off, or nil when none was active.
    @discardableResult
    public func off(_ interface: InterfaceName, token: String? = nil) throws -> Profile? {
        try store.withLock(interface) {
            let state = try store.load(interface)
            if let token, state?.token != token { return nil }
            if state == nil {
                guard try interfaceExists(interface) else {
                    if try interfaceExists(interface.ifbName) { try runner.check(["ip", "link", "del", "dev", interface.ifbName.rawValue]) }
                    return nil
                }
                guard try hasLeftovers(interface, current: try qdiscs(interface)) else { return nil }
            }
            try removeEverything(interface: interface, state: state)
            return state?.profile ?? Profile(name: "(unrecorded TapKit qdiscs)")
        }
    }

    /// Takes down whatever of ours is on the interface and restores what --force replaced; throws if anything stays.
    private func removeEverything(interface: InterfaceName, state: ConditionState?) throws {
        let problems = rollBack(interface: interface, state: state)
        if !problems.isEmpty {
            throw ConditionerError.unexpectedOutput("could not fully restore \(interface): \(problems.joined(separator: "; "))")
        }
    }

    /// Best effort back to the state before `state` was applied: remove our ingress, root and ifb, put back
    /// what --force replaced, drop the record. Returns what could not be done.
    func rollBack(interface: InterfaceName, state: ConditionState?) -> [String] {
        var problems: [String] = []
        let observed = observe(interface, state: state)
        for command in PlanBuilder.offPlan(interface: interface, state: state, observed: observed) {
            do { try runner.check(command) } catch { problems.append("\(error)") }
        }
        if problems.isEmpty {
            store.remove(interface)
            if !observed.emptiedMangleTables.isEmpty {
                try? store.setCreatedMangleTables(store.createdMangleTables().subtracting(observed.emptiedMangleTables))
            }
        }
        return problems
    }

    /// The facts `PlanBuilder.offPlan` needs, queried once before anything is taken down.
    func observe(_ interface: InterfaceName, state: ConditionState?) -> ObservedInterface {
        let present = (try? interfaceExists(interface)) ?? false
        let current = present ? try? qdiscs(interface) : nil
        let ingressPresent = current?.ingress != nil
        // The engine's pieces are looked for when the record says it ran, or when there is no record to ask.
        let table = (state == nil || state?.activeEngine == .userspace) && engineTableExists(interface)
        let rules = state?.activeEngine == .userspace || table
            ? UserspaceEngine.queueRules(interface).filter { (try? runner.run(UserspaceEngine.checking($0)))?.status == 0 } : []
        // A mangle table apply made is left empty by this off when the queue rules about to go are all its rules.
        let emptied = store.createdMangleTables().sorted().filter { family in
            let ours = rules.filter { $0.first == (family == "ip" ? "iptables-nft" : "ip6tables-nft") }.count
            guard let listed = try? runner.run(["nft", "-j", "list", "table", family, "mangle"]), listed.status == 0 else { return false }
            return UserspaceEngine.mangleTableHoldsOnly(ruleCount: ours, nftJSON: Data(listed.stdout.utf8))
        }
        return ObservedInterface(
            interfacePresent: current != nil, hasOurRoot: current?.hasOurRoot ?? false,
            hasForeignRoot: current?.foreignRoot != nil, ingressPresent: ingressPresent,
            ingressRedirectsToOurIFB: ingressPresent && state == nil && ((try? ingressIsOurs(interface)) ?? false),
            ifbPresent: (try? interfaceExists(interface.ifbName)) == true,
            engineTablePresent: table, presentQueueRules: rules,
            faultTablePresent: (try? runner.run(["nft", "list", "table", "inet", ConnectionFaults.table(interface)]))?.status == 0,
            emptiedMangleTables: emptied)
    }

    // MARK: - Status

    /// A direction that loses packets says so, with what was lost: under the user-space engine loss without
    /// correlation (Black Hole's 100% included) is an nftables rule, which neither a qdisc nor the engine sees, so
    /// its counter is read here (Black Hole's status said "downlink: unchanged" before).
    private func addLoss(_ state: ConditionState, to status: inout InterfaceStatus) {
        for (uplink, settings) in [(true, state.profile.uplink), (false, state.profile.downlink)] where settings.lossPercent > 0 {
            var counters = (uplink ? status.uplink : status.downlink) ?? DirectionCounters()
            counters.lossPercent = settings.lossPercent
            if state.activeEngine == .userspace && !UserspaceEngine.lossInEngine(settings, uplink: uplink),
               let listed = try? runner.run(["nft", "-j", "list", "chain", "inet", UserspaceEngine.table(state.interface),
                                             uplink ? "uplink_apply" : "downlink_apply"]), listed.status == 0,
               let dropped = UserspaceEngine.dropCounters(nftJSON: Data(listed.stdout.utf8)) {
                counters.dropped += dropped.packets
                counters.droppedBytes = dropped.bytes
            }
            if uplink { status.uplink = counters } else { status.downlink = counters }
        }
    }

    /// Every active profile in this network namespace with live counters.
    public func status() -> [InterfaceStatus] {
        store.all().map { state in
            var status = InterfaceStatus(interface: state.interface.rawValue, ifb: state.ifb.rawValue,
                                         profile: state.profile.name, since: state.since, expiresAt: state.expiresAt,
                                         secondsLeft: state.expiresAt.map { max(0, $0.timeIntervalSinceNow) },
                                         replacedRoot: state.replacedRoot.map { "\($0.kind) \($0.handle)" })
            let selection = state.profile.effectiveSelection(state.selection ?? .allIP)
            if selection.isTargeted { status.conditions = selection.summary }
            if !selection.exclusions.isEmpty { status.excluded = selection.exclusions.map(\.description) }
            status.engine = state.profile.needsNetem ? state.activeEngine.summary : "htb only (no delay or loss)"
            if state.activeEngine == .userspace {
                status.engineCounters = engineReport(state)
                if let report = status.engineCounters, !report.isRunning(engineID: state.engineID ?? "") {
                    status.problem = "the user-space engine (pid \(report.worker ?? report.pid)) is not running; run `condition off -i \(state.interface)`"
                } else if status.engineCounters == nil {
                    status.problem = "the user-space engine has not reported; run `condition off -i \(state.interface)`"
                }
            }
            if state.profile.faults?.needsTable ?? false {
                let listed = try? runner.run(["nft", "-j", "list", "table", "inet", ConnectionFaults.table(state.interface)])
                status.faults = listed.flatMap { $0.status == 0 ? ConnectionFaults.counters(nftJSON: Data($0.stdout.utf8)) : nil }
                if status.faults == nil {
                    status.problem = "the connection faults' nftables table is missing; run `condition off -i \(state.interface)`"
                }
            }
            if !state.complete { status.problem = "an apply was interrupted; run `condition off -i \(state.interface)`" }
            do {
                let up = try qdiscs(state.interface, statistics: true)
                if up.hasOurRoot { status.uplink = DirectionCounters(qdiscs: up) }
                let down = try qdiscs(state.ifb, statistics: true)
                if down.hasOurRoot { status.downlink = DirectionCounters(qdiscs: down) }
                if up.ingress == nil { status.problem = "the ingress redirect is missing; run `condition off -i \(state.interface)`" }
            } catch {
                status.problem = "\(error)"
            }
            addLoss(state, to: &status)
            return status
        }
    }
}
