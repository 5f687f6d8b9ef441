import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

/// Which TCP connection `--follow` shows: an index from `--stats` (Wireshark's `tcp.stream`), or its two ends.
public enum FollowTarget: Sendable, Hashable {
    case index(Int)
    /// The first connection between these two ends (in either direction).
    case ends(Endpoint, Endpoint)

    public struct ParseError: Error, CustomStringConvertible {
        public var text: String
        public var description: String {
            "--follow takes a conversation index from --stats (e.g. 3) or its two ends as ip:port-ip:port "
                + "(IPv6 in brackets: [2001:db8::1]:443-[2001:db8::2]:51000); got '\(text)'"
        }
    }

    /// `3`, `10.0.0.1:80-10.0.0.2:5000`, `[fd00::1]:80-[fd00::2]:5000`; a comma works as the separator too (tshark's form).
    public init(parsing text: String) throws(ParseError) {
        if let index = Int(text), index >= 0 {
            self = .index(index)
            return
        }
        var separator: String.Index?
        // The separator is the '-' or ',' right after the first end's port digits.
        var sawColonPort = false, inBrackets = false
        for index in text.indices {
            let c = text[index]
            if c == "[" { inBrackets = true } else if c == "]" { inBrackets = false }
            if inBrackets { continue }
            if c == ":" { sawColonPort = true }
            if (c == "-" || c == ",") && sawColonPort { separator = index; break }
        }
        guard let separator,
              let first = Self.endpoint(String(text[..<separator])),
              let second = Self.endpoint(String(text[text.index(after: separator)...])),
              first.address.isIPv6 == second.address.isIPv6 else { throw ParseError(text: text) }
        self = .ends(first, second)
    }

    /// `ip:port` or `[ipv6]:port`.
    static func endpoint(_ text: String) -> Endpoint? {
        let addressText: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            addressText = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            addressText = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText), let address = parseAddress(String(addressText)) else { return nil }
        return Endpoint(address: address, port: port)
    }

    static func parseAddress(_ text: String) -> IPAddress? {
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &bytes) == 1 {
            return .v4(bytes[0..<4].reduce(0) { $0 << 8 | UInt32($1) })
        }
        if inet_pton(AF_INET6, text, &bytes) == 1 {
            let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .v6(high: high, low: low)
        }
        return nil
    }
}
