import TLSWire

extension ByteCursor {
    /// A QUIC variable-length integer that is a length or a count in this datagram (RFC 9000 section 16): nil, with
    /// nothing read, when it is cut short or does not fit in an `Int32`.
    @inlinable public mutating func varintLength() -> Int? {
        let start = offset
        guard let value = quicVarInt(), value <= UInt64(Int32.max) else { offset = start; return nil }
        return Int(value)
    }
}
