import LinkConditioner

/// A kernel whose answers are given up front (tests).
public struct FixedKernelSupport: KernelSupport {
    public var netem: Bool
    public init(netem: Bool) { self.netem = netem }
    public func netemAvailable() -> Bool { netem }
}
