import KeySources

// The Go key source's reader on bytes that claim to be a binary: the ELF header, section and program headers,
// `.symtab`, `.gopclntab` (Go 1.16 and 1.18 layouts, found by section or by magic), `.go.buildinfo` (inline and
// pointer forms) and the address-to-offset mapping. Asserts that an offset it returns lies inside the input.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGoBinary(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let target = try? GoKeyLogTarget.locate(in: bytes) {
        precondition(target.fileOffset < UInt64(size), "file offset \(target.fileOffset) past the input's \(size) bytes")
        _ = target.version.release
    }
    if let image = try? ELFImage(bytes: bytes) {
        for section in image.sections { _ = image.contents(of: section)?.count }
        _ = image.symbol(named: "runtime.main")
        for segment in image.segments { _ = image.fileOffset(ofAddress: segment.virtualAddress &+ segment.fileSize / 2) }
    }
    if let table = try? GoFunctionTable(bytes[...]) { _ = try? table.entry(of: GoKeyLogTarget.functionName) }
    return 0
}
