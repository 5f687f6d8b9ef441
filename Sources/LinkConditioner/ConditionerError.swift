/// Why the conditioner refused or failed; each message says what to do next.
public enum ConditionerError: Error, CustomStringConvertible {
    case unexpectedOutput(String)
    case noSuchInterface(String)
    case netemUnavailable(profile: String, needs: String)
    /// `chosen`: the user-space engine was asked for (`--engine userspace`) or is in force; else it stands in for
    /// the netem this kernel lacks.
    case engineCannot(profile: String, what: [String], chosen: Bool)
    /// `--engine` named an engine this system cannot run.
    case requestedEngineMissing(ConditioningEngine, profile: String)
    /// `--engine` named another engine than the one carrying the profile in force; a switch keeps its engine.
    case engineInUse(active: ConditioningEngine, requested: ConditioningEngine, remedy: String)
    case foreignRootQdisc(interface: String, kind: String, handle: String)
    case foreignIngress(interface: String)
    case notRestorable(interface: String, what: String)
    case needsConfirmation(profile: String, interface: String)
    case applyFailed(cause: String, rollbackProblems: [String])
    case notActive(interface: String)
    case invalidProfile(profile: String, problems: [String])
    case selectionChanged(interface: String, active: String, activeExclusions: [String])

    public var description: String {
        switch self {
        case .unexpectedOutput(let text):
            return text
        case .noSuchInterface(let name):
            return "no interface \"\(name)\" in this network namespace (list them with `ip link`)"
        case .netemUnavailable(let profile, let needs):
            return "profile \"\(profile)\" needs \(needs), which needs the netem qdisc (sch_netem) or the user-space engine "
                + "(nftables and iptables-nft's NFQUEUE target), and this kernel has neither; nothing was changed. Run "
                + "`condition doctor` for how to get them, or use a bandwidth-only profile (those work with htb alone)."
        case .engineCannot(let profile, let what, let chosen):
            let start = "profile \"\(profile)\" asks for \(what.joined(separator: " and ")), which only netem does (the user-space "
                + "engine holds and drops packets, it does not copy or change them), "
            if chosen {
                return start + "and the user-space engine is the one chosen (--engine userspace, or the engine of the profile "
                    + "in force, which a switch keeps); nothing was changed. Leave those fields out, or use netem: "
                    + "`--engine netem` (after `condition off` if a profile is active)."
            }
            return start + "and this kernel has no sch_netem; nothing was changed. Leave those fields out, or use a kernel "
                + "with netem (`condition doctor`)."
        case .requestedEngineMissing(let engine, let profile):
            switch engine {
            case .netem:
                return "--engine netem: profile \"\(profile)\" needs the netem qdisc, and this kernel has no sch_netem (`tc qdisc "
                    + "add ... netem` failed); nothing was changed. Leave out --engine (or give --engine userspace) to use "
                    + "the user-space engine, or see `condition doctor` for how to get netem."
            case .userspace:
                return "--engine userspace: the user-space engine needs nftables and iptables-nft's NFQUEUE target on the "
                    + "netfilter queue (nfnetlink_queue, xt_NFQUEUE), and this system lacks one of them; nothing was changed. "
                    + "`condition doctor` says which; or leave out --engine to use netem."
            }
        case .engineInUse(let active, let requested, let remedy):
            return "the profile in force is carried by \(active.summary), and --engine \(requested.rawValue) asks for the other "
                + "engine; a switch keeps its engine, so nothing was changed. \(remedy), or leave out --engine to switch "
                + "in place."
        case .foreignRootQdisc(let interface, let kind, let handle):
            return "\(interface) already has a root qdisc that TapKit did not create (\(kind) \(handle)); nothing was "
                + "changed. Use --force to replace it: it is recorded and put back by `condition off -i \(interface)`."
        case .foreignIngress(let interface):
            return "\(interface) already has an ingress qdisc that TapKit did not create; nothing was changed. Use --force "
                + "to replace it (`condition off` puts an empty ingress qdisc back; its filters are not restored)."
        case .notRestorable(let interface, let what):
            return "\(interface) has \(what), which TapKit cannot record well enough to restore; nothing was changed. "
                + "Save and remove it yourself (`tc qdisc show dev \(interface)`), then apply again."
        case .needsConfirmation(let profile, let interface):
            return "profile \"\(profile)\" drops (nearly) every packet on \(interface), which is not in a private network "
                + "namespace: remote sessions such as SSH over it will be cut. Add --for DURATION so it turns itself "
                + "off, or --yes if you are sure."
        case .applyFailed(let cause, let problems):
            if problems.isEmpty {
                return "\(cause); rolled back to the state before"
            }
            return "\(cause); rolling back also failed: \(problems.joined(separator: "; ")). "
                + "Inspect with `tc qdisc show` and `ip link`, and run `condition off` for the interface."
        case .invalidProfile(let profile, let problems):
            return "profile \"\(profile)\" cannot be applied: \(problems.joined(separator: "; ")); nothing was changed"
        case .selectionChanged(let interface, let active, let exclusions):
            return "the profile on \(interface) conditions \(active)"
                + (exclusions.isEmpty ? "" : " (excluding \(exclusions.joined(separator: ", ")))")
                + "; a switch keeps the traffic selection, and this apply asks for a different one. Nothing was changed. "
                + "Run `condition off -i \(interface)` first, or repeat the active targets and exclusions."
        case .notActive(let interface):
            return "no profile is active on \(interface)"
        }
    }
}
