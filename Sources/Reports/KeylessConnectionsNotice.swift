import FlowReassembly
import HTTPModel
import PacketDecoding
import TLS

/// Said once on standard error when a capture ends with TLS connections whose keys never arrived in the key log:
/// their exchanges are missing from the view, and the usual reason is a program that does not honour
/// SSLKEYLOGFILE, so the notice says what to do about it. A connection that stopped waiting at the bound
/// (`--keylog-wait`) and whose key was logged after all is not the program's fault: it is counted apart, and the
/// words say to raise the bound instead.
public struct KeylessConnectionsNotice: Sendable, Hashable, CustomStringConvertible {
    /// The servers of the connections whose key never came, each once, in the order first seen.
    public var servers: [Endpoint] { Self.servers(of: keyless) }
    public var connections: Int { keyless.count }
    /// Connections whose key came too late for the bound, and the bound (seconds).
    public var lateConnections: Int { late.count }
    public var lateServers: [Endpoint] { Self.servers(of: late) }
    private var keyless: [(id: ConnectionID, server: Endpoint)] = []
    private var late: [(id: ConnectionID, server: Endpoint)] = []
    private var bound: Double = 0

    public init() {}

    /// Counts a connection's TLS line if it says no key was logged (within the bound, or at all).
    public mutating func note(_ session: TLSSessionFacts) {
        switch session.decryption {
        case .noKeyLogged, .noKeyWithin: keyless.append((session.connection, session.server))
        case .decrypted, .unsupported: break
        }
    }

    /// A connection's key was logged after its records stopped waiting (`TLSConnectionWarning.keyLoggedTooLate`).
    public mutating func note(_ warning: any ConnectionWarning, connection: ConnectionID?) {
        guard case .keyLoggedTooLate(_, let bound)? = warning as? TLSConnectionWarning, let connection,
              let index = keyless.firstIndex(where: { $0.id == connection }) else { return }
        late.append(keyless.remove(at: index))
        self.bound = bound
    }

    public var isEmpty: Bool { keyless.isEmpty && late.isEmpty }

    /// One sentence per kind, each to be said on a line of its own.
    public var lines: [String] {
        var lines: [String] = []
        if !keyless.isEmpty {
            let count = keyless.count
            lines.append("\(count) TLS connection\(count == 1 ? "" : "s") (to \(Self.list(servers))) had no key in the key log, "
                + "so \(count == 1 ? "its" : "their") exchanges are not shown. "
                + "The program probably does not write SSLKEYLOGFILE (Go and Java programs do not by default): make it log its "
                + "keys (Go: tls.Config.KeyLogWriter; Java: a key-logging agent such as jSSLKeyLog), then run it again.")
        }
        if !late.isEmpty {
            let count = late.count
            lines.append("\(count) TLS connection\(count == 1 ? "" : "s") (to \(Self.list(lateServers))) had \(count == 1 ? "its" : "their") "
                + "key logged too late for the bound of \(bound == bound.rounded() ? "\(Int(bound))" : "\(bound)") s, "
                + "so \(count == 1 ? "its" : "their") exchanges are not shown: raise the bound with --keylog-wait SECONDS.")
        }
        return lines
    }

    public var description: String { lines.joined(separator: "\n") }

    private static func servers(of list: [(id: ConnectionID, server: Endpoint)]) -> [Endpoint] {
        var servers: [Endpoint] = []
        for (_, server) in list where !servers.contains(server) { servers.append(server) }
        return servers
    }

    private static func list(_ servers: [Endpoint]) -> String {
        servers.prefix(3).map { "\($0)" }.joined(separator: ", ") + (servers.count > 3 ? ", ..." : "")
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.keyless.map(\.id) == rhs.keyless.map(\.id) && lhs.late.map(\.id) == rhs.late.map(\.id) && lhs.bound == rhs.bound
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyless.map(\.id))
        hasher.combine(late.map(\.id))
    }
}
