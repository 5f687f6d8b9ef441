import LinkConditioner

/// A kernel whose answers are given up front (tests).
public struct FixedKernelSupport: KernelSupport {
    public var netem: Bool
    public var userspace: Bool
    public init(netem: Bool, userspace: Bool = false) {
        self.netem = netem
        self.userspace = userspace
    }
    public func netemAvailable() -> Bool { netem }
    public func userspaceEngineAvailable() -> Bool { userspace }
}
