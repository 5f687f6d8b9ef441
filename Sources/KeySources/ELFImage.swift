/// A 64-bit little-endian ELF file read from its bytes: the header, the section and program headers, and the
/// lookups a uprobe needs (a section by name, a symbol in `.symtab`, a virtual address as a file offset).
/// Every header is bounds-checked once where it is read; nothing is trusted beyond what the file holds.
public struct ELFImage: Sendable {
    public struct Section: Sendable, Equatable {
        public var name: String
        public var type: UInt32
        public var flags: UInt64
        public var address: UInt64
        public var offset: UInt64
        public var size: UInt64
        public var link: UInt32
        public var entrySize: UInt64
    }

    /// A `PT_LOAD` program header: where a range of the file is mapped.
    public struct Segment: Sendable, Equatable {
        public var virtualAddress: UInt64
        public var offset: UInt64
        public var fileSize: UInt64
        public var memorySize: UInt64
        public var flags: UInt32
        public var executable: Bool { flags & 1 != 0 }
    }

    public static let machineX86_64: UInt16 = 62
    public static let machineAArch64: UInt16 = 183
    static let sectionTypeSymbols: UInt32 = 2
    static let sectionTypeNoBits: UInt32 = 8

    public let bytes: [UInt8]
    public let machine: UInt16
    public let sections: [Section]
    public let segments: [Segment]

    /// Parses the headers. Not ELF, or not 64-bit little-endian: `GoBinaryError.notELF`; a header table that runs
    /// past the end: `.truncated`.
    public init(bytes: [UInt8]) throws(GoBinaryError) {
        self.bytes = bytes
        guard bytes.count >= 4, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46 else {
            throw .notELF(reason: "no ELF magic (\\x7fELF) at offset 0")
        }
        guard bytes.count >= 64 else { throw .truncated(what: "ELF header", offset: 0, needed: 64, actual: bytes.count) }
        guard bytes[4] == 2 else { throw .notELF(reason: "32-bit ELF (class \(bytes[4])); only 64-bit binaries are read") }
        guard bytes[5] == 1 else { throw .notELF(reason: "big-endian ELF; only little-endian binaries are read") }
        let reader = ByteReader(bytes)
        machine = reader.u16(18)
        let programOffset = reader.u64(32), sectionOffset = reader.u64(40)
        let programEntrySize = Int(reader.u16(54)), programCount = Int(reader.u16(56))
        let sectionEntrySize = Int(reader.u16(58)), sectionCount = Int(reader.u16(60))
        let namesIndex = Int(reader.u16(62))

        var segments: [Segment] = []
        if programCount > 0 {
            guard programEntrySize >= 56 else {
                throw .corrupt(what: "ELF program header", offset: 54, reason: "entry size \(programEntrySize), under 56")
            }
            try reader.need(programOffset, count: UInt64(programCount * programEntrySize), what: "ELF program headers")
            for index in 0..<programCount {
                let at = Int(programOffset) + index * programEntrySize
                guard reader.u32(at) == 1 else { continue }  // PT_LOAD
                segments.append(Segment(virtualAddress: reader.u64(at + 16), offset: reader.u64(at + 8),
                                        fileSize: reader.u64(at + 32), memorySize: reader.u64(at + 40),
                                        flags: reader.u32(at + 4)))
            }
        }
        self.segments = segments

        var sections: [Section] = []
        if sectionCount > 0 && sectionOffset != 0 {
            guard sectionEntrySize >= 64 else {
                throw .corrupt(what: "ELF section header", offset: 58, reason: "entry size \(sectionEntrySize), under 64")
            }
            try reader.need(sectionOffset, count: UInt64(sectionCount * sectionEntrySize), what: "ELF section headers")
            var raw: [(nameOffset: UInt32, section: Section)] = []
            for index in 0..<sectionCount {
                let at = Int(sectionOffset) + index * sectionEntrySize
                raw.append((reader.u32(at), Section(
                    name: "", type: reader.u32(at + 4), flags: reader.u64(at + 8), address: reader.u64(at + 16),
                    offset: reader.u64(at + 24), size: reader.u64(at + 32), link: reader.u32(at + 40),
                    entrySize: reader.u64(at + 56))))
            }
            // Names come from the section-name string table; without a valid one, sections keep empty names.
            let names: Section? = namesIndex < raw.count ? raw[namesIndex].section : nil
            for (nameOffset, var section) in raw {
                if let names, names.type != Self.sectionTypeNoBits, UInt64(nameOffset) < names.size,
                   reader.contains(names.offset, count: names.size) {
                    section.name = reader.cString(at: Int(names.offset + UInt64(nameOffset)),
                                                  limit: Int(names.offset + names.size))
                }
                sections.append(section)
            }
        }
        self.sections = sections
    }

    public func section(named name: String) -> Section? { sections.first { $0.name == name } }

    /// The bytes a section holds in the file, or nil when it holds none (`SHT_NOBITS`) or runs past the end.
    public func contents(of section: Section) -> ArraySlice<UInt8>? {
        guard section.type != Self.sectionTypeNoBits, ByteReader(bytes).contains(section.offset, count: section.size)
        else { return nil }
        return bytes[Int(section.offset)..<Int(section.offset + section.size)]
    }

    /// The file offset of a virtual address, through the `PT_LOAD` segment that maps it from the file (what
    /// `uprobe_events` wants after `PATH:`). nil when no segment maps it from file bytes, or the segment claims
    /// bytes past the end of the file (a truncated or corrupt file: the offset would name nothing).
    public func fileOffset(ofAddress address: UInt64) -> UInt64? {
        for segment in segments where address >= segment.virtualAddress
            && address - segment.virtualAddress < segment.fileSize {
            let (offset, overflow) = (address - segment.virtualAddress).addingReportingOverflow(segment.offset)
            guard !overflow, offset < UInt64(bytes.count) else { continue }
            return offset
        }
        return nil
    }

    /// `count` bytes at a virtual address, when they are in the file.
    func bytes(atAddress address: UInt64, count: UInt64) -> ArraySlice<UInt8>? {
        guard let offset = fileOffset(ofAddress: address), ByteReader(bytes).contains(offset, count: count) else { return nil }
        return bytes[Int(offset)..<Int(offset + count)]
    }

    /// A symbol's value in `.symtab` (nil when the binary has none, as after `-s`, or lacks the name).
    public func symbol(named name: String) -> UInt64? {
        guard let table = sections.first(where: { $0.type == Self.sectionTypeSymbols && $0.name == ".symtab" }),
              Int(table.link) < sections.count, let symbols = contents(of: table) else { return nil }
        let strings = sections[Int(table.link)]
        guard let names = contents(of: strings) else { return nil }
        let wanted = Array(name.utf8)
        let reader = ByteReader(bytes)
        var at = symbols.startIndex
        while at + 24 <= symbols.endIndex {
            let nameOffset = Int(reader.u32(at))
            if nameOffset + wanted.count < names.count,
               names[names.startIndex + nameOffset + wanted.count] == 0,
               names[(names.startIndex + nameOffset)..<(names.startIndex + nameOffset + wanted.count)].elementsEqual(wanted) {
                return reader.u64(at + 8)
            }
            at += 24
        }
        return nil
    }
}

/// Little-endian reads at offsets a caller has checked (`need`/`contains`), over the whole file.
struct ByteReader {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func contains(_ offset: UInt64, count: UInt64) -> Bool {
        offset <= UInt64(bytes.count) && count <= UInt64(bytes.count) - offset
    }

    func need(_ offset: UInt64, count: UInt64, what: String) throws(GoBinaryError) {
        guard contains(offset, count: count) else {
            throw .truncated(what: what, offset: Int(clamping: offset), needed: Int(clamping: count),
                             actual: max(0, bytes.count - Int(clamping: offset)))
        }
    }

    func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }
    func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
    /// A pointer-sized word (4 or 8 bytes).
    func word(_ at: Int, size: Int) -> UInt64 { size == 8 ? u64(at) : UInt64(u32(at)) }

    /// The NUL-terminated string at `at`, read no further than `limit` (exclusive).
    func cString(at: Int, limit: Int) -> String {
        var end = at
        let stop = min(limit, bytes.count)
        while end < stop && bytes[end] != 0 { end += 1 }
        return String(decoding: bytes[at..<end], as: UTF8.self)
    }
}
