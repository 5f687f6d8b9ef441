/// A TLS record's header (RFC 8446 section 5.1, RFC 5246 section 6.2): content type, legacy version, length.
public struct TLSRecordHeader: Sendable, Hashable {
    public static let size = 5

    public var type: UInt8
    public var version: UInt16
    /// Bytes of the fragment that follows the header.
    public var length: Int

    /// Content types (RFC 8446 section 5.1; heartbeat from RFC 6520).
    public static let changeCipherSpec: UInt8 = 20, alert: UInt8 = 21, handshake: UInt8 = 22
    public static let applicationData: UInt8 = 23, heartbeat: UInt8 = 24

    public init(type: UInt8, version: UInt16, length: Int) {
        self.type = type
        self.version = version
        self.length = length
    }

    /// Reads the header at the cursor; nil (nothing read) when fewer than `size` bytes are left.
    @inlinable public init?(_ cursor: inout ByteCursor) {
        guard cursor.remaining >= Self.size, let type = cursor.u8(), let version = cursor.u16(),
              let length = cursor.u16() else { return nil }
        self.init(type: type, version: version, length: Int(length))
    }

    /// A content type TLS defines and a 3.x version: what a record stream is made of. A stream whose next header
    /// is not one has lost its record boundaries or was never TLS.
    public var isPlausible: Bool { (Self.changeCipherSpec...Self.heartbeat).contains(type) && version >> 8 == 3 }

    /// Whether a stream's first bytes look like TLS: a handshake record (type 22) of major version 3. nil when
    /// there are too few bytes to tell (none, or only the type byte, 22). The one place this is decided: the HTTP
    /// decoder (to label a connection), CONNECT tunnels (to label what they carry) and decryption (to decide
    /// whether to read records at all) ask here.
    public static func startsTLS<Bytes: Collection>(_ bytes: Bytes) -> Bool? where Bytes.Element == UInt8 {
        guard let first = bytes.first else { return nil }
        guard first == handshake else { return false }
        let rest = bytes.dropFirst()
        guard let second = rest.first else { return nil }
        return second == 0x03
    }
}
