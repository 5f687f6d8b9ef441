import Foundation
import KeySources
import Testing
import TestSupport

/// The ELF and `.gopclntab` reader against Go binaries built here with Debian's Go, plain and `-s -w`. The oracles
/// are Go's own: `go tool nm` for the symbol, a program using `debug/elf` and `debug/gosym` (the toolchain's
/// pclntab reader, not ours) for the entry and file offset, and `go version FILE` for the version.
@Suite(.enabled(if: GoToolchain.available, Comment(rawValue: GoToolchain.skipReason)), .serialized)
struct GoKeyLogTargetTests {
    static let tlsClient = """
        package main

        import (
        \t"crypto/tls"
        \t"fmt"
        \t"os"
        )

        func main() {
        \tconn, err := tls.Dial("tcp", os.Args[1], &tls.Config{InsecureSkipVerify: true})
        \tif err != nil {
        \t\tfmt.Println(err)
        \t\treturn
        \t}
        \tconn.Close()
        }
        """

    static let hello = """
        package main

        import "fmt"

        func main() { fmt.Println("no TLS here") }
        """

    /// Prints the entry and file offset of a function, found with the toolchain's own debug/gosym over .gopclntab.
    static let oracle = """
        package main

        import (
        \t"debug/elf"
        \t"debug/gosym"
        \t"fmt"
        \t"os"
        )

        func main() {
        \tf, err := elf.Open(os.Args[1])
        \tif err != nil {
        \t\tpanic(err)
        \t}
        \tdata, err := f.Section(".gopclntab").Data()
        \tif err != nil {
        \t\tpanic(err)
        \t}
        \ttable, err := gosym.NewTable(nil, gosym.NewLineTable(data, f.Section(".text").Addr))
        \tif err != nil {
        \t\tpanic(err)
        \t}
        \tfn := table.LookupFunc(os.Args[2])
        \tif fn == nil {
        \t\tfmt.Println("absent")
        \t\treturn
        \t}
        \tfor _, p := range f.Progs {
        \t\tif p.Type == elf.PT_LOAD && fn.Entry >= p.Vaddr && fn.Entry < p.Vaddr+p.Filesz {
        \t\t\tfmt.Printf("%x %x\\n", fn.Entry, fn.Entry-p.Vaddr+p.Off)
        \t\t}
        \t}
        }
        """

    /// Built once for the suite: the binaries take a few seconds each with a cold cache. One folder, rebuilt by
    /// every run, so runs do not pile binaries up in the temporary directory.
    static let built: Result<Binaries, Error> = Result {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tapkit-go-reader-tests")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return Binaries(
            directory: directory,
            plain: try GoToolchain.build(source: tlsClient, name: "client-plain", linking: .plain, in: directory),
            stripped: try GoToolchain.build(source: tlsClient, name: "client-stripped", linking: .stripped, in: directory),
            hello: try GoToolchain.build(source: hello, name: "hello", linking: .stripped, in: directory),
            oracle: try GoToolchain.build(source: oracle, name: "oracle", linking: .plain, in: directory))
    }

    struct Binaries {
        var directory: URL
        var plain, stripped, hello, oracle: String
        func path(_ linking: GoToolchain.Linking) -> String { linking == .plain ? plain : stripped }
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// (entry, file offset) from the oracle program.
    static func oracleAnswer(_ binaries: Binaries, _ binary: String) throws -> (UInt64, UInt64) {
        let fields = try run(binaries.oracle, [binary, GoKeyLogTarget.functionName]).stdoutText
            .split(whereSeparator: \.isWhitespace).compactMap { UInt64($0, radix: 16) }
        try #require(fields.count == 2)
        return (fields[0], fields[1])
    }

    @Test(arguments: GoToolchain.Linking.allCases)
    func findsWriteKeyLog(linking: GoToolchain.Linking) throws {
        let binaries = try Self.built.get()
        let binary = binaries.path(linking)
        let target = try GoKeyLogTarget.locate(in: try Self.bytes(binary))
        let (entry, offset) = try Self.oracleAnswer(binaries, binary)
        #expect(target.address == entry)
        #expect(target.fileOffset == offset)
        #expect(target.foundIn == (linking == .plain ? .symtab : .pclntab))
        if linking == .plain {
            #expect(try GoToolchain.nmAddress(of: GoKeyLogTarget.functionName, in: binary) == target.address)
        } else {
            // Stripped: no symbols for nm, so the pclntab answer is checked against the same program's plain build
            // too, whose code lies where the stripped one's does.
            #expect(try GoToolchain.nmAddress(of: GoKeyLogTarget.functionName, in: binary) == nil)
            let symbolTable = try GoKeyLogTarget.locate(in: try Self.bytes(binaries.plain))
            #expect(symbolTable.address == target.address)
        }
        let version = try run(GoToolchain.path, ["version", binary]).stdoutText
        #expect(version.contains(": \(target.version.text)\n"), "go version says \(version)")
        #expect(target.version.release.map { $0.major == 1 && $0.minor >= 17 } == true)
    }

    @Test func pclntabAgreesWithSymtabInAPlainBinary() throws {
        let binaries = try Self.built.get()
        let image = try ELFImage(bytes: try Self.bytes(binaries.plain))
        let section = try #require(image.section(named: ".gopclntab"))
        let table = try GoFunctionTable(try #require(image.contents(of: section)),
                                        fallbackTextStart: image.section(named: ".text")?.address)
        #expect(table.layout == .go118)
        for name in ["runtime.main", "main.main", GoKeyLogTarget.functionName, "crypto/tls.(*Conn).Handshake"] {
            #expect(try table.entry(of: name) == image.symbol(named: name), "\(name)")
        }
        #expect(try table.entry(of: "crypto/tls.(*Config).noSuchFunction") == nil)
    }

    @Test func programWithoutTLSIsNamed() throws {
        let binaries = try Self.built.get()
        #expect(throws: GoBinaryError.functionNotFound(name: GoKeyLogTarget.functionName)) {
            try GoKeyLogTarget.locate(in: try Self.bytes(binaries.hello))
        }
    }

    @Test func notELFAndNotGo() throws {
        #expect(throws: GoBinaryError.notELF(reason: "no ELF magic (\\x7fELF) at offset 0")) {
            try GoKeyLogTarget.locate(in: Array("#!/bin/sh\necho hi\n".utf8))
        }
        #expect(throws: GoBinaryError.notGo) { try GoKeyLogTarget.locate(in: try Self.bytes("/bin/true")) }
        let error = #expect(throws: GoBinaryError.self) { try GoKeyLogTarget.locate(in: [0x7f, 0x45, 0x4c, 0x46, 2, 1]) }
        #expect(error == .truncated(what: "ELF header", offset: 0, needed: 64, actual: 6))
    }

    /// The same binary with its build information saying Go 1.16: refused for the stack ABI, by version.
    @Test func goBefore117IsRefused() throws {
        let binaries = try Self.built.get()
        var bytes = try Self.bytes(binaries.stripped)
        let image = try ELFImage(bytes: bytes)
        let info = try #require(image.section(named: ".go.buildinfo"))
        let version = try GoKeyLogTarget.locate(in: bytes).version.text
        let at = try #require(Self.find(Array(version.utf8), in: bytes, from: Int(info.offset)))
        let older = "go1.16" + version.dropFirst(6)
        bytes.replaceSubrange(at..<(at + older.utf8.count), with: Array(older.utf8))
        let error = #expect(throws: GoBinaryError.self) { try GoKeyLogTarget.locate(in: bytes) }
        guard case .unsupportedGoVersion(let named, _) = error else {
            Issue.record("expected unsupportedGoVersion, got \(String(describing: error))")
            return
        }
        #expect(named == older)
        #expect(error?.description.hasPrefix("Go binary older than 1.17") == true)
    }

    /// A stripped binary cut inside its .gopclntab, and one whose functab offset points past the table.
    @Test func truncatedAndCorruptPclntab() throws {
        let binaries = try Self.built.get()
        let bytes = try Self.bytes(binaries.stripped)
        let image = try ELFImage(bytes: bytes)
        let section = try #require(image.section(named: ".gopclntab"))
        let cut = Array(bytes[..<(Int(section.offset) + Int(section.size) / 2)])
        let truncated = #expect(throws: GoBinaryError.self) { try GoKeyLogTarget.locate(in: cut) }
        #expect({ if case .truncated = truncated { true } else { false } }(), "\(String(describing: truncated))")

        var corrupt = bytes
        let pclnOffsetField = Int(section.offset) + 8 + 7 * 8
        for index in 0..<8 { corrupt[pclnOffsetField + index] = 0x7f }
        let error = #expect(throws: GoBinaryError.self) { try GoKeyLogTarget.locate(in: corrupt) }
        #expect({ if case .corruptPclntab = error { true } else { false } }(), "\(String(describing: error))")

        var badMagic = bytes
        badMagic[Int(section.offset)] = 0x00
        #expect(throws: GoBinaryError.corruptPclntab(offset: 0, reason: "unknown magic 0xffffff00")) {
            try GoKeyLogTarget.locate(in: badMagic)
        }
    }

    /// Section headers gone (as `sstrip` leaves a binary): the table is found by its magic in a loaded segment.
    @Test func withoutSectionHeaders() throws {
        let binaries = try Self.built.get()
        var bytes = try Self.bytes(binaries.stripped)
        let expected = try GoKeyLogTarget.locate(in: bytes)
        for index in 40..<48 { bytes[index] = 0 }  // e_shoff
        for index in 60..<64 { bytes[index] = 0 }  // e_shnum, e_shstrndx
        let target = try GoKeyLogTarget.locate(in: bytes)
        #expect(target.fileOffset == expected.fileOffset)
        #expect(target.version == expected.version)
    }

    /// Go 1.16/1.17's layout (magic 0xfffffffa, pointer-sized functab), which Debian's Go 1.19 cannot make: a table
    /// written here by the layout of that runtime's symtab.go, with two functions.
    @Test func go116LayoutFromItsDefinition() throws {
        var table: [UInt8] = [0xfa, 0xff, 0xff, 0xff, 0, 0, 1, 8]
        func word(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func u32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let names = Array("main.main\u{0}crypto/tls.(*Config).writeKeyLog\u{0}".utf8)
        let headerSize = 8 + 7 * 8
        let nameOffset = UInt64(headerSize)
        let pclnOffset = nameOffset + UInt64(names.count)
        // functab: (entry, funcoff) x 3 (the last is the end marker), then two _func records (entry, nameoff).
        let functabSize: UInt64 = 3 * 16
        let functions: [(UInt64, UInt32)] = [(0x401000, 0), (0x4a2b40, 10)]
        table += word(2) + word(0) + word(nameOffset) + word(0) + word(0) + word(0) + word(pclnOffset)
        table += names
        for (index, function) in functions.enumerated() {
            table += word(function.0) + word(functabSize + UInt64(index) * 12)
        }
        table += word(0x4b0000) + word(0)
        for function in functions { table += word(function.0) + u32(function.1) }
        let parsed = try GoFunctionTable(table[...])
        #expect(parsed.layout == .go116)
        #expect(try parsed.entry(of: GoKeyLogTarget.functionName) == 0x4a2b40)
        #expect(try parsed.entry(of: "main.main") == 0x401000)
        #expect(try parsed.entry(of: "main.other") == nil)
    }

    /// A Go 1.16 functab whose pointer-sized function offset is near 2^64: the record's position overflowed
    /// (a trap). Now: the record is past the table's end, which is what it is.
    @Test func go116FunctionOffsetNear2To64IsCorrupt() throws {
        func word(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var table: [UInt8] = [0xfa, 0xff, 0xff, 0xff, 0, 0, 1, 8]
        let headerSize: UInt64 = 8 + 7 * 8
        table += word(1) + word(0) + word(headerSize) + word(0) + word(0) + word(0) + word(headerSize)
        table += word(0x401000) + word(UInt64.max - 7) + word(0x402000) + word(0)
        let parsed = try GoFunctionTable(table[...])
        let error = #expect(throws: GoBinaryError.self) { try parsed.entry(of: GoKeyLogTarget.functionName) }
        #expect({ if case .corruptPclntab = error { true } else { false } }(), "\(String(describing: error))")
    }

    /// Found by the go-binary fuzz target: a PT_LOAD whose file range runs past the end of a 1,112-byte file, so
    /// the function's address mapped to an offset past the file (a uprobe on nothing). Now: not mapped.
    @Test func segmentPastTheFileEndMapsNothing() throws {
        let bytes = [UInt8](try #require(Data(base64Encoded: Self.segmentPastEnd)))
        let error = #expect(throws: GoBinaryError.self) { try GoKeyLogTarget.locate(in: bytes) }
        #expect({ if case .addressNotMapped = error { true } else { false } }(), "\(String(describing: error))")
    }

    static let segmentPastEnd = "f0VMRgIBAQAAAAAAAAAAAAIAPgABAAAAAAFAAAAAAABAAAAAAAAAAJgCAAAAAAAAAAAAAEAAOAABAEAABwAEAAEAAAAFAAAAAP////kAAAAAAEAAAAAAAAAAQAAAAAAAWAQAAAAAAABYBAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAMPDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8P///////8AJcPDw8PDw8PDw8Pw////AAABCAIAAAAAAAAAAAAAAAAAAAAAAUAAAAAAAEgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAcwAAAAAAAABtYWluLm1haW4AY3J5cHRvL3Rscy4oKkNvbmZpZykud3JpdGVLZXlMb2cAAAAAABgAAAAgAAAAIAAAAEAAAAAAAAAAAAAAAAAAAAAgAAAACgAAAAAAAAAA/yBHbyBidWlsZGluZjoIAgAAAAAAAAAAAAAAAAAAAAAIZ28xLjE5LjgALnRleHQALmdvcGNsbnRhYgAuZ28uYnVpbGRpbmZvAC5zaHN0cnRhYgAuc3ltdGFiAC5zdHJ0YWIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAAABIAAQAgAUAAAAAAACAAAAAAAAAAAGNyeXB0by90bHMuKCpDb25maWcpLndyaXRlS2V5TG9nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAAAAQAAAAYAAAAAAAAAAAFAAAAAAAAAAQAAAAAAAEAAAAAAAAAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAAABwAAAAEAAAACAAAAAAAAAEABQAAAAAAAQAEAAAAAAACbAAAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAAAAAAAAAABIAAAABAAAAAwAAAAAAAADgAUAAAAAAAOABAAAAAAAAKQAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAAgAAAAAwAAAAAAAAAAAAAAAAAAAAAAAAAJAgAAAAAAADoAAAAAAAAAAAAAAAAAAAABAAAAAAAAAAAAAAAAAAAAKgAAAAIAAAAAAAAAAAAAAAAAAAAAAAAAQwIAAAAAAAIwAAAAAAAAAAYAAAAAAAAAAQAAAAAAAAAYAAAAAAAAADIAAAADAAAAAAAAAAAAAAAAAAAAAAAAAHMCAAAAAAAAIgAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAAAAAAAAAAA="

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        var at = start
        while at + needle.count <= bytes.count {
            if bytes[at] == needle[0] && bytes[at..<(at + needle.count)].elementsEqual(needle) { return at }
            at += 1
        }
        return nil
    }
}
