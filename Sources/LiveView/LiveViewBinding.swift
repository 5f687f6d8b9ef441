/// What the user asked for with `--ui [ADDR:PORT]`.
public struct LiveViewBinding: Sendable, Equatable {
    public var address: String
    public var port: Int
    /// The port was not given: when it is taken, the next ones are tried.
    public var portIsDefault: Bool

    public static let defaultAddress = "127.0.0.1"
    public static let defaultPort = 8383
    /// Ports tried after a default one that is taken.
    public static let fallbackPorts = 20

    public init(address: String = Self.defaultAddress, port: Int = Self.defaultPort, portIsDefault: Bool = true) {
        self.address = address
        self.port = port
        self.portIsDefault = portIsDefault
    }

    /// What a bare `--ui` becomes before parsing (ArgumentParser takes no empty value): the default address, with
    /// the fallback ports.
    public static let defaultSpelling = "default"

    /// `ADDR:PORT`, `[V6]:PORT`, `ADDR`, `:PORT`, `PORT`, or `default` (or nothing) for the default address; nil when
    /// it is none of these.
    public init?(parsing text: String) {
        guard case .success(let binding) = Self.parse(text) else { return nil }
        self = binding
    }

    /// Why `text` is not a binding, in words for `--ui TEXT: ...`.
    public struct ParseProblem: Error, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ text: String) -> Result<LiveViewBinding, ParseProblem> {
        if text.isEmpty || text == defaultSpelling { return .success(LiveViewBinding()) }
        if text.allSatisfy(\.isASCIIDigit) {
            return port(text[...]).map { LiveViewBinding(port: $0, portIsDefault: false) }
        }
        guard let parts = AuthorityParts(text) else {
            return .failure(ParseProblem(description: "\(text) is not an address and port"))
        }
        guard let portText = parts.port else {
            return address(String(parts.name)).map { LiveViewBinding(address: $0) }
        }
        guard !portText.isEmpty else { return .failure(ParseProblem(description: "no port after the colon")) }
        switch (parts.name.isEmpty ? .success(defaultAddress) : address(String(parts.name)), port(portText)) {
        case (.failure(let problem), _), (_, .failure(let problem)): return .failure(problem)
        case (.success(let address), .success(let port)):
            return .success(LiveViewBinding(address: address, port: port, portIsDefault: false))
        }
    }

    private static func port(_ text: Substring) -> Result<Int, ParseProblem> {
        guard let port = AuthorityParts.port(text) else {
            return .failure(ParseProblem(description: "\(text) is not a port (0 to 65535; 0 lets the kernel choose)"))
        }
        return .success(port)
    }

    private static func address(_ text: String) -> Result<String, ParseProblem> {
        guard IPLiteral(text) != nil else {
            return .failure(ParseProblem(description: "\(text) is not an address written as digits (names are not "
                                         + "looked up: 127.0.0.1 or [::1] is this machine, 0.0.0.0 or [::] every interface)"))
        }
        return .success(text)
    }
}
