/// Bounds-checked big-endian reads over borrowed bytes, front to back: every read checks the length it needs once
/// and returns nil rather than trapping, and nothing is copied (a slice read is a view into the same memory).
/// The one byte reader of the TLS wire format (records, handshake messages, hellos), used by the connection
/// labels, by decryption and by the QUIC Initial's ClientHello, and for HTTP/2's frame fields.
///
/// It borrows the memory it reads, so it is not `Sendable`: use it, and what it returns, inside the
/// `withUnsafeBytes` call that lends the bytes.
public struct ByteCursor {
    public let bytes: UnsafeRawBufferPointer
    /// Where the next read starts.
    public var offset = 0

    @inlinable public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Bytes not yet read.
    @inlinable public var remaining: Int { bytes.count - offset }
    @inlinable public var isAtEnd: Bool { offset >= bytes.count }

    @inlinable public mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inlinable public mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self).bigEndian
    }

    /// A 24-bit length (handshake messages, HTTP/2 frames).
    @inlinable public mutating func u24() -> Int? {
        guard remaining >= 3 else { return nil }
        defer { offset += 3 }
        return Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
    }

    @inlinable public mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).bigEndian
    }

    /// A QUIC variable-length integer (RFC 9000 section 16: the first byte's top two bits give its length, 1, 2,
    /// 4 or 8 bytes), used by QUIC frames and HTTP/3 alike; nil (and nothing read) when it is cut short.
    @inlinable public mutating func quicVarInt() -> UInt64? {
        guard remaining >= 1 else { return nil }
        let length = 1 << Int(bytes[offset] >> 6)
        guard remaining >= length else { return nil }
        var value = UInt64(bytes[offset] & 0x3f)
        for index in 1..<length { value = value << 8 | UInt64(bytes[offset + index]) }
        offset += length
        return value
    }

    /// The next `count` bytes, or nil (and nothing read) when fewer are left.
    @inlinable public mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// Skips `count` bytes; false (and nothing skipped) when fewer are left.
    @inlinable public mutating func skip(_ count: Int) -> Bool { take(count) != nil }

    /// Everything not yet read.
    @inlinable public mutating func rest() -> UnsafeRawBufferPointer {
        defer { offset = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset...])
    }

    /// A vector with a one-byte length prefix (TLS's `<0..2^8-1>`).
    @inlinable public mutating func vector8() -> UnsafeRawBufferPointer? {
        let start = offset
        guard let length = u8() else { return nil }
        guard let body = take(Int(length)) else { offset = start; return nil }
        return body
    }

    /// A vector with a two-byte length prefix (TLS's `<0..2^16-1>`).
    @inlinable public mutating func vector16() -> UnsafeRawBufferPointer? {
        let start = offset
        guard let length = u16() else { return nil }
        guard let body = take(Int(length)) else { offset = start; return nil }
        return body
    }

    /// The vector with a two-byte length prefix, or, when it claims more than is left (a message cut short),
    /// everything after the prefix: what was sent, as far as it goes.
    @inlinable public mutating func vector16OrRest() -> UnsafeRawBufferPointer? {
        guard let length = u16() else { return nil }
        return take(Int(length)) ?? rest()
    }
}
