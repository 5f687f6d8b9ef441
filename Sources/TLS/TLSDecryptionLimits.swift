/// Bounds for the decrypting layer. Every limit hit is a warning.
public struct TLSDecryptionLimits: Sendable, Hashable {
    /// Largest record accepted: 2^14 plus 2048 bytes of expansion (RFC 5246 6.2.3); a bigger length field means the
    /// stream is not TLS (or is corrupt), and decryption of that direction stops.
    public var maxRecordLength = 16384 + 2048
    /// Hold records that arrive before their key (live key logs are written while we capture), up to this many
    /// bytes per connection. 0 disables holding (offline reading: the key log is complete).
    public var maxHeldBytesPerConnection = 1 << 20
    /// Held records of all connections together (many connections waiting at once, say for a program that never
    /// logs its keys): past this, the connection whose record would pass it stops waiting, as at its own limit.
    public var maxHeldBytesInAll = 64 << 20
    /// A client's records that arrive before the server's hello (after a HelloRetryRequest, or 0-RTT early data)
    /// wait for it, up to this many bytes per connection, offline too.
    public var maxHeldBytesBeforeServerHello = 1 << 16
    /// Handshake messages longer than this are skipped (certificate chains; we read none of them).
    public var maxHandshakeMessageLength = 1 << 16

    public init() {}

    /// The limits for `keys`: a key log read once already holds every key it ever will, so no record is held back
    /// waiting for one; a followed one may gain the key later.
    public init(for keys: TLSKeySource?) {
        self.init()
        if let keys, !keys.follows { maxHeldBytesPerConnection = 0 }
    }
}
