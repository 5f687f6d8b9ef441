import Foundation
import SystemSupport

/// What is recorded about a running sandbox: enough for `condition sandboxes`, `apply --sandbox`, and for a
/// watchdog or a later `condition` to tear it down when its owner died without doing so.
public struct SandboxRecord: Codable, Sendable, Equatable {
    public var identity: SandboxIdentity
    /// The profile name shown by `condition sandboxes` ("none" for a sandbox nobody conditions).
    public var profile: String
    public var command: [String]
    public var since: Date
    /// The `condition run` process that owns the sandbox, and its start time (pid reuse guard).
    public var ownerPID: Int32
    public var ownerStartTime: UInt64?
    /// The command under test (entered the namespace through `ip netns exec`, which execs in place).
    public var childPID: Int32?
    /// `capture` processes on the host interface, stopped on teardown.
    public var capturePIDs: [Int32]
    /// The host interface traffic is masqueraded out of, if the host had a default route.
    public var uplinkInterface: String?
    public var uplinkIPv6Interface: String?
    /// What the conditioner applied to the veth ends, in its own JSON (nil before a profile is applied); opaque
    /// here, so the sandbox does not depend on the conditioner.
    public var conditions: String?
    /// Files private to this sandbox (the TLS key log), removed with it.
    public var scratchDirectory: String?
    /// Whether `condition run`'s DNS forwarder answers the command's DNS: it then also holds each query for the
    /// profile's DNS delay, in place of netem (nil in records of earlier versions: no).
    public var answersDNS: Bool?

    public init(identity: SandboxIdentity, profile: String, command: [String], since: Date = Date(),
                ownerPID: Int32, ownerStartTime: UInt64?, childPID: Int32? = nil, capturePIDs: [Int32] = [],
                uplinkInterface: String? = nil, uplinkIPv6Interface: String? = nil, scratchDirectory: String? = nil) {
        self.identity = identity
        self.profile = profile
        self.command = command
        self.since = since
        self.ownerPID = ownerPID
        self.ownerStartTime = ownerStartTime
        self.childPID = childPID
        self.capturePIDs = capturePIDs
        self.uplinkInterface = uplinkInterface
        self.uplinkIPv6Interface = uplinkIPv6Interface
        self.scratchDirectory = scratchDirectory
    }

    public var ownerIsAlive: Bool { ProcessTable.isAlive(pid: ownerPID, startTime: ownerStartTime) }
}

/// One JSON file per sandbox under a run directory (tmpfs, so a reboot forgets them along with the
/// namespaces), changed only under an exclusive `flock` so concurrent `condition run`s pick distinct slots.
public struct SandboxRegistry: Sendable {
    public var directory: URL

    /// Where TapKit keeps run-time state unless the executable is told otherwise.
    public static let defaultRunDirectory = URL(fileURLWithPath: "/run/tapkit")

    /// `RUN_DIRECTORY/sandboxes`.
    public init(runDirectory: URL = SandboxRegistry.defaultRunDirectory) {
        directory = runDirectory.appendingPathComponent("sandboxes")
    }

    public init(directory: URL) { self.directory = directory }

    private var lockPath: String { directory.appendingPathComponent(".lock").path }
    private func path(for id: String) -> URL { directory.appendingPathComponent("\(id).json") }

    /// Runs `body` holding the registry lock (blocking until other `condition` processes release it).
    public func withLock<T>(_ body: () throws -> T) throws -> T {
        try createDirectory()
        return try FileLock.withExclusiveLock(path: lockPath, body)
    }

    func createDirectory() throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SandboxError.registry("cannot create \(directory.path): \(systemReason(error)) (run as root)")
        }
    }

    public func records() -> [SandboxRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
            else { return nil }
            return try? Self.decoder.decode(SandboxRecord.self, from: data)
        }
    }

    public func record(id: String) -> SandboxRecord? {
        guard let data = FileManager.default.contents(atPath: path(for: id).path) else { return nil }
        return try? Self.decoder.decode(SandboxRecord.self, from: data)
    }

    public func save(_ record: SandboxRecord) throws {
        try createDirectory()
        try Self.encoder.encode(record).write(to: path(for: record.identity.id), options: .atomic)
    }

    public func remove(id: String) {
        if let slot = record(id: id)?.identity.slot { noteReleased(slot: slot) }
        try? FileManager.default.removeItem(at: path(for: id))
        try? FileManager.default.removeItem(at: dnsCountsFile(id: id))
        try? FileManager.default.removeItem(at: engineReportFile(id: id))
    }

    /// Where a sandbox's user-space engine (the conditioner's, without netem) writes its report.
    public func engineReportFile(id: String) -> URL { directory.appendingPathComponent("\(id).engine") }

    /// Where a sandbox's DNS forwarder keeps its counts (beside the record, not `.json`, so not read as one).
    public func dnsCountsFile(id: String) -> URL { directory.appendingPathComponent("\(id).dns-counts") }

    /// A sandbox's DNS forwarder's counts, nil when it has none (no DNS faults).
    public func dnsCounts(id: String) -> DNSForwarderCounts? {
        FileManager.default.contents(atPath: dnsCountsFile(id: id).path).flatMap { try? JSONDecoder().decode(DNSForwarderCounts.self, from: $0) }
    }

    /// How long a slot given back is not given out again while others are free: its addresses' old connections
    /// (a FIN or data the far end retransmits, a server's late answer, TIME_WAIT's 60 s, conntrack's entries) can
    /// still arrive for that long, and would reach the next sandbox on the same address (seen: `capture tcp --
    /// sleep 3` right after `condition run "3G" -- curl ...` showed the old connection's `Flags [FP.]` and an RST).
    public static let slotQuarantine: TimeInterval = 600

    /// When each slot was last given back (`released-slots.json` beside the records; entries older than the
    /// quarantine are forgotten, so the file stays small).
    var releasedPath: URL { directory.appendingPathComponent("released-slots.json") }

    public func releasedSlots(now: Date = Date()) -> [Int: Date] {
        guard let data = FileManager.default.contents(atPath: releasedPath.path),
              let seconds = try? JSONDecoder().decode([String: Double].self, from: data) else { return [:] }
        var slots: [Int: Date] = [:]
        for (slot, time) in seconds {
            let date = Date(timeIntervalSince1970: time)
            if let slot = Int(slot), now.timeIntervalSince(date) < Self.slotQuarantine { slots[slot] = date }
        }
        return slots
    }

    /// Notes that `slot` was given back now. Under the lock, as every removal is.
    public func noteReleased(slot: Int, now: Date = Date()) {
        var slots = releasedSlots(now: now)
        slots[slot] = now
        let seconds = Dictionary(uniqueKeysWithValues: slots.map { (String($0.key), $0.value.timeIntervalSince1970) })
        try? JSONEncoder().encode(seconds).write(to: releasedPath, options: .atomic)
    }

    /// A fresh id and a slot neither used by a recorded sandbox nor overlapping `hostPrefixes` (the host's IPv4
    /// routes and addresses), nor left behind as an existing namespace: the lowest not given back within
    /// `slotQuarantine`, else the one given back longest ago (least recently used). Call under the lock.
    public func allocateIdentity(hostPrefixes: [String], existingNamespaces: Set<String>) throws -> SandboxIdentity {
        let taken = Set(records().map(\.identity.slot))
        let takenIDs = Set(records().map(\.identity.id))
        var id = SandboxIdentity.randomID()
        while takenIDs.contains(id) || existingNamespaces.contains("tapkit-\(id)") { id = SandboxIdentity.randomID() }
        let released = releasedSlots()
        var leastRecent: (identity: SandboxIdentity, released: Date)?
        for slot in 0..<SandboxIdentity.slotCount where !taken.contains(slot) {
            let candidate = try SandboxIdentity(id: id, slot: slot)
            if hostPrefixes.contains(where: candidate.ipv4Overlaps) { continue }
            guard let when = released[slot] else { return candidate }
            if leastRecent.map({ when < $0.released }) ?? true { leastRecent = (candidate, when) }
        }
        if let leastRecent { return leastRecent.identity }
        throw SandboxError.noFreeSlot
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
