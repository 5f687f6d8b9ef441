/// Why a binary gives no place to probe for Go's TLS secrets, with the facts (where, what was found). Worded once
/// in `description`, which says what the user can do.
public enum GoBinaryError: Error, Equatable, Sendable, CustomStringConvertible {
    case notELF(reason: String)
    case truncated(what: String, offset: Int, needed: Int, actual: Int)
    case corrupt(what: String, offset: Int, reason: String)
    /// No Go build information and no Go function table: not a Go program.
    case notGo
    /// A Go binary (it has build information) without a function table and without `.symtab`.
    case noPclntab
    case corruptPclntab(offset: Int, reason: String)
    case unsupportedGoVersion(version: String, reason: String)
    case unsupportedArchitecture(machine: UInt16)
    /// The function is in neither `.symtab` nor the function table: the program does not link crypto/tls (or the
    /// linker dropped the method because nothing calls it).
    case functionNotFound(name: String)
    /// The function's address is in no `PT_LOAD` segment's file bytes.
    case addressNotMapped(address: UInt64)

    public var description: String {
        switch self {
        case .notELF(let reason): "not an ELF binary: \(reason)"
        case .truncated(let what, let offset, let needed, let actual):
            "truncated: \(what) at offset \(offset) needs \(needed) bytes, the file has \(actual) there"
        case .corrupt(let what, let offset, let reason): "corrupt \(what) at offset \(offset): \(reason)"
        case .notGo: "not a Go binary (no .go.buildinfo, no .gopclntab)"
        case .noPclntab: "Go binary without pclntab (no .gopclntab, no .symtab): its functions cannot be found"
        case .corruptPclntab(let offset, let reason): "corrupt .gopclntab at offset \(offset): \(reason)"
        case .unsupportedGoVersion(let version, let reason):
            "Go binary older than 1.17 (\(version)): \(reason); rebuild it with Go 1.17 or newer, or set tls.Config.KeyLogWriter"
        case .unsupportedArchitecture(let machine):
            "ELF machine \(machine) is not x86-64: Go's register ABI is read on amd64 only"
        case .functionNotFound(let name): "not linked with crypto/tls (no \(name))"
        case .addressNotMapped(let address): "address 0x\(String(address, radix: 16)) is in no loadable segment of the file"
        }
    }
}
