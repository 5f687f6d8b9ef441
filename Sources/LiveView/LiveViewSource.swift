/// What the live view shows: `/api/info`'s `source` and `name`.
public enum LiveViewSource: Sendable, Equatable {
    case live(interface: String)
    case file(path: String)
    case command([String])

    var kind: StaticString {
        switch self {
        case .live: "live"
        case .file: "file"
        case .command: "command"
        }
    }

    var name: String {
        switch self {
        case .live(let interface): interface
        case .file(let path): path
        case .command(let words): words.joined(separator: " ")
        }
    }
}
