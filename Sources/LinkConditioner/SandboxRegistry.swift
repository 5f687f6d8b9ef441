import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What is recorded about a running sandbox: enough for `condition sandboxes`, `apply --sandbox`, and for a
/// watchdog or a later `condition` to tear it down when its owner died without doing so.
public struct SandboxRecord: Codable, Sendable, Equatable {
    public var identity: SandboxIdentity
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
    /// What is applied to the veth ends now (nil before the profile is applied).
    public var conditions: SandboxConditions?

    public init(identity: SandboxIdentity, profile: String, command: [String], since: Date = Date(),
                ownerPID: Int32, ownerStartTime: UInt64?, childPID: Int32? = nil, capturePIDs: [Int32] = [],
                uplinkInterface: String? = nil, uplinkIPv6Interface: String? = nil) {
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
    }

    public var ownerIsAlive: Bool { SandboxProcesses.isAlive(pid: ownerPID, startTime: ownerStartTime) }
}

/// One JSON file per sandbox under a run directory (tmpfs, so a reboot forgets them along with the
/// namespaces), changed only under an exclusive `flock` so concurrent `condition run`s pick distinct slots.
public struct SandboxRegistry: Sendable {
    public var directory: URL

    /// `$TAPKIT_RUN_DIR/sandboxes`, default `/run/tapkit/sandboxes`.
    public static var standard: SandboxRegistry {
        let base = ProcessInfo.processInfo.environment["TAPKIT_RUN_DIR"] ?? "/run/tapkit"
        return SandboxRegistry(directory: URL(fileURLWithPath: base).appendingPathComponent("sandboxes"))
    }

    public init(directory: URL) { self.directory = directory }

    private var lockPath: String { directory.appendingPathComponent(".lock").path }
    private func path(for id: String) -> URL { directory.appendingPathComponent("\(id).json") }

    /// Runs `body` holding the registry lock (blocking until other `condition` processes release it).
    public func withLock<T>(_ body: () throws -> T) throws -> T {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SandboxError.registry("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SandboxError.registry("cannot lock \(lockPath)") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.encoder.encode(record).write(to: path(for: record.identity.id), options: .atomic)
    }

    public func remove(id: String) {
        try? FileManager.default.removeItem(at: path(for: id))
    }

    /// A fresh id and the lowest slot neither used by a recorded sandbox nor overlapping `hostPrefixes`
    /// (the host's IPv4 routes and addresses), nor left behind as an existing namespace. Call under the lock.
    public func allocateIdentity(hostPrefixes: [String], existingNamespaces: Set<String>) throws -> SandboxIdentity {
        let taken = Set(records().map(\.identity.slot))
        let takenIDs = Set(records().map(\.identity.id))
        var id = SandboxIdentity.randomID()
        while takenIDs.contains(id) || existingNamespaces.contains("tapkit-\(id)") { id = SandboxIdentity.randomID() }
        for slot in 0..<SandboxIdentity.slotCount where !taken.contains(slot) {
            let candidate = try SandboxIdentity(id: id, slot: slot)
            if !hostPrefixes.contains(where: candidate.ipv4Overlaps) { return candidate }
        }
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
