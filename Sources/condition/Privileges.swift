import Foundation
import LinkConditioner

/// Whether this process may change qdiscs, links and namespaces: root, or CAP_NET_ADMIN in its effective set.
/// Asked before anything is tried, so a plain user hears "needs root" instead of the first failing call.
enum Privileges {
    static var hasNetworkAdmin: Bool {
        if geteuid() == 0 { return true }
        // CapEff in /proc/self/status is a hex mask; CAP_NET_ADMIN is bit 12.
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << 12) != 0
    }

    /// Throws "needs root" naming the command to run again with sudo, unless this process has CAP_NET_ADMIN.
    static func require(_ what: String) throws {
        guard !hasNetworkAdmin else { return }
        let again = (["sudo"] + CommandLine.arguments.prefix(1).map { URL(fileURLWithPath: $0).lastPathComponent }
            + CommandLine.arguments.dropFirst()).joined(separator: " ")
        throw ReportedError(description: "\(what) needs root (or CAP_NET_ADMIN): run it again as `\(again)`")
    }
}
