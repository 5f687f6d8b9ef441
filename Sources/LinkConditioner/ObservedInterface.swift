/// What `off` found on an interface before taking a profile down: the facts `PlanBuilder.offPlan` decides from.
public struct ObservedInterface: Sendable, Equatable {
    public var interfacePresent: Bool
    public var hasOurRoot: Bool
    /// A root qdisc that is neither TapKit's nor the kernel's default.
    public var hasForeignRoot: Bool
    public var ingressPresent: Bool
    /// Whether the ingress qdisc's filters redirect to the interface's ifb (asked only without a record).
    public var ingressRedirectsToOurIFB: Bool
    public var ifbPresent: Bool
    /// The user-space engine's nftables table, and those of its iptables-nft queue rules that exist (`-A` form).
    public var engineTablePresent: Bool
    public var presentQueueRules: [[String]]
    /// The connection faults' nftables table.
    public var faultTablePresent: Bool
    /// The `mangle` tables (`ip`, `ip6`) that apply made and that hold nothing once the queue rules above are gone.
    public var emptiedMangleTables: [String]

    public init(interfacePresent: Bool, hasOurRoot: Bool, hasForeignRoot: Bool, ingressPresent: Bool,
                ingressRedirectsToOurIFB: Bool, ifbPresent: Bool, engineTablePresent: Bool = false,
                presentQueueRules: [[String]] = [], faultTablePresent: Bool = false, emptiedMangleTables: [String] = []) {
        self.faultTablePresent = faultTablePresent
        self.emptiedMangleTables = emptiedMangleTables
        self.engineTablePresent = engineTablePresent
        self.presentQueueRules = presentQueueRules
        self.interfacePresent = interfacePresent
        self.hasOurRoot = hasOurRoot
        self.hasForeignRoot = hasForeignRoot
        self.ingressPresent = ingressPresent
        self.ingressRedirectsToOurIFB = ingressRedirectsToOurIFB
        self.ifbPresent = ifbPresent
    }

    /// The interface as `apply` of `state` leaves it: what `condition plan` shows `off` for (with the user-space engine,
    /// on a namespace where nothing else uses iptables' `mangle` tables, so apply made them and off removes them).
    public static func afterApplying(_ state: ConditionState) -> ObservedInterface {
        let userspace = state.activeEngine == .userspace
        let profile = userspace ? UserspaceEngine.rateOnly(state.profile) : state.profile
        let uplink = PlanBuilder.uplinkSpec(profile, selection: state.selection ?? .allIP)
        return ObservedInterface(interfacePresent: true, hasOurRoot: uplink.needsTree,
                                 hasForeignRoot: !uplink.needsTree && state.replacedRoot != nil,
                                 ingressPresent: true, ingressRedirectsToOurIFB: true, ifbPresent: true,
                                 engineTablePresent: userspace,
                                 presentQueueRules: userspace ? UserspaceEngine.queueRules(state.interface) : [],
                                 faultTablePresent: state.profile.faults?.needsTable ?? false,
                                 emptiedMangleTables: userspace ? ["ip", "ip6"] : [])
    }
}
