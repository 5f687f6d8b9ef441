import FlowReassembly
import PacketDecoding

/// What the TLS line shows about one connection: from the handshake, and whether we could decrypt it.
public struct TLSSessionFacts: Sendable, Hashable {
    public enum Decryption: Sendable, Hashable {
        /// Keys were found; records are being decrypted.
        case decrypted
        /// The key log has no secrets for this session's client random.
        case noKeyLogged
        /// A followed key log had no secrets for the session within the bound (seconds) the records waited; it
        /// may have come later (then a warning says so at the end).
        case noKeyWithin(seconds: Double)
        /// The session uses a cipher suite or version we cannot decrypt (named in the text).
        case unsupported(String)
    }

    public var connection: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var time: Timestamp
    /// The negotiated version (0x0303, 0x0304), nil when no ServerHello was seen.
    public var version: UInt16?
    public var cipherSuite: UInt16?
    public var serverName: String?
    /// Protocols the client offered (ClientHello ALPN).
    public var offeredALPN: [String]
    /// The protocol the server chose (ServerHello for TLS 1.2, EncryptedExtensions for TLS 1.3), when seen.
    public var alpn: String?
    /// An abbreviated TLS 1.2 handshake or a TLS 1.3 PSK handshake.
    public var resumed: Bool
    public var helloRetryRequest: Bool
    /// The client offered 0-RTT early data.
    public var earlyDataOffered: Bool
    public var decryption: Decryption

    public init(connection: ConnectionID, client: Endpoint, server: Endpoint, time: Timestamp, version: UInt16?,
                cipherSuite: UInt16?, serverName: String?, offeredALPN: [String], alpn: String?, resumed: Bool,
                helloRetryRequest: Bool, earlyDataOffered: Bool, decryption: Decryption) {
        self.connection = connection
        self.client = client
        self.server = server
        self.time = time
        self.version = version
        self.cipherSuite = cipherSuite
        self.serverName = serverName
        self.offeredALPN = offeredALPN
        self.alpn = alpn
        self.resumed = resumed
        self.helloRetryRequest = helloRetryRequest
        self.earlyDataOffered = earlyDataOffered
        self.decryption = decryption
    }
}
