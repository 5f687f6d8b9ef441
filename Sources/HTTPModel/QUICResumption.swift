/// Whether a QUIC connection's TLS handshake resumed a session and carried 0-RTT, each as the message that says it
/// was read: the client's offers from its ClientHello and the server's acceptance of a pre-shared key from its
/// ServerHello (both in Initial packets, readable without a key log), the server's acceptance of early data from its
/// EncryptedExtensions (readable only with the Handshake keys). nil: that message was not read, so it is not known.
public struct QUICResumption: Sendable, Hashable {
    /// The ClientHello's pre_shared_key: the client offered a session to resume.
    public var offered: Bool?
    /// The ServerHello's pre_shared_key: the server accepted the session (an abbreviated handshake).
    public var resumed: Bool?
    /// The ClientHello's early_data: the client may send 0-RTT packets.
    public var earlyDataOffered: Bool?
    /// The EncryptedExtensions' early_data: the server accepted the 0-RTT data.
    public var earlyDataAccepted: Bool?

    public init(offered: Bool?, resumed: Bool?, earlyDataOffered: Bool?, earlyDataAccepted: Bool?) {
        self.offered = offered
        self.resumed = resumed
        self.earlyDataOffered = earlyDataOffered
        self.earlyDataAccepted = earlyDataAccepted
    }
}
