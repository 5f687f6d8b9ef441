import Foundation

/// One qdisc as `tc -s -j qdisc show` prints it.
public struct QdiscInfo: Sendable, Equatable, Codable {
    public var kind: String
    public var handle: String
    public var root: Bool?
    public var parent: String?
    public var options: JSONValue?
    public var bytes: UInt64?
    public var packets: UInt64?
    public var drops: UInt64?
    public var overlimits: UInt64?
    public var backlog: UInt64?
    public var qlen: UInt64?

    public var isRoot: Bool { root == true }
    public var isIngress: Bool { kind == "ingress" || kind == "clsact" }
    /// A root the kernel put there itself (handle 0:, e.g. noqueue, pfifo_fast, mq, fq_codel), which
    /// comes back by itself when a root qdisc is deleted.
    public var isKernelDefault: Bool { handle == "0:" }
}

/// What is on an interface right now.
public struct InterfaceQdiscs: Sendable, Equatable {
    public var qdiscs: [QdiscInfo]

    public init(qdiscs: [QdiscInfo]) { self.qdiscs = qdiscs }

    public init(json: String, device: String) throws {
        let trimmed = json.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { self.qdiscs = []; return }
        do {
            qdiscs = try JSONDecoder().decode([QdiscInfo].self, from: Data(trimmed.utf8))
        } catch {
            throw ConditionerError.unexpectedOutput("`tc -j qdisc show dev \(device)` printed something that is not the expected JSON list: \(error)")
        }
    }

    public var root: QdiscInfo? { qdiscs.first { $0.isRoot } }
    public var ingress: QdiscInfo? { qdiscs.first { $0.isIngress } }
    /// The root is TapKit's own htb.
    public var hasOurRoot: Bool { root.map { ReservedHandles.isOurs($0.handle) } ?? false }
    /// A root someone configured (not the kernel's default and not ours).
    public var foreignRoot: QdiscInfo? {
        guard let root, !root.isKernelDefault, !ReservedHandles.isOurs(root.handle) else { return nil }
        return root
    }
    /// Qdiscs below the root (not the root, not ingress).
    public var children: [QdiscInfo] { qdiscs.filter { !$0.isRoot && !$0.isIngress } }
}

/// A foreign root qdisc recorded before `--force` replaced it, with the commands that bring it back.
public struct RecordedQdisc: Sendable, Equatable, Codable {
    public var kind: String
    public var handle: String
    public var options: JSONValue?

    public init(kind: String, handle: String, options: JSONValue?) {
        self.kind = kind
        self.handle = handle
        self.options = options
    }

    public init(_ info: QdiscInfo) {
        self.init(kind: info.kind, handle: info.handle, options: info.options)
    }

    /// The kinds whose settings `tc -j` prints completely enough to recreate them.
    public static let restorableKinds = ["tbf", "pfifo", "bfifo", "htb", "pfifo_fast", "pfifo_head_drop"]

    /// The arguments after `tc qdisc add dev IFACE root handle H:` that recreate this qdisc, or nil
    /// when its settings cannot be recovered from `tc -j` output.
    public func restoreArguments() -> [String]? {
        let options = self.options ?? .object([:])
        switch kind {
        case "tbf":
            guard let rate = options["rate"]?.number, let burst = options["burst"]?.number else { return nil }
            var arguments = ["tbf", "rate", TCUnits.rate(bitsPerSecond: UInt64(rate) * 8), "burst", String(UInt64(burst))]
            if let latency = options["lat"]?.number {
                arguments += ["latency", TCUnits.time(microseconds: UInt64(latency))]
            } else if let limit = options["limit"]?.number {
                arguments += ["limit", String(UInt64(limit))]
            } else { return nil }
            if let peak = options["peakrate"]?.number, let mtu = options["mtu"]?.number {
                arguments += ["peakrate", TCUnits.rate(bitsPerSecond: UInt64(peak) * 8), "mtu", String(UInt64(mtu))]
            }
            return arguments
        case "pfifo", "bfifo", "pfifo_head_drop":
            guard let limit = options["limit"]?.number else { return [kind] }
            return [kind, "limit", String(UInt64(limit))]
        case "htb":
            var arguments = ["htb"]
            if let defaultClass = options["default"]?.string {
                let hex = defaultClass.hasPrefix("0x") ? String(defaultClass.dropFirst(2)) : defaultClass
                guard !hex.isEmpty, hex.allSatisfy(\.isHexDigit) else { return nil }
                arguments += ["default", hex]
            }
            if let r2q = options["r2q"]?.number { arguments += ["r2q", String(UInt64(r2q))] }
            if let qlen = options["direct_qlen"]?.number { arguments += ["direct_qlen", String(UInt64(qlen))] }
            return arguments
        default:
            if case .object(let object) = options, object.isEmpty { return [kind] }
            return nil
        }
    }

    public func restoreCommand(interface: InterfaceName) -> [String]? {
        guard let arguments = restoreArguments() else { return nil }
        return ["tc", "qdisc", "add", "dev", interface.rawValue, "root", "handle", handle] + arguments
    }
}

/// Counters of one conditioned direction, summed over TapKit's qdiscs on one device.
public struct DirectionCounters: Sendable, Equatable, Codable {
    /// Packets that left the tree.
    public var packets: UInt64
    public var bytes: UInt64
    /// Packets dropped, by netem loss or a full queue.
    public var dropped: UInt64
    /// Times htb held a packet back because the class was over its rate.
    public var overlimits: UInt64
    /// Packets waiting in the tree now.
    public var queued: UInt64
    /// The profile's loss in this direction, when it has any (100: every packet is dropped, as under Black Hole).
    public var lossPercent: Double?
    /// Bytes of the dropped packets, where the dropping rule counts them (the user-space engine's nftables loss).
    public var droppedBytes: UInt64?

    public init(packets: UInt64 = 0, bytes: UInt64 = 0, dropped: UInt64 = 0, overlimits: UInt64 = 0, queued: UInt64 = 0,
                lossPercent: Double? = nil, droppedBytes: UInt64? = nil) {
        self.packets = packets
        self.bytes = bytes
        self.dropped = dropped
        self.overlimits = overlimits
        self.queued = queued
        self.lossPercent = lossPercent
        self.droppedBytes = droppedBytes
    }

    /// From `tc -s -j qdisc show`: sent counts from the root (what actually left). htb already counts its
    /// children's drops, so drops are the root's, or the sum over the qdiscs directly below htb's classes if larger
    /// (a segmenter counts the drops of the netem below it and of single segments, which htb does not see);
    /// overlimits from the htb root.
    public init(qdiscs: InterfaceQdiscs) {
        let ours = qdiscs.qdiscs.filter { ReservedHandles.isOurs($0.handle) }
        let root = ours.first { $0.handle == ReservedHandles.root }
        let belowClasses = ours.filter { $0.handle != ReservedHandles.root && $0.parent?.hasPrefix(ReservedHandles.root) == true }
        self.init(packets: root?.packets ?? 0, bytes: root?.bytes ?? 0,
                  dropped: max(root?.drops ?? 0, belowClasses.reduce(0) { $0 + ($1.drops ?? 0) }),
                  overlimits: root?.overlimits ?? 0,
                  queued: root?.qlen ?? 0)
    }
}
