/// Bounds for the decrypting layer. Every limit hit is a warning.
public struct TLSDecryptionLimits: Sendable, Hashable {
    /// Largest record accepted: 2^14 plus 2048 bytes of expansion (RFC 5246 6.2.3); a bigger length field means the
    /// stream is not TLS (or is corrupt), and decryption of that direction stops.
    public var maxRecordLength = 16384 + 2048
    /// How long records wait for a key a followed key log does not have yet (live: the program writes its secrets
    /// while we capture), from the first record of the connection that waited, in capture time (packet
    /// timestamps; while no packet comes, the clock). The key log is read again as soon as it changes (inotify) and
    /// once more before a connection stops waiting; past the bound, what waits and what follows is decided as having
    /// no key (`keyWaitExpired`), and a key logged later still is named at the end. Default 2 s; `--keylog-wait`.
    /// Zero disables holding (offline reading: the key log is complete).
    public var keyWait: Duration = .seconds(2)
    /// Held records kept in memory per connection; past it they go to `spillDirectory`'s file. Default 4 MiB.
    public var maxHeldBytesInMemoryPerConnection = 4 << 20
    /// Held records kept in memory by all connections together. Default 64 MiB.
    public var maxHeldBytesInMemory = 64 << 20
    /// Where held records past the in-memory bounds go: an unlinked temporary file (mode 0600) made there on first
    /// need, removed with the capture. nil: nothing is spilled, and past the in-memory bounds the connection stops
    /// waiting.
    public var spillDirectory: String?
    /// Held records on disk, all connections together: past it, the connection whose record would pass it stops
    /// waiting. Default 8 GiB (a 2 s wait at 4 GB/s).
    public var maxSpilledBytes = 8 << 30
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
        if let keys, !keys.follows { keyWait = .zero }
    }

    /// `keyWait` in seconds, for words and comparisons with timestamps.
    public var keyWaitSeconds: Double {
        Double(keyWait.components.seconds) + Double(keyWait.components.attoseconds) / 1e18
    }
}
