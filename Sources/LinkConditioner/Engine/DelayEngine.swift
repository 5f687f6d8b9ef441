import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// The user-space engine's loop: packets arrive from the netfilter queue (their metadata only), each gets its
/// decision from its queue's `DelayModel`, and held ones are released by verdict at their time, from a heap
/// ordered by release time (first come first out among equal times, so a constant delay keeps the order; jitter
/// reorders as netem's time-ordered queue does). The kernel holds the packets; at most `maximumHeld` per queue
/// (its queue length), beyond which it drops, as a full netem queue does.
public final class DelayEngine {
    private let socket: NetfilterQueueSocket
    private let sender: RawPacketSender
    /// The uplink queues: their held packets are copies, sent again by `sender` (see `RawPacketSender`).
    private let resent: Set<UInt16>
    private var models: [UInt16: DelayModel]
    private var states: [UInt16: DelayModel.State] = [:]
    private var held = ReleaseHeap()
    private var arrived: [NetfilterQueueSocket.QueuedPacket] = []
    public private(set) var counters = Counters()

    public struct Counters: Sendable, Equatable {
        public var delayed: UInt64 = 0
        public var passed: UInt64 = 0
        public var dropped: UInt64 = 0
    }

    /// Binds the interface's queues (in this process's network namespace) for `profile`.
    public init(profile: Profile, interface: InterfaceName, maximumHeld: UInt32) throws {
        socket = try NetfilterQueueSocket()
        sender = try RawPacketSender(mark: UserspaceEngine.resentMark)
        models = UserspaceEngine.models(profile, interface: interface)
        let queues = UserspaceEngine.queues(interface)
        resent = Set(queues.filter { $0.role != .downlink }.map(\.number))
        for queue in queues {
            try socket.bind(queue: queue.number, maximumLength: maximumHeld, copyPackets: resent.contains(queue.number))
            states[queue.number] = DelayModel.State()
        }
        arrived.reserveCapacity(4096)
    }

    /// Follows a switch: packets already held keep their release times; new ones get the new profile's. Into a
    /// direction that loses everything (Black Hole), what is held for it goes too, as netem's leaf goes with its
    /// queue in such a switch (`PlanBuilder.switchEgress`): nothing of the old profile arrives after it.
    public func update(profile: Profile, interface: InterfaceName) {
        models = UserspaceEngine.models(profile, interface: interface)
        let lost = Set(UserspaceEngine.queues(interface).filter { queue in
            (queue.role == .downlink ? profile.downlink : profile.uplink).lossPercent >= 100
        }.map(\.number))
        guard !lost.isEmpty else { return }
        for entry in held.removeAll(where: { lost.contains($0.packet.queue) }) {
            counters.dropped += 1
            // A resent queue's original was dropped when its copy was taken: the copy is just forgotten.
            if !resent.contains(entry.packet.queue) || entry.packet.payload.isEmpty { socket.addVerdict(.drop, for: entry.packet) }
        }
        try? socket.flushVerdicts()
    }

    /// Runs until `keepGoing` (asked about every `checkInterval` seconds) says stop; then lets every held
    /// packet go at once, so nothing the engine held is lost when it stops.
    public func run(checkInterval: Double = 0.02, keepGoing: () -> Bool) throws {
        let check = UInt64(checkInterval * 1e9)
        var nextCheck = Self.now() + check
        while true {
            var now = Self.now()
            releaseDue(now)
            try socket.flushVerdicts()
            if now >= nextCheck {
                if !keepGoing() { break }
                nextCheck = now + check
            }
            let wait = min(nextCheck - min(now, nextCheck), held.first.map { $0.due > now ? $0.due - now : 0 } ?? check)
            arrived.removeAll(keepingCapacity: true)
            _ = try socket.receive(timeout: wait, into: &arrived)
            now = Self.now()
            for packet in arrived { admit(packet, now: now) }
            try socket.flushVerdicts()
        }
        while let entry = held.popFirst() { release(entry.packet) }
        try socket.flushVerdicts()
    }

    private func admit(_ packet: NetfilterQueueSocket.QueuedPacket, now: UInt64) {
        guard let model = models[packet.queue], var state = states[packet.queue] else {
            socket.addVerdict(.accept, for: packet)
            return
        }
        let decision = model.decide(&state)
        states[packet.queue] = state
        switch decision {
        case .drop:
            counters.dropped += 1
            socket.addVerdict(.drop, for: packet)
        case .now:
            counters.passed += 1
            socket.addVerdict(.accept, for: packet)
        case .after(let nanoseconds):
            counters.delayed += 1
            if resent.contains(packet.queue) {
                // The copy is held; the original is freed now, and with it its socket's small-queue budget.
                guard !packet.payload.isEmpty else { socket.addVerdict(.accept, for: packet); return }
                socket.addVerdict(.drop, for: packet)
            }
            held.push(due: now + nanoseconds, packet: packet)
        }
    }

    private func releaseDue(_ now: UInt64) {
        while let first = held.first, first.due <= now {
            _ = held.popFirst()
            release(first.packet)
        }
    }

    private func release(_ packet: NetfilterQueueSocket.QueuedPacket) {
        if resent.contains(packet.queue) && !packet.payload.isEmpty {
            sender.send(packet.payload)
        } else {
            socket.addVerdict(.accept, for: packet)
        }
    }

    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

/// A binary min-heap of held packets by release time, ties by arrival order; its array is reused, so holding
/// and releasing allocate nothing once it has grown to the busiest moment's size.
struct ReleaseHeap {
    struct Entry {
        var due: UInt64
        var order: UInt64
        var packet: NetfilterQueueSocket.QueuedPacket
        func before(_ other: Entry) -> Bool { due != other.due ? due < other.due : order < other.order }
    }

    private var entries: [Entry] = []
    private var arrivals: UInt64 = 0

    var first: Entry? { entries.first }
    var count: Int { entries.count }

    mutating func push(due: UInt64, packet: NetfilterQueueSocket.QueuedPacket) {
        arrivals += 1
        entries.append(Entry(due: due, order: arrivals, packet: packet))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].before(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Takes out the entries `shouldRemove` picks (a switch into a profile that drops them); returns them.
    mutating func removeAll(where shouldRemove: (Entry) -> Bool) -> [Entry] {
        let removed = entries.filter(shouldRemove)
        guard !removed.isEmpty else { return [] }
        let kept = entries.filter { !shouldRemove($0) }
        entries.removeAll(keepingCapacity: true)
        for entry in kept.sorted(by: { $0.before($1) }) { entries.append(entry) } // sorted is a valid heap
        return removed
    }

    mutating func popFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        let top = entries[0]
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].before(entries[smallest]) { smallest = left }
                if right < entries.count, entries[right].before(entries[smallest]) { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}
