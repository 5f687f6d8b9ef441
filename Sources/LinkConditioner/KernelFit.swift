import Foundation

/// Whether this kernel can apply a profile, and with what: the one judgement `condition list` (its HERE column) and
/// `condition show` (its `Here:` line) both print, so the two never disagree (show said "Needs: netem" where list
/// said the user-space engine could carry the profile).
public struct KernelFit: Sendable, Equatable {
    public var netem: Bool
    /// Whether the user-space engine can run (only asked where netem is missing).
    public var userspaceEngine: Bool

    public init(netem: Bool, userspaceEngine: Bool) {
        self.netem = netem
        self.userspaceEngine = userspaceEngine
    }

    /// As root tried for real, as `apply` does; otherwise judged from the kernel's module lists and the tools.
    public static func probe(asRoot: Bool = geteuid() == 0) -> KernelFit {
        let netem = asRoot ? LiveKernelSupport().netemAvailable() : Doctor().moduleAvailable("sch_netem")
        let engine = !netem && (asRoot ? LiveKernelSupport().userspaceEngineAvailable() : ProcessRunner.locate("iptables-nft") != nil)
        return KernelFit(netem: netem, userspaceEngine: engine)
    }

    public enum Verdict: Sendable, Equatable {
        case yes
        case withUserspaceEngine
        case needsNetem

        public var text: String {
            switch self {
            case .yes: "yes"
            case .withUserspaceEngine: "yes (user-space engine)"
            case .needsNetem: "no: needs netem"
            }
        }

        public var canRun: Bool { self != .needsNetem }
    }

    public func verdict(_ profile: Profile) -> Verdict {
        if !profile.needsNetem || netem { return .yes }
        if userspaceEngine && UserspaceEngine.unsupported(profile).isEmpty { return .withUserspaceEngine }
        return .needsNetem
    }
}
