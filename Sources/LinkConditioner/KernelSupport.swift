import Foundation

/// Whether the kernel can do what a profile needs, checked before anything is changed.
public protocol KernelSupport: Sendable {
    /// True when a netem qdisc can be created (probed in a throwaway network namespace).
    func netemAvailable() -> Bool
    /// True when the user-space engine can run: nftables and iptables-nft's NFQUEUE target (probed the same way).
    func userspaceEngineAvailable() -> Bool
    /// True when tc can load `ReceiveRestamp` as the ingress classifier (its time stamp helper is Linux 5.18+).
    func receiveRestampAvailable() -> Bool
}

extension KernelSupport {
    public func receiveRestampAvailable() -> Bool { false }
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

    /// Loads the program as apply would (an ingress qdisc on `lo` and the filter, one `tc -batch` inside `unshare
    /// --net`). Without root, judged from the kernel's version (the helper came with 5.18).
    public func receiveRestampAvailable() -> Bool {
        guard geteuid() == 0 else { return Self.kernelAtLeast(5, 18) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-restamp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let object = directory.appendingPathComponent("restamp.o")
        let batch = directory.appendingPathComponent("probe.batch")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(ReceiveRestamp.object()).write(to: object)
            try Data(("qdisc add dev lo handle ffff: ingress\n"
                      + "filter add dev lo parent ffff: protocol ip prio 1 bpf obj \(object.path) sec \(ReceiveRestamp.section)\n").utf8)
                .write(to: batch)
        } catch { return false }
        return (try? runner.run(["unshare", "--net", "tc", "-batch", batch.path]))?.status == 0
    }

    static func kernelAtLeast(_ major: Int, _ minor: Int) -> Bool {
        var name = utsname()
        guard uname(&name) == 0 else { return false }
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard parts.count == 2 else { return false }
        return (parts[0], parts[1]) >= (major, minor)
    }
}
