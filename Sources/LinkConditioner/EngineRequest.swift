/// Which engine the user asked to carry delay, jitter, loss and reordering (`--engine` of `apply`, `plan` and
/// `run`): `auto` takes netem where the kernel has it and the user-space engine elsewhere; the other two insist on
/// one, so both can be measured on one kernel (Scripts/bench-condition in the VM) or the user-space engine used
/// where netem exists. Bandwidth alone needs neither: htb carries it whatever is asked.
public enum EngineRequest: String, Sendable, Codable, CaseIterable {
    case auto
    case netem
    case userspace

    /// The engine asked for; nil for `auto`.
    public var engine: ConditioningEngine? {
        switch self {
        case .auto: nil
        case .netem: .netem
        case .userspace: .userspace
        }
    }

    /// What carries `profile`'s delay and loss where `active` carries the profile in force (nil: nothing active, or
    /// htb alone): nil when htb alone will (or `active`, which stays); throws, before anything changes, when the engine asked for cannot run
    /// here or cannot carry the profile, or differs from the active one (a switch keeps its engine: changing it
    /// means taking the profile down, which the user does with `remedy`, e.g. "run `condition off -i eth0` first").
    /// The probes are called only when the answer depends on them.
    public func engine(for profile: Profile, active: ConditioningEngine?, remedy: String,
                       netemAvailable: () -> Bool, userspaceAvailable: () -> Bool) throws -> ConditioningEngine? {
        if let active, let wanted = engine, wanted != active, profile.needsNetem || active == .userspace {
            throw ConditionerError.engineInUse(active: active, requested: wanted, remedy: remedy)
        }
        // The user-space engine, once running, stays for bandwidth-only profiles too: a later switch back to delay
        // then needs no new engine.
        if active == .userspace { return try Self.userspace(profile, chosen: true) }
        guard profile.needsNetem else { return active }
        if active == .netem { return .netem }
        switch self {
        case .netem:
            guard netemAvailable() else { throw ConditionerError.requestedEngineMissing(.netem, profile: profile.name) }
            return .netem
        case .userspace:
            _ = try Self.userspace(profile, chosen: true)
            guard userspaceAvailable() else { throw ConditionerError.requestedEngineMissing(.userspace, profile: profile.name) }
            return .userspace
        case .auto:
            if netemAvailable() { return .netem }
            guard userspaceAvailable() else {
                throw ConditionerError.netemUnavailable(profile: profile.name, needs: Conditioner.netemNeeds(profile))
            }
            return try Self.userspace(profile, chosen: false)
        }
    }

    /// The user-space engine, unless the profile asks for what only netem does; `chosen`: the engine was asked for
    /// or is in force (else it stands in for a netem this kernel lacks).
    private static func userspace(_ profile: Profile, chosen: Bool) throws -> ConditioningEngine {
        let missing = UserspaceEngine.unsupported(profile)
        guard missing.isEmpty else { throw ConditionerError.engineCannot(profile: profile.name, what: missing, chosen: chosen) }
        return .userspace
    }
}
