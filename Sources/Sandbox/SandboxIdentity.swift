import Foundation

/// The names and addresses of one sandbox, all derived from its id and address slot so that any process
/// (the owner, its watchdog, a later reaper) can tear it down from the registry record alone.
public struct SandboxIdentity: Codable, Sendable, Equatable, Hashable {
    /// Six lowercase hex digits, unique among running sandboxes.
    public var id: String
    /// Which /30 (and /64) of the sandbox ranges this sandbox owns.
    public var slot: Int

    public static let slotCount = 16_384

    public init(id: String, slot: Int) throws {
        guard id.count == 6, id.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw SandboxError.invalidIdentifier(id)
        }
        guard (0..<Self.slotCount).contains(slot) else { throw SandboxError.invalidIdentifier("slot \(slot)") }
        self.id = id
        self.slot = slot
    }

    public static func randomID() -> String {
        String(format: "%06x", UInt32.random(in: 0..<0x100_0000))
    }

    /// `tapkit-<id>`, the name `ip netns` knows it by.
    public var namespace: String { "tapkit-\(id)" }
    /// The host end of the veth pair: `tk-<id>` (9 characters, inside IFNAMSIZ). Capture here.
    public var hostInterface: String { "tk-\(id)" }
    /// The namespace end, named like an ordinary NIC since it is alone in its namespace.
    public var namespaceInterface: String { "eth0" }
    /// This sandbox's own nftables table (family inet), deleted whole on teardown.
    public var nftTable: String { "tapkit_\(id)" }
    /// The tracefs instance the Go key source reads this sandbox's command through, and the group of its uprobe
    /// events (group names take no '-'), both removed on teardown.
    public var tracingInstance: String { "tapkit-\(id)" }
    public var tracingGroup: String { "tapkit_\(id)" }
    /// `ip netns exec` bind-mounts the files here over /etc inside the namespace.
    public var etcDirectory: String { "/etc/netns/\(namespace)" }

    // 10.213.0.0/16 is cut into /30s: .1 on the host end, .2 on the namespace end.
    private var v4Base: (UInt8, UInt8, UInt8, UInt8) {
        let offset = slot * 4
        return (10, 213, UInt8((offset >> 8) & 0xff), UInt8(offset & 0xff))
    }
    public var hostIPv4: String { let b = v4Base; return "\(b.0).\(b.1).\(b.2).\(b.3 + 1)" }
    public var namespaceIPv4: String { let b = v4Base; return "\(b.0).\(b.1).\(b.2).\(b.3 + 2)" }
    public var ipv4Subnet: String { let b = v4Base; return "\(b.0).\(b.1).\(b.2).\(b.3)/30" }
    public static let ipv4PrefixLength = 30

    // A ULA /64 per slot: fd54:4b00:0:<slot>::/64 ("TK" in the global id).
    public var ipv6Subnet: String { "fd54:4b00:0:\(String(slot, radix: 16))::/64" }
    public var hostIPv6: String { "fd54:4b00:0:\(String(slot, radix: 16))::1" }
    public var namespaceIPv6: String { "fd54:4b00:0:\(String(slot, radix: 16))::2" }
    /// Fixed, locally administered MAC addresses for the two veth ends, so both sides can carry permanent
    /// neighbour entries: a profile dropping all of one direction (Black Hole) then makes the command's
    /// connections time out, as under NLC, instead of failing early on unanswered ARP/ND.
    public var hostMAC: String { "02:54:4b:" + macSuffix }
    public var namespaceMAC: String { "06:54:4b:" + macSuffix }
    private var macSuffix: String {
        stride(from: 0, to: 6, by: 2).map { offset -> String in
            let start = id.index(id.startIndex, offsetBy: offset)
            return String(id[start..<id.index(start, offsetBy: 2)])
        }.joined(separator: ":")
    }
    public static let ipv6PrefixLength = 64

    /// Whether `cidr` (an IPv4 route or address prefix on the host) overlaps this slot's /30.
    public func ipv4Overlaps(_ cidr: String) -> Bool {
        guard let mine = IPv4Prefix(ipv4Subnet), let other = IPv4Prefix(cidr) else { return false }
        return mine.overlaps(other)
    }
}

/// An IPv4 prefix, only as much as slot allocation needs.
struct IPv4Prefix: Equatable {
    var address: UInt32
    var length: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        let octets = parts[0].split(separator: ".")
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard let byte = UInt8(octet) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        let length = parts.count == 2 ? Int(parts[1]) : 32
        guard let length, (0...32).contains(length) else { return nil }
        self.address = value
        self.length = length
    }

    func overlaps(_ other: IPv4Prefix) -> Bool {
        let shortest = min(length, other.length)
        let mask: UInt32 = shortest == 0 ? 0 : ~UInt32(0) << UInt32(32 - shortest)
        return address & mask == other.address & mask
    }

    var isLoopback: Bool { address >> 24 == 127 }
}

public enum SandboxError: Error, CustomStringConvertible, Equatable {
    case invalidIdentifier(String)
    case notRoot
    case noFreeSlot
    case unknownSandbox(String)
    case registry(String)
    case missingProgram(String, hint: String)

    public var description: String {
        switch self {
        case .invalidIdentifier(let id):
            return "'\(id)' is not a sandbox id (six hex digits, as `condition sandboxes` lists them)"
        case .notRoot:
            return "sandboxes need root (network namespaces, veth, nftables): run with sudo"
        case .noFreeSlot:
            return "no free sandbox address slot in 10.213.0.0/16; end some sandboxes (`condition sandboxes`)"
        case .unknownSandbox(let id):
            return "no running sandbox '\(id)'; `condition sandboxes` lists them"
        case .registry(let message):
            return "sandbox registry: \(message)"
        case .missingProgram(let name, let hint):
            return "'\(name)' not found: \(hint)"
        }
    }
}
