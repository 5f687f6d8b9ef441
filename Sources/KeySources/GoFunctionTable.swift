/// Go's function table (`.gopclntab`, runtime.pcHeader and the functab after it), read to find a function's entry
/// address by name in a binary stripped of `.symtab` (`go build -ldflags="-s -w"` keeps it: the runtime needs it
/// for stack traces). Layouts from the Go runtime's `symtab.go`:
/// - Go 1.18 and newer (magic 0xfffffff0 for 1.18 and 1.19, 0xfffffff1 from 1.20 on, same layout): header words `nfunc, nfiles, textStart, funcnameOffset, cuOffset,
///   filetabOffset, pctabOffset, pclnOffset`; the functab holds `nfunc + 1` pairs of 32-bit (entry offset from
///   textStart, func offset from the functab); a `_func` starts with that entry offset and a 32-bit name offset into
///   the function name table.
/// - Go 1.16 and 1.17 (magic 0xfffffffa): the same without `textStart`; functab pairs and the `_func`'s first field
///   are pointer-sized absolute addresses.
/// Older magics (0xfffffffb, Go 1.2-1.15) are named as such: those Go versions pass arguments on the stack anyway.
public struct GoFunctionTable: Sendable {
    public enum Layout: Sendable, Equatable {
        /// Go 1.16 and 1.17.
        case go116
        /// Go 1.18 and newer.
        case go118
    }

    public static let magic118: UInt32 = 0xffff_fff0
    public static let magic120: UInt32 = 0xffff_fff1
    public static let magic116: UInt32 = 0xffff_fffa
    public static let magic12: UInt32 = 0xffff_fffb

    public let layout: Layout
    public let functionCount: Int
    private let table: [UInt8]
    private let pointerSize: Int
    private let textStart: UInt64
    private let nameTable: Int
    private let functab: Int

    /// Reads the header of a pclntab (`bytes` start at the header). `textStart` is used when the header's own is 0
    /// (a position-independent binary, where the runtime relocates it): the `.text` section's address.
    public init(_ bytes: ArraySlice<UInt8>, fallbackTextStart: UInt64? = nil) throws(GoBinaryError) {
        let table = Array(bytes)
        self.table = table
        let reader = ByteReader(table)
        guard table.count >= 8 else { throw .corruptPclntab(offset: 0, reason: "\(table.count) bytes, under its 8-byte header") }
        let magic = reader.u32(0)
        switch magic {
        case Self.magic118, Self.magic120: layout = .go118
        case Self.magic116: layout = .go116
        case Self.magic12:
            throw .unsupportedGoVersion(version: "before 1.16 (pclntab magic 0x\(String(magic, radix: 16)))",
                                        reason: "Go before 1.17 passes arguments on the stack")
        default:
            throw .corruptPclntab(offset: 0, reason: "unknown magic 0x\(String(magic, radix: 16))")
        }
        guard table[4] == 0, table[5] == 0 else { throw .corruptPclntab(offset: 4, reason: "header padding is not zero") }
        let size = Int(table[7])
        guard size == 8 || size == 4 else {
            throw .corruptPclntab(offset: 7, reason: "pointer size \(size), not 4 or 8")
        }
        pointerSize = size
        let words = layout == .go118 ? 8 : 7
        let headerSize = 8 + words * size
        guard table.count >= headerSize else {
            throw .corruptPclntab(offset: 8, reason: "\(table.count) bytes, under its \(headerSize)-byte header")
        }
        func word(_ index: Int) -> UInt64 { reader.word(8 + index * size, size: size) }
        let count = word(0)
        let name: UInt64, pcln: UInt64
        switch layout {
        case .go118:
            let start = word(2)
            textStart = start != 0 ? start : (fallbackTextStart ?? 0)
            name = word(3)
            pcln = word(7)
        case .go116:
            textStart = 0
            name = word(2)
            pcln = word(6)
        }
        let pairSize = layout == .go118 ? 8 : 2 * size
        guard count < 1 << 24 else { throw .corruptPclntab(offset: 8, reason: "function count \(count) is implausible") }
        guard name < UInt64(table.count) else {
            throw .corruptPclntab(offset: 8 + 3 * size, reason: "function name table at \(name), past the table's \(table.count) bytes")
        }
        guard reader.contains(pcln, count: (count + 1) * UInt64(pairSize)) else {
            throw .corruptPclntab(offset: Int(clamping: pcln),
                                  reason: "functab of \(count + 1) entries does not fit in the table's \(table.count) bytes")
        }
        functionCount = Int(count)
        nameTable = Int(name)
        functab = Int(pcln)
    }

    /// The entry address of the function named `name`, or nil when the table has no such function. A `_func`
    /// that points outside the table is an error: the table is corrupt.
    public func entry(of name: String) throws(GoBinaryError) -> UInt64? {
        let wanted = Array(name.utf8)
        let reader = ByteReader(table)
        let pairSize = layout == .go118 ? 8 : 2 * pointerSize
        for index in 0..<functionCount {
            let pair = functab + index * pairSize
            let funcOffset = layout == .go118
                ? UInt64(reader.u32(pair + 4)) : reader.word(pair + pointerSize, size: pointerSize)
            let (function, overflow) = UInt64(functab).addingReportingOverflow(funcOffset)
            let entrySize = layout == .go118 ? 4 : pointerSize
            guard !overflow, reader.contains(function, count: UInt64(entrySize + 4)) else {
                throw .corruptPclntab(offset: pair, reason: "function \(index)'s record at \(function) is past the table's end")
            }
            let nameOffset = UInt64(reader.u32(Int(function) + entrySize))
            let at = UInt64(nameTable) + nameOffset
            guard at < UInt64(table.count) else {
                throw .corruptPclntab(offset: Int(function), reason: "function \(index)'s name at \(at) is past the table's end")
            }
            let start = Int(at)
            guard start + wanted.count < table.count, table[start + wanted.count] == 0,
                  table[start..<(start + wanted.count)].elementsEqual(wanted) else { continue }
            switch layout {
            case .go118: return textStart &+ UInt64(reader.u32(Int(function)))
            case .go116: return reader.word(Int(function), size: pointerSize)
            }
        }
        return nil
    }
}
