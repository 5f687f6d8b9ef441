/// The QUIC versions whose packets TapKit reads: v1 (RFC 9000, 9001) and v2 (RFC 9369). They differ only in what
/// an observer needs here: the Initial salt, the HKDF label prefix and the long-header type bits.
public struct QUICVersion: Sendable, Hashable {
    public let rawValue: UInt32
    /// RFC 9001 section 5.2 / RFC 9369 section 3.3.1: the salt of the Initial secrets.
    let initialSalt: [UInt8]
    /// "quic " for v1, "quicv2 " for v2 (RFC 9369 section 3.3.2): the start of the key, iv, hp and ku labels.
    let labelPrefix: String
    /// RFC 9001 section 5.8 / RFC 9369 section 3.3.3: the fixed AES-128-GCM key and nonce of the Retry integrity tag.
    let retryKey: [UInt8]
    let retryNonce: [UInt8]

    public static let v1 = QUICVersion(
        rawValue: 0x0000_0001,
        initialSalt: [0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad,
                      0xcc, 0xbb, 0x7f, 0x0a],
        labelPrefix: "quic ",
        retryKey: [0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e],
        retryNonce: [0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb])
    public static let v2 = QUICVersion(
        rawValue: 0x6b33_43cf,
        initialSalt: [0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb,
                      0xf9, 0xbd, 0x2e, 0xd9],
        labelPrefix: "quicv2 ",
        retryKey: [0x8f, 0xb4, 0xb0, 0x1b, 0x56, 0xac, 0x48, 0xe2, 0x60, 0xfb, 0xcb, 0xce, 0xad, 0x7c, 0xcc, 0x92],
        retryNonce: [0xd8, 0x69, 0x69, 0xbc, 0x2d, 0x7c, 0x6d, 0x99, 0x90, 0xef, 0xb0, 0x4a])

    /// The version a long header names, when it is one of ours.
    public init?(_ rawValue: UInt32) {
        switch rawValue {
        case Self.v1.rawValue: self = .v1
        case Self.v2.rawValue: self = .v2
        default: return nil
        }
    }

    private init(rawValue: UInt32, initialSalt: [UInt8], labelPrefix: String, retryKey: [UInt8], retryNonce: [UInt8]) {
        self.rawValue = rawValue
        self.initialSalt = initialSalt
        self.labelPrefix = labelPrefix
        self.retryKey = retryKey
        self.retryNonce = retryNonce
    }

    /// The packet type of a long header's two type bits (RFC 9000 section 17.2; RFC 9369 section 3.2 rotates them).
    func longPacketType(_ bits: UInt8) -> LongPacketType {
        let v1Bits = self == .v2 ? (bits &+ 3) & 3 : bits  // v2: Retry 0, Initial 1, 0-RTT 2, Handshake 3
        switch v1Bits {
        case 0: return .initial
        case 1: return .zeroRTT
        case 2: return .handshake
        default: return .retry
        }
    }

    public static func == (lhs: QUICVersion, rhs: QUICVersion) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

/// Long-header packet types (RFC 9000 section 17.2), as v1 numbers them.
public enum LongPacketType: Sendable, Hashable {
    case initial, zeroRTT, handshake, retry
}
