import LinkConditioner

extension PlanBuilder {
    /// The switch `Conditioner` runs between two profiles on an interface with no replaced qdisc: records made
    /// from the profiles, through the one production `switchPlan`.
    public static func switchPlan(from old: Profile, to new: Profile, interface: InterfaceName,
                                  selection: TrafficSelection = .allIP) -> [[String]] {
        var before = ConditionState(interface: interface, profile: old, complete: true)
        before.selection = selection
        var after = before
        after.profile = new
        return switchPlan(from: before, to: after)
    }

    /// What `off` runs right after `apply` of `profile` (no replaced qdiscs), through the one production `offPlan`.
    public static func offPlan(afterApplying profile: Profile, interface: InterfaceName) -> [[String]] {
        let state = ConditionState(interface: interface, profile: profile, complete: true)
        return offPlan(interface: interface, state: state, observed: .afterApplying(state))
    }
}
