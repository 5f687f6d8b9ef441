import TLSWire

extension ByteCursor {
    /// RFC 9000 section 16: a variable-length integer (the two high bits of the first byte give its length, 1 to 8
    /// bytes). nil, with nothing read, when it runs past the end.
    @inlinable public mutating func varint() -> UInt64? {
        guard remaining >= 1 else { return nil }
        let length = 1 << Int(bytes[offset] >> 6)
        guard remaining >= length else { return nil }
        var value = UInt64(bytes[offset] & 0x3f)
        for index in 1..<length { value = value << 8 | UInt64(bytes[offset + index]) }
        offset += length
        return value
    }

    /// A variable-length integer that is a length or a count in this datagram: nil when it does not fit in `Int`.
    @inlinable public mutating func varintLength() -> Int? {
        let start = offset
        guard let value = varint(), value <= UInt64(Int32.max) else { offset = start; return nil }
        return Int(value)
    }
}
