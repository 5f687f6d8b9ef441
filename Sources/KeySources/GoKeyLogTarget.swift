/// Where a uprobe catches a Go program's TLS secrets: the entry of `crypto/tls.(*Config).writeKeyLog`, which every
/// handshake calls with the label, client random and secret before it checks whether `KeyLogWriter` is set.
public struct GoKeyLogTarget: Sendable, Equatable {
    public static let functionName = "crypto/tls.(*Config).writeKeyLog"

    public enum Found: String, Sendable {
        /// From the symbol table.
        case symtab
        /// From Go's own function table (a binary built with `-ldflags="-s -w"`).
        case pclntab
    }

    /// The function's virtual address.
    public var address: UInt64
    /// Its offset in the file: what `uprobe_events` takes after `PATH:`.
    public var fileOffset: UInt64
    public var version: GoBuildVersion
    public var foundIn: Found

    /// Finds the function in a Go binary for amd64, Go 1.17 or newer (the register ABI the probe reads).
    public static func locate(in bytes: [UInt8]) throws(GoBinaryError) -> GoKeyLogTarget {
        let image = try ELFImage(bytes: bytes)
        let version = try GoBuildVersion.read(from: image)
        let pclntab = try functionTable(of: image)
        guard version != nil || pclntab != nil || image.symbol(named: "runtime.main") != nil else { throw .notGo }
        if let release = version?.release, release.major == 1, release.minor < 17 {
            throw .unsupportedGoVersion(version: version!.text, reason: "Go before 1.17 passes arguments on the stack")
        }
        guard image.machine == ELFImage.machineX86_64 else { throw .unsupportedArchitecture(machine: image.machine) }
        let address: UInt64, foundIn: Found
        if let symbol = image.symbol(named: functionName) {
            (address, foundIn) = (symbol, .symtab)
        } else if let pclntab {
            guard let entry = try pclntab.entry(of: functionName) else { throw .functionNotFound(name: functionName) }
            (address, foundIn) = (entry, .pclntab)
        } else if image.sections.contains(where: { $0.name == ".symtab" }) {
            throw .functionNotFound(name: functionName)
        } else {
            throw .noPclntab
        }
        guard let offset = image.fileOffset(ofAddress: address) else { throw .addressNotMapped(address: address) }
        return GoKeyLogTarget(address: address, fileOffset: offset,
                              version: version ?? GoBuildVersion(text: "unknown"), foundIn: foundIn)
    }

    /// `.gopclntab` by section name, else (no section headers) found by its Go 1.16+ header magic in a
    /// non-executable loaded segment. nil when there is none.
    static func functionTable(of image: ELFImage) throws(GoBinaryError) -> GoFunctionTable? {
        let text = image.section(named: ".text")?.address
        if let section = image.section(named: ".gopclntab") {
            guard let bytes = image.contents(of: section) else {
                throw .truncated(what: ".gopclntab", offset: Int(clamping: section.offset), needed: Int(clamping: section.size),
                                 actual: max(0, image.bytes.count - Int(clamping: section.offset)))
            }
            return try GoFunctionTable(bytes, fallbackTextStart: text)
        }
        guard image.sections.isEmpty else { return nil }
        for segment in image.segments where !segment.executable {
            let reader = ByteReader(image.bytes)
            guard reader.contains(segment.offset, count: segment.fileSize) else { continue }
            var at = Int(segment.offset)
            let end = Int(segment.offset + segment.fileSize)
            while at + 16 <= end {
                let magic = reader.u32(at)
                if [GoFunctionTable.magic118, GoFunctionTable.magic120, GoFunctionTable.magic116].contains(magic)
                    && image.bytes[at + 4] == 0 && image.bytes[at + 5] == 0 && image.bytes[at + 6] == 1
                    && image.bytes[at + 7] == 8,
                   let table = try? GoFunctionTable(image.bytes[at..<end], fallbackTextStart: text) {
                    return table
                }
                at += 8
            }
        }
        return nil
    }
}
