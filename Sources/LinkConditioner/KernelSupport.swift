import Foundation

/// Whether the kernel can do what a profile needs, checked before anything is changed.
public protocol KernelSupport: Sendable {
    /// True when a netem qdisc can be created (probed in a throwaway network namespace).
    func netemAvailable() -> Bool
}

/// Asks the running kernel: tries `tc qdisc add dev lo root netem` inside `unshare --net`, a network
/// namespace that exists only for that one command, so nothing real is touched.
public struct LiveKernelSupport: KernelSupport {
    let runner: any CommandRunner

    public init(runner: any CommandRunner = ProcessRunner()) { self.runner = runner }

    public func netemAvailable() -> Bool {
        let result = try? runner.run(["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"])
        return result?.status == 0
    }
}
