/// Reads a fuzzer's input as a sequence of small fields, so one byte string drives a structured scenario.
/// Compiled into every target (Scripts/fuzz adds this file), so targets share one way of reading their input.
struct FuzzInput {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = UnsafeRawBufferPointer(start: data, count: size)
    }

    var isEmpty: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    /// Up to `count` bytes (fewer at the end of the input).
    mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = end }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    /// The rest of the input.
    mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }

    /// The rest of the input copied into an allocation of exactly its size, for `body`: a read past it is
    /// AddressSanitizer's to report (an Array may reserve more, and UnsafeRawBufferPointer's own bounds check is gone
    /// at -O).
    mutating func withRestInExactBuffer<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let rest = rest()
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: rest.count, alignment: 1)
        defer { storage.deallocate() }
        storage.copyMemory(from: rest)
        return body(UnsafeRawBufferPointer(storage))
    }
}
