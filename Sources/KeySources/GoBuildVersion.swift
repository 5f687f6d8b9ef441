/// The Go version a binary was built with, from its `.go.buildinfo` block (what `go version FILE` reads), as
/// the Go toolchain's `debug/buildinfo` lays it out: 14 bytes `\xff Go buildinf:`, the pointer size, a flags byte,
/// then either (Go 1.18+, flag 2) the version as a length-prefixed string at offset 32, or (older) two pointers to
/// string headers (the version's first) in the binary's data.
public struct GoBuildVersion: Sendable, Equatable, CustomStringConvertible {
    /// As the toolchain spells it: "go1.19.8", "devel go1.22-abcdef ...".
    public var text: String
    /// Major and minor, when the text names a release ("go1.19.8" → 1, 19). nil for development builds.
    public var release: (major: Int, minor: Int)? {
        guard text.hasPrefix("go") else { return nil }
        let numbers = text.dropFirst(2).split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }

    public static func == (a: Self, b: Self) -> Bool { a.text == b.text }
    public var description: String { text }

    public init(text: String) { self.text = text }

    static let magic: [UInt8] = [0xff] + Array(" Go buildinf:".utf8)

    /// Reads the version from `.go.buildinfo`, or from the block found by its magic (16-byte aligned) when the
    /// binary has no section headers. nil when there is none: not a Go binary, or one older than Go 1.13.
    static func read(from image: ELFImage) throws(GoBinaryError) -> GoBuildVersion? {
        let reader = ByteReader(image.bytes)
        var start: Int?
        if let section = image.section(named: ".go.buildinfo"), image.contents(of: section) != nil {
            start = Int(section.offset)
        } else {
            start = findMagic(in: image.bytes)
        }
        guard let start else { return nil }
        guard reader.contains(UInt64(start), count: 32) else {
            throw .truncated(what: ".go.buildinfo header", offset: start, needed: 32, actual: image.bytes.count - start)
        }
        guard image.bytes[start..<(start + 14)].elementsEqual(magic) else {
            throw .corrupt(what: ".go.buildinfo", offset: start, reason: "no \\xff Go buildinf: magic")
        }
        let pointerSize = Int(image.bytes[start + 14]), flags = image.bytes[start + 15]
        if flags & 2 != 0 {
            // Inline strings: a uvarint length, then the bytes.
            var at = start + 32, length: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard at < image.bytes.count, shift < 63 else {
                    throw .corrupt(what: ".go.buildinfo", offset: at, reason: "version length runs off the end")
                }
                let byte = image.bytes[at]
                length |= UInt64(byte & 0x7f) << shift
                at += 1
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            guard length < 1024, reader.contains(UInt64(at), count: length) else {
                throw .corrupt(what: ".go.buildinfo", offset: at, reason: "version of \(length) bytes does not fit")
            }
            return GoBuildVersion(text: String(decoding: image.bytes[at..<(at + Int(length))], as: UTF8.self))
        }
        guard pointerSize == 8 || pointerSize == 4, flags & 1 == 0 else {
            throw .corrupt(what: ".go.buildinfo", offset: start + 14,
                           reason: "pointer size \(pointerSize), flags \(flags): not a little-endian 32/64-bit layout")
        }
        // Pointers to Go string headers (data pointer, length) in the mapped data.
        let header = reader.word(start + 16, size: pointerSize)
        guard let string = image.bytes(atAddress: header, count: UInt64(2 * pointerSize)) else {
            throw .corrupt(what: ".go.buildinfo", offset: start + 16, reason: "version string header at 0x\(String(header, radix: 16)) is not in the file")
        }
        let data = reader.word(string.startIndex, size: pointerSize)
        let length = reader.word(string.startIndex + pointerSize, size: pointerSize)
        guard length < 1024, let text = image.bytes(atAddress: data, count: length) else {
            throw .corrupt(what: ".go.buildinfo", offset: start + 16, reason: "version string at 0x\(String(data, radix: 16)) is not in the file")
        }
        return GoBuildVersion(text: String(decoding: text, as: UTF8.self))
    }

    private static func findMagic(in bytes: [UInt8]) -> Int? {
        var at = 0
        while at + 32 <= bytes.count {
            if bytes[at] == 0xff && bytes[at + 1] == 0x20 && bytes[at..<(at + 14)].elementsEqual(magic) { return at }
            at += 16
        }
        return nil
    }
}
