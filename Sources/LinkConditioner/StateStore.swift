import Foundation
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// What `apply` left on one interface, kept under /run so `off`, `status` and the `--for` watchdog find it.
public struct ConditionState: Codable, Sendable, Equatable {
    public var interface: InterfaceName
    public var ifb: InterfaceName
    public var profile: Profile
    public var since: Date
    /// When `--for` turns the profile off, if it was given.
    public var expiresAt: Date?
    /// Changes on every apply, so a watchdog from an earlier `--for` never turns off a later profile.
    public var token: String
    /// The foreign root qdisc that `--force` replaced, to put back on `off`.
    public var replacedRoot: RecordedQdisc?
    /// Whether `--force` replaced a foreign ingress qdisc.
    public var replacedIngress: Bool
    /// False while commands are still running (a crash then leaves a record `off` can clean up from).
    public var complete: Bool
    /// The traffic conditioned (targets, exclusions); nil in records of earlier versions, meaning all of it.
    public var selection: TrafficSelection? = nil
    /// What carries delay and loss; nil in records of earlier versions, meaning netem.
    public var engine: ConditioningEngine? = nil
    /// Names the user-space engine process of this apply (kept across switches); it exits when the record no
    /// longer carries it.
    public var engineID: String? = nil
    /// The interface's MTU when the profile was applied, which sizes the segmenters (`PlanBuilder.segmenter`);
    /// nil in records of earlier versions and when `ip link` did not say, meaning `PlanBuilder.defaultMTU`.
    public var mtu: Int? = nil
    /// With the user-space engine: whether the ingress redirect's classifier moves each arriving packet's receive
    /// time stamp past the engine's hold (`ReceiveRestamp`), so ping's RTT shows the downlink delay; nil in records
    /// of earlier versions and where the kernel refused the program, meaning u32.
    public var restampsReceive: Bool? = nil

    /// The engine in force (netem for records that predate the choice).
    public var activeEngine: ConditioningEngine { engine ?? .netem }

    public init(interface: InterfaceName, profile: Profile, since: Date = Date(), expiresAt: Date? = nil,
                token: String = UUID().uuidString, replacedRoot: RecordedQdisc? = nil,
                replacedIngress: Bool = false, complete: Bool = false) {
        self.interface = interface
        self.ifb = interface.ifbName
        self.profile = profile
        self.since = since
        self.expiresAt = expiresAt
        self.token = token
        self.replacedRoot = replacedRoot
        self.replacedIngress = replacedIngress
        self.complete = complete
    }
}

/// State files, one per interface and network namespace: `/run/tapkit/condition/<netns inode>-<iface>.json`
/// unless the executable passes another directory.
public struct StateStore: Sendable {
    public let directory: URL
    /// Interfaces are per network namespace, so the state is too.
    public let namespaceID: String

    public static let defaultDirectory = URL(fileURLWithPath: "/run/tapkit/condition")

    public init(directory: URL = StateStore.defaultDirectory, namespaceID: String = NetworkNamespace.currentID()) {
        self.directory = directory
        self.namespaceID = namespaceID
    }

    public func url(_ interface: InterfaceName, suffix: String = "json") -> URL {
        directory.appendingPathComponent("\(namespaceID)-\(interface.rawValue).\(suffix)")
    }

    public func load(_ interface: InterfaceName) throws -> ConditionState? {
        let file = url(interface)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(ConditionState.self, from: Data(contentsOf: file))
        } catch {
            throw ConditionerError.unexpectedOutput("state file \(file.path) is damaged (\(error)); delete it and check the interface with `tc qdisc show dev \(interface)`")
        }
    }

    /// The record's bytes as stored (nil: none), for telling cheaply whether it changed since it was read.
    public func recordBytes(_ interface: InterfaceName) -> Data? {
        try? Data(contentsOf: url(interface))
    }

    func createDirectory() throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ConditionerError.unexpectedOutput("cannot create the state directory \(directory.path): "
                + "\(systemReason(error)) (run as root)")
        }
    }

    public func save(_ state: ConditionState) throws {
        try createDirectory()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(state).write(to: url(state.interface), options: .atomic)
    }

    /// The `mangle` tables (`ip`, `ip6`) that iptables-nft created for the user-space engine's queue rules in this
    /// namespace, where none were before: the last `off` deletes them (iptables-nft leaves a table and its chains
    /// behind when its last rule goes). Namespace-wide, since interfaces share the tables.
    var createdMangleTablesURL: URL { directory.appendingPathComponent("\(namespaceID)-created-mangle-tables") }

    public func createdMangleTables() -> Set<String> {
        let text = (try? String(contentsOf: createdMangleTablesURL, encoding: .utf8)) ?? ""
        return Set(text.split(separator: "\n").map(String.init).filter { $0 == "ip" || $0 == "ip6" })
    }

    func setCreatedMangleTables(_ families: Set<String>) throws {
        if families.isEmpty {
            try? FileManager.default.removeItem(at: createdMangleTablesURL)
            return
        }
        try createDirectory()
        try Data((families.sorted().joined(separator: "\n") + "\n").utf8).write(to: createdMangleTablesURL, options: .atomic)
    }

    /// Removes the record and the user-space engine's report beside it.
    public func remove(_ interface: InterfaceName) {
        try? FileManager.default.removeItem(at: url(interface))
        try? FileManager.default.removeItem(at: url(interface, suffix: "engine"))
    }

    /// Every state in this network namespace.
    public func all() -> [ConditionState] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().compactMap { name -> ConditionState? in
            guard name.hasPrefix(namespaceID + "-"), name.hasSuffix(".json") else { return nil }
            let raw = String(name.dropFirst(namespaceID.count + 1).dropLast(5))
            guard let interface = try? InterfaceName(raw) else { return nil }
            return try? load(interface)
        }
    }

    /// Runs `body` holding an exclusive lock for the interface, so apply, off and the watchdog never interleave.
    /// The lock file goes when no record is left, so names tried once (a typo, an interface since removed) leave
    /// nothing behind.
    public func withLock<T>(_ interface: InterfaceName, _ body: () throws -> T) throws -> T {
        try createDirectory()
        let record = url(interface).path
        return try FileLock.withExclusiveLock(path: url(interface, suffix: "lock").path,
                                              removeAfterwards: { !FileManager.default.fileExists(atPath: record) }, body)
    }
}
