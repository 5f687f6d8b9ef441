/// One DNS fault for a sandbox's command: what its resolver does with a query for some names (or every name).
/// Written `ACTION[:NAME,...]` on the command line and in profiles (`"faults": {"dns": ["nxdomain:ads.example"]}`).
/// A NAME stands for itself and every name under it (as dnsmasq's `--address=/NAME/`): `example.com` matches
/// `example.com` and `api.example.com`, not `badexample.com`.
public struct DNSFault: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Action: Sendable, Hashable, Codable {
        /// "No such name" (RCODE 3): getaddrinfo's EAI_NONAME, Node's ENOTFOUND, `getent` exit 2.
        case nxdomain
        /// "Server failure" (RCODE 2): EAI_AGAIN, "Temporary failure in name resolution".
        case servfail
        /// "Refused" (RCODE 5).
        case refused
        /// No answer at all: the client waits for its own timeout (glibc: 5 s per try, 2 tries by default).
        case timeout
        /// The query is answered by the host's resolver, this much later.
        case delay(milliseconds: UInt64)
    }

    public var action: Action
    /// Lower-case names without a final dot; empty: every name.
    public var names: [String]

    public static let maximumDelayMilliseconds: UInt64 = 60_000

    public init(action: Action, names: [String] = []) {
        self.action = action
        self.names = names
    }

    /// Whether a query for `name` (lower case, as `DNSMessage.question` gives it) gets this fault.
    public func matches(_ name: String) -> Bool {
        names.isEmpty || names.contains { name == $0 || name.hasSuffix("." + $0) }
    }

    /// `nxdomain:a.example,b.example`, `delay=300ms`: the form `parse` reads.
    public var description: String {
        let action = switch action {
        case .nxdomain: "nxdomain"
        case .servfail: "servfail"
        case .refused: "refused"
        case .timeout: "timeout"
        case .delay(let milliseconds): "delay=\(milliseconds)ms"
        }
        return names.isEmpty ? action : action + ":" + names.joined(separator: ",")
    }

    /// Reads `ACTION[:NAME,...]`; `seconds` reads delay's duration (the conditioner's duration syntax: 300ms, 2s).
    public static func parse(_ text: String, seconds: (String) -> Double?) throws(DNSFaultError) -> DNSFault {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let actionText = parts[0].lowercased()
        let action: Action
        switch actionText {
        case "nxdomain": action = .nxdomain
        case "servfail": action = .servfail
        case "refused": action = .refused
        case "timeout": action = .timeout
        default:
            guard actionText.hasPrefix("delay=") else { throw .badAction(text) }
            let duration = String(actionText.dropFirst("delay=".count))
            guard let value = seconds(duration), value >= 0.001, value * 1000 <= Double(maximumDelayMilliseconds) else {
                throw .badDelay(text)
            }
            action = .delay(milliseconds: UInt64((value * 1000).rounded()))
        }
        var names: [String] = []
        if parts.count == 2 {
            for raw in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
                var name = raw.lowercased()
                if name.hasSuffix(".") { name.removeLast() }
                guard isPlainName(name) else { throw .badName(text, name: String(raw)) }
                names.append(name)
            }
        }
        return DNSFault(action: action, names: names)
    }

    /// Letters, digits, `-` and `_` in dot-separated labels of 1 to 63 bytes, at most 253 in all.
    public static func isPlainName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...DNSMessage.maximumLabelLength).contains(label.utf8.count)
                && label.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 95 }
        }
    }
}

extension Array where Element == DNSFault {
    /// The first fault that matches `name`: earlier ones win, so `nxdomain:a.example` before `timeout` answers
    /// a.example and leaves every other name unanswered.
    public func fault(for name: String) -> DNSFault? { first { $0.matches(name) } }
}

public enum DNSFaultError: Error, Equatable, Sendable, CustomStringConvertible {
    case badAction(String)
    case badDelay(String)
    case badName(String, name: String)

    static let form = "expected nxdomain, servfail, refused, timeout or delay=DURATION, optionally followed by "
        + ":NAME,NAME... (for example nxdomain:api.example.com or delay=2s)"

    public var description: String {
        switch self {
        case .badAction(let text): "invalid DNS fault \"\(text)\": \(Self.form)"
        case .badDelay(let text): "invalid DNS fault \"\(text)\": expected a delay from 1ms to 60s, such as delay=300ms or delay=2s"
        case .badName(let text, let name):
            "invalid DNS fault \"\(text)\": \"\(name)\" is not a name (letters, digits, - and _ in dot-separated labels, such as api.example.com)"
        }
    }
}
