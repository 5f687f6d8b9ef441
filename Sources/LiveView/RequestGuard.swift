import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// The checks every request passes before the router sees it, WebSocket upgrades included: the `Host` is this
/// server (a page on another name that resolves here, DNS rebinding, is refused), the `Origin`, when sent, is this
/// server (another site's page cannot post to the API), and the request carries the token.
public struct RequestGuard: Sendable {
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        case badHost(String?)
        case foreignOrigin(String)
        case noToken
        case wrongToken

        public var description: String {
            switch self {
            case .badHost(let host?): "Host \"\(host)\" is not this live view's address (DNS rebinding?)"
            case .badHost(nil): "the request needs exactly one Host header naming this live view's address"
            case .foreignOrigin(let origin): "Origin \"\(origin)\" is not this live view (a cross-site request)"
            case .noToken: "no token: open the URL that capture printed (it ends in ?token=...)"
            case .wrongToken: "wrong token: open the URL that capture printed for this run"
            }
        }
    }

    public let token: LiveViewToken
    /// The address the server listens on, as given (`127.0.0.1`, `::1`, `0.0.0.0`).
    public let address: String
    /// Known once the server is bound (a default port may move to the next free one); 0 before, which no Host has.
    private let boundPort: NIOLockedValueBox<Int>

    public init(token: LiveViewToken, address: String, port: Int = 0) {
        self.token = token
        self.address = address
        boundPort = NIOLockedValueBox(port)
    }

    public var port: Int { boundPort.withLockedValue { $0 } }

    func listening(on port: Int) { boundPort.withLockedValue { $0 = port } }

    /// The cookie the page's first request sets, so that links and downloads carry the token without it in the URL.
    public static let cookieName = "tapkit"
    public static let tokenHeader = "X-TapKit-Token"

    /// nil when the request may proceed.
    public func refusal(_ request: LiveRequest) -> Refusal? {
        guard case .some(let host?) = request.singleHeader("Host") else {
            let values = request.headerValues("Host")
            return .badHost(values.count == 1 ? values[0] : nil)
        }
        guard allows(host: host) else { return .badHost(host) }
        switch request.singleHeader("Origin") {
        case .some(nil): break
        case .some(let origin?):
            if origin.lowercased() != "http://" + host.lowercased() { return .foreignOrigin(origin) }
        case .none: return .foreignOrigin(request.headerValues("Origin").joined(separator: ", "))
        }
        let presented = request.headerValues(Self.tokenHeader) + [request.cookie(Self.cookieName),
                                                                   request.queryValue("token")].compactMap { $0 }
        if presented.isEmpty { return .noToken }
        return presented.contains(where: token.matches) ? nil : .wrongToken
    }

    /// `Host: NAME:PORT` with this server's port, where NAME is `localhost`, a loopback address, the address listened
    /// on, or (when listening on every address, which the user asked for) any address literal; never another name,
    /// since a name is what a rebinding attack controls.
    func allows(host: String) -> Bool {
        guard let parts = AuthorityParts(host), let port = parts.port.flatMap(AuthorityParts.port), port != 0,
              port == self.port else { return false }
        let lowered = parts.name.lowercased()
        if lowered == "localhost" { return true }
        guard let literal = IPLiteral(lowered) else { return false }
        if literal.isLoopback { return true }
        if let listened = IPLiteral(address.lowercased()) {
            return listened.isUnspecified || listened == literal
        }
        return false
    }
}

/// An authority as written: `NAME:PORT`, `[V6]:PORT`, `NAME`, `[V6]`, or a bare IPv6 literal (more than one colon
/// and no brackets, so no port). Used for `Host:` and for `--ui ADDR:PORT`, so both read an address the same way.
struct AuthorityParts {
    /// Without brackets.
    let name: Substring
    /// What follows the colon, as written (not checked).
    let port: Substring?

    /// nil when a bracket is not closed, or something other than `:PORT` follows it.
    init?(_ text: String) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.first == ":" else { return nil }
            port = rest.isEmpty ? nil : rest.dropFirst()
        } else if let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].firstIndex(of: ":") == nil {
            name = text[..<colon]
            port = text[text.index(after: colon)...]
        } else {
            name = text[...]
            port = nil
        }
    }

    /// A port written as 1 to 5 digits, 0 to 65535.
    static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy(\.isASCIIDigit), let port = Int(text), port <= 65535
        else { return nil }
        return port
    }
}

/// An IPv4 or IPv6 address written as digits (never a name), compared by value.
struct IPLiteral: Equatable {
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    var isLoopback: Bool {
        bytes.count == 4 ? bytes[0] == 127 : bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
