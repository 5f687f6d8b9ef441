import Foundation

/// Whether the kernel can do what a profile needs, checked before anything is changed.
public protocol KernelSupport: Sendable {
    /// True when a netem qdisc can be created (probed in a throwaway network namespace).
    func netemAvailable() -> Bool
    /// True when the user-space engine can run: nftables and iptables-nft's NFQUEUE target (probed the same way).
    func userspaceEngineAvailable() -> Bool
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

    public func userspaceEngineAvailable() -> Bool {
        let queue = try? runner.run(["unshare", "--net", "iptables-nft", "-t", "mangle", "-A", "POSTROUTING",
                                     "-j", "NFQUEUE", "--queue-num", "1", "--queue-bypass"])
        let table = try? runner.run(["unshare", "--net", "nft", "add", "table", "inet", "tapkit_probe"])
        return queue?.status == 0 && table?.status == 0
    }
}
