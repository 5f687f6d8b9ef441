import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 network in CIDR form (`10.0.0.0/8`, `2001:db8::/32`); a bare address is a /32 or /128.
public struct IPNetwork: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Family: String, Sendable, Codable, CaseIterable { case ipv4, ipv6 }

    public let family: Family
    /// The address as `inet_ntop` prints it (normalised: `2001:DB8:0::1` becomes `2001:db8::1`).
    public let address: String
    public let prefixLength: Int

    public init(_ text: String) throws(SelectionError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let addressText = parts[0]
        var bytes = [UInt8](repeating: 0, count: 16)
        var printed = [CChar](repeating: 0, count: 64)
        if inet_pton(AF_INET, addressText, &bytes) == 1 {
            family = .ipv4
            inet_ntop(AF_INET, bytes, &printed, socklen_t(printed.count))
        } else if inet_pton(AF_INET6, addressText, &bytes) == 1 {
            family = .ipv6
            inet_ntop(AF_INET6, bytes, &printed, socklen_t(printed.count))
        } else {
            throw SelectionError(text: text, expected: "an IPv4 or IPv6 address, optionally with /PREFIX (10.0.0.0/8, 2001:db8::/32)")
        }
        address = String(decoding: printed.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let maximum = family == .ipv4 ? 32 : 128
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length), parts[1].allSatisfy(\.isNumber) else {
                throw SelectionError(text: text, expected: "a prefix length from 0 to \(maximum) after the /")
            }
            prefixLength = length
        } else {
            prefixLength = maximum
        }
    }

    public var description: String {
        prefixLength == (family == .ipv4 ? 32 : 128) ? address : "\(address)/\(prefixLength)"
    }

    /// What `tc ... u32 match ip dst` takes: always with the prefix length.
    var tcForm: String { "\(address)/\(prefixLength)" }

    public static let ipv4Loopback = try! IPNetwork("127.0.0.0/8")
    public static let ipv6Loopback = try! IPNetwork("::1/128")
}

/// The far end of some traffic: a network, optionally one port on it (TCP and UDP).
/// Written `CIDR`, `ADDRESS:PORT` or `[IPV6]:PORT`.
public struct RemoteEndpoint: Sendable, Hashable, Codable, CustomStringConvertible {
    public var network: IPNetwork
    public var port: UInt16?

    public init(network: IPNetwork, port: UInt16? = nil) {
        self.network = network
        self.port = port
    }

    public init(_ text: String) throws(SelectionError) {
        let expected = "CIDR, ADDRESS:PORT or [IPV6]:PORT (10.0.0.0/8, 192.0.2.7:22, [2001:db8::7]:22)"
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw SelectionError(text: text, expected: expected) }
            network = try IPNetwork(String(text[text.index(after: text.startIndex)..<close]))
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { port = nil; return }
            guard rest.hasPrefix(":"), let value = UInt16(rest.dropFirst()), value > 0 else {
                throw SelectionError(text: text, expected: expected)
            }
            port = value
            return
        }
        // One colon: IPv4 with a port. More: a bare IPv6 address or network.
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            network = try IPNetwork(String(text[..<colon]))
            guard let value = UInt16(text[text.index(after: colon)...]), value > 0 else {
                throw SelectionError(text: text, expected: expected)
            }
            port = value
            return
        }
        // A bad bare value is told every form an endpoint may take, not only the network's.
        do { network = try IPNetwork(text) } catch { throw SelectionError(text: text, expected: expected) }
        port = nil
    }

    public var description: String {
        guard let port else { return network.description }
        return network.family == .ipv6 ? "[\(network.description)]:\(port)" : "\(network.description):\(port)"
    }
}

/// A target or exclusion that could not be read.
public struct SelectionError: Error, CustomStringConvertible, Equatable {
    public var text: String
    public var expected: String
    public var description: String { "\"\(text)\": expected \(expected)" }
}

/// Which IP traffic a profile conditions. Only IPv4 and IPv6 are ever conditioned: ARP, NDP (ICMPv6 133-137)
/// and other frames pass untouched. Within IP, `hosts` (remote networks), `ports` (remote ports) and
/// `localPorts` narrow what is conditioned: several values of one kind are alternatives, kinds combine
/// (`--host A --port 443` is traffic with A on port 443). `exclusions` are never conditioned.
/// Everything that is not selected passes untouched.
public struct TrafficSelection: Sendable, Hashable, Codable {
    /// An exclusion with why it is there, for `status`.
    public struct Exclusion: Sendable, Hashable, Codable, CustomStringConvertible {
        public var endpoint: RemoteEndpoint
        public var reason: String?
        public init(_ endpoint: RemoteEndpoint, reason: String? = nil) {
            self.endpoint = endpoint
            self.reason = reason
        }
        public var description: String { endpoint.description + (reason.map { " (\($0))" } ?? "") }
    }

    public var hosts: [IPNetwork]
    public var ports: [UInt16]
    public var localPorts: [UInt16]
    public var exclusions: [Exclusion]

    public init(hosts: [IPNetwork] = [], ports: [UInt16] = [], localPorts: [UInt16] = [], exclusions: [Exclusion] = []) {
        self.hosts = hosts
        self.ports = ports
        self.localPorts = localPorts
        self.exclusions = exclusions
    }

    /// All IP traffic, nothing excluded.
    public static let allIP = TrafficSelection()

    /// Whether only some IP traffic is conditioned.
    public var isTargeted: Bool { !hosts.isEmpty || !ports.isEmpty || !localPorts.isEmpty }

    /// The same targets with more exclusions (duplicates dropped).
    public func excluding(_ more: [Exclusion]) -> TrafficSelection {
        var copy = self
        for exclusion in more where !copy.exclusions.contains(where: { $0.endpoint == exclusion.endpoint }) {
            copy.exclusions.append(exclusion)
        }
        return copy
    }

    /// The targets in words: "all IP traffic" or "traffic with 10.0.0.0/8 on port 443".
    public var summary: String {
        guard isTargeted else { return "all IP traffic" }
        var parts: [String] = []
        if !hosts.isEmpty { parts.append("with " + hosts.map(\.description).joined(separator: " or ")) }
        if !ports.isEmpty { parts.append("on remote port " + ports.map(String.init).joined(separator: " or ")) }
        if !localPorts.isEmpty { parts.append("from local port " + localPorts.map(String.init).joined(separator: " or ")) }
        return "IP traffic " + parts.joined(separator: ", ")
    }

    /// The SSH session this process was started from (`SSH_CONNECTION="CLIENT CPORT SERVER SPORT"`), as the
    /// far end to exclude; nil when not started over SSH or the variable is malformed.
    public static func sshSession(from environmentValue: String?) -> Exclusion? {
        guard let value = environmentValue else { return nil }
        let words = value.split(separator: " ").map(String.init)
        guard words.count == 4, let network = try? IPNetwork(words[0]), let port = UInt16(words[1]), port > 0 else { return nil }
        return Exclusion(RemoteEndpoint(network: network, port: port), reason: "the SSH session condition was started from")
    }

    /// NLC's `ExcludeLoopback`: traffic to and from 127.0.0.0/8 and ::1 is not conditioned.
    public static let loopbackExclusions = [
        Exclusion(RemoteEndpoint(network: .ipv4Loopback), reason: "loopback, excludeLoopback"),
        Exclusion(RemoteEndpoint(network: .ipv6Loopback), reason: "loopback, excludeLoopback"),
    ]
}
