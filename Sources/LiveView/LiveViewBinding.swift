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
        if text.isEmpty || text == Self.defaultSpelling { self.init(); return }
        if text.allSatisfy(\.isASCIIDigit) {
            guard let port = Int(text), port <= 65535 else { return nil }
            self.init(port: port, portIsDefault: false)
            return
        }
        if let (name, port) = RequestGuard.split(authority: text), port <= 65535,
           name.isEmpty || IPLiteral(name) != nil, !name.contains(":") || text.hasPrefix("[") {
            self.init(address: name.isEmpty ? Self.defaultAddress : name, port: port, portIsDefault: false)
            return
        }
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        guard IPLiteral(bare) != nil else { return nil }
        self.init(address: bare)
    }
}
