import HTTPModel
import PacketDecoding
import TLS

/// Said once on standard error when a capture ends with TLS connections whose keys never arrived in the key log:
/// their exchanges are missing from the view, and the usual reason is a program that does not honour
/// SSLKEYLOGFILE, so the notice says what to do about it.
public struct KeylessConnectionsNotice: Sendable, Hashable, CustomStringConvertible {
    /// The servers of those connections, each once, in the order first seen.
    public private(set) var servers: [Endpoint] = []
    public private(set) var connections = 0

    public init() {}

    /// Counts a connection's TLS line if it says no key was logged.
    public mutating func note(_ session: TLSSessionFacts) {
        guard session.decryption == .noKeyLogged else { return }
        connections += 1
        if !servers.contains(session.server) { servers.append(session.server) }
    }

    public var isEmpty: Bool { connections == 0 }

    public var description: String {
        let shown = servers.prefix(3).map { "\($0)" }.joined(separator: ", ") + (servers.count > 3 ? ", ..." : "")
        return "\(connections) TLS connection\(connections == 1 ? "" : "s") (to \(shown)) had no key in the key log, "
            + "so \(connections == 1 ? "its" : "their") exchanges are not shown. "
            + "The program probably does not write SSLKEYLOGFILE (Go and Java programs do not by default): make it log its "
            + "keys (Go: tls.Config.KeyLogWriter; Java: a key-logging agent such as jSSLKeyLog), then run it again."
    }
}
