/// A Linux interface name checked before it reaches `tc` or `ip`: 1 to 15 characters (IFNAMSIZ),
/// letters, digits, `.`, `_`, `-`, not starting with `-` (so it can never be read as an option),
/// and not `.` or `..`.
public struct InterfaceName: Sendable, Hashable, CustomStringConvertible, Codable {
    public let rawValue: String

    public init(_ name: String) throws(InvalidInterfaceNameError) {
        guard !name.isEmpty, name.utf8.count <= 15, name != ".", name != "..", !name.hasPrefix("-"),
              name.unicodeScalars.allSatisfy({ CharacterSetASCII.isAlnum($0) || $0 == "." || $0 == "_" || $0 == "-" })
        else { throw InvalidInterfaceNameError(name: name) }
        rawValue = name
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        try self.init(raw)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The ifb device that carries this interface's downlink: `tk-NAME`, or for long names
    /// `tk-` + four characters + a hash, so it stays within 15 characters and is the same every time.
    public var ifbName: InterfaceName {
        let name: String
        if rawValue.utf8.count <= 12 {
            name = "tk-" + rawValue
        } else {
            var hash: UInt32 = 2_166_136_261
            for byte in rawValue.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            let hex = String(hash, radix: 16)
            name = "tk-" + rawValue.prefix(4) + String(repeating: "0", count: 8 - hex.count) + hex
        }
        // Built only from characters already validated, so it is valid too.
        return try! InterfaceName(name)
    }
}

public struct InvalidInterfaceNameError: Error, CustomStringConvertible {
    public var name: String
    public var description: String {
        "invalid interface name \"\(name)\": expected 1 to 15 letters, digits, '.', '_' or '-', not starting with '-' (see `ip link`)"
    }
}
