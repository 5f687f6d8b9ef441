import Foundation
import SystemSupport

/// Facts about the host a sandbox is wired into.
public struct SandboxHostFacts: Sendable, Equatable {
    /// Interface of the IPv4 / IPv6 default route, if any (masquerade goes out there).
    public var defaultInterface: String?
    public var defaultIPv6Interface: String?
    /// Every IPv4 prefix on the host (routes and addresses) a sandbox slot must not overlap.
    public var ipv4Prefixes: [String]
    public var namespaces: Set<String>

    public init(defaultInterface: String?, defaultIPv6Interface: String?, ipv4Prefixes: [String],
                namespaces: Set<String>) {
        self.defaultInterface = defaultInterface
        self.defaultIPv6Interface = defaultIPv6Interface
        self.ipv4Prefixes = ipv4Prefixes
        self.namespaces = namespaces
    }

    public static func current(runner: any CommandRunner) throws -> SandboxHostFacts {
        let routes4 = try jsonArray(runner, ["ip", "-j", "-4", "route", "show", "table", "main"])
        let routes6 = try jsonArray(runner, ["ip", "-j", "-6", "route", "show", "default"])
        let addresses = try jsonArray(runner, ["ip", "-j", "-4", "addr", "show"])
        var prefixes: [String] = []
        var defaultInterface: String?
        for route in routes4 {
            guard let dst = route["dst"] as? String else { continue }
            if dst == "default" { defaultInterface = defaultInterface ?? route["dev"] as? String } else { prefixes.append(dst) }
        }
        for link in addresses {
            for info in link["addr_info"] as? [[String: Any]] ?? [] {
                if let local = info["local"] as? String, let length = info["prefixlen"] as? Int {
                    prefixes.append("\(local)/\(length)")
                }
            }
        }
        let namespaces = try runner.check(["ip", "netns", "list"]).stdout
            .split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        return SandboxHostFacts(defaultInterface: defaultInterface,
                                defaultIPv6Interface: routes6.first?["dev"] as? String,
                                ipv4Prefixes: prefixes, namespaces: Set(namespaces))
    }

    private static func jsonArray(_ runner: any CommandRunner, _ argv: [String]) throws -> [[String: Any]] {
        let output = try runner.check(argv).stdout
        if output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return [] }
        return (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [[String: Any]] ?? []
    }
}

/// IP forwarding is a host-wide switch. The first sandbox turns it on if it was off and remembers that in
/// the run directory; when the last sandbox is torn down, it is put back. Call both under the registry lock.
public struct SandboxForwarding: Sendable {
    public var stateFile: URL

    public init(registry: SandboxRegistry) {
        stateFile = registry.directory.deletingLastPathComponent().appendingPathComponent("forwarding.json")
    }

    static let ipv4 = "/proc/sys/net/ipv4/ip_forward"
    static let ipv6 = "/proc/sys/net/ipv6/conf/all/forwarding"

    struct Saved: Codable { var ipv4: String?; var ipv6: String? }

    public func enable(ipv6 wantIPv6: Bool) throws {
        var saved = (try? JSONDecoder().decode(Saved.self, from: Data(contentsOf: stateFile))) ?? Saved()
        if Self.read(Self.ipv4) != "1" {
            if saved.ipv4 == nil { saved.ipv4 = Self.read(Self.ipv4) }
            try Self.write(Self.ipv4, "1")
        }
        if wantIPv6, let current = Self.read(Self.ipv6), current != "1" {
            if saved.ipv6 == nil { saved.ipv6 = current }
            try Self.write(Self.ipv6, "1")
        }
        if saved.ipv4 != nil || saved.ipv6 != nil {
            try JSONEncoder().encode(saved).write(to: stateFile, options: .atomic)
        }
    }

    /// Restores what the first sandbox found; only when no sandbox is left.
    public func restoreIfUnused(remainingSandboxes: Int) {
        guard remainingSandboxes == 0,
              let saved = try? JSONDecoder().decode(Saved.self, from: Data(contentsOf: stateFile)) else { return }
        if let value = saved.ipv4 { try? Self.write(Self.ipv4, value) }
        if let value = saved.ipv6 { try? Self.write(Self.ipv6, value) }
        try? FileManager.default.removeItem(at: stateFile)
    }

    static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func write(_ path: String, _ value: String) throws {
        do { try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: path)) }
        catch { throw SandboxError.registry("cannot write \(value) to \(path): \(systemReason(error))") }
    }
}
