/// One call of `crypto/tls.(*Config).writeKeyLog` as a uprobe event in `trace_pipe`, and the key log line it makes.
///
/// Go 1.17+ on amd64 passes `func (c *Config) writeKeyLog(label string, clientRandom, secret []byte) error` in
/// registers: AX the receiver, BX/CX the label's pointer and length, DI/SI/R8 the client random's pointer, length
/// and capacity, R9/R10/R11 the secret's. The probe fetches each as a byte array of the longest it can be (31 for
/// `CLIENT_HANDSHAKE_TRAFFIC_SECRET`, 32 for a client random, 48 for a TLS 1.2 master secret or a SHA-384 traffic
/// secret) with its length beside it, and the line keeps only the first length bytes.
public enum GoKeyLogEvent {
    public static let maxLabel = 31
    public static let maxSecret = 48

    /// The fetch arguments after `PATH:OFFSET` in `uprobe_events`.
    public static let fetchArguments = [
        "label=+0(%bx):x8[\(maxLabel)]", "label_len=%cx:u64",
        "random=+0(%di):x8[32]", "random_len=%si:u64",
        "secret=+0(%r9):x8[\(maxSecret)]", "secret_len=%r10:u64",
    ].joined(separator: " ")

    /// The labels a Go program logs (crypto/tls's keyLogLabel* constants); anything else is not a key log line.
    public static let labels: Set<String> = [
        "CLIENT_RANDOM", "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0",
    ]

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case missingField(String)
        case badArray(String)
        case badLength(field: String, value: String)
        case unknownLabel(String)

        public var description: String {
            switch self {
            case .missingField(let name): "no \(name)= field"
            case .badArray(let name): "\(name)= is not a byte array (the probe could not read the program's memory?)"
            case .badLength(let field, let value): "\(field)=\(value) is out of range"
            case .unknownLabel(let label): "label \(label) is not one crypto/tls logs"
            }
        }
    }

    /// The NSS key log line (`LABEL <client random hex> <secret hex>`) for a trace line of the probe's event
    /// (everything after the event name: `(0x58d640) label={0x43,...} label_len=31 ...`).
    public static func keyLogLine(fromFields text: Substring) throws(ParseError) -> String {
        var fields: [Substring: Substring] = [:]
        for word in text.split(separator: " ") {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[word[..<equals]] = word[word.index(after: equals)...]
        }
        func length(_ name: String, max: Int, exactly: Int? = nil) throws(ParseError) -> Int {
            guard let value = fields[Substring(name)] else { throw .missingField(name) }
            guard let number = Int(value), number > 0, number <= max, exactly.map({ $0 == number }) ?? true else {
                throw .badLength(field: name, value: String(value))
            }
            return number
        }
        func bytes(_ name: String, count: Int) throws(ParseError) -> ArraySlice<UInt8> {
            guard let value = fields[Substring(name)] else { throw .missingField(name) }
            guard value.first == "{", value.last == "}" else { throw .badArray(name) }
            var result: [UInt8] = []
            for item in value.dropFirst().dropLast().split(separator: ",") {
                guard item.hasPrefix("0x"), let byte = UInt8(item.dropFirst(2), radix: 16) else { throw .badArray(name) }
                result.append(byte)
            }
            guard result.count >= count else { throw .badArray(name) }
            return result[..<count]
        }
        let label = String(decoding: try bytes("label", count: try length("label_len", max: maxLabel)), as: UTF8.self)
        guard labels.contains(label) else { throw .unknownLabel(label) }
        let random = try bytes("random", count: try length("random_len", max: 32, exactly: 32))
        let secret = try bytes("secret", count: try length("secret_len", max: maxSecret))
        return "\(label) \(hex(random)) \(hex(secret))"
    }

    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
