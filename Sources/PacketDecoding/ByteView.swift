/// Big-endian reads over bytes whose length was validated once by the caller.
extension UnsafeRawBufferPointer {
    @inline(__always) func u8(_ offset: Int) -> UInt8 { self[offset] }
    @inline(__always) func u16(_ offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func u32(_ offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func u64(_ offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    /// Little-endian 16-bit read (NFLOG TLV headers are in host order, which is little-endian on every Linux we run).
    @inline(__always) func u16le(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func u32le(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    /// The bytes from `start` to the end, or `start..<end`, rebased to index 0.
    @inline(__always) func slice(_ start: Int, _ end: Int? = nil) -> UnsafeRawBufferPointer {
        let stop = Swift.min(end ?? count, count)
        if start >= stop { return UnsafeRawBufferPointer(start: baseAddress.map { $0 + Swift.min(start, count) }, count: 0) }
        return UnsafeRawBufferPointer(rebasing: self[start..<stop])
    }
}
