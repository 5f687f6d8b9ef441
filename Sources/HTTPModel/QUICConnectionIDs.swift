/// The connection IDs a QUIC connection's long headers carried at its start, as Zeek's quic.log has them: the
/// Destination Connection ID of the client's first Initial (its Initial keys come from it), and the Source
/// Connection ID each side first sent (empty when a side chose a zero-length ID, as Chromium's clients do; nil
/// when no long header from that side was read).
public struct QUICConnectionIDs: Sendable, Hashable {
    public var clientInitialDestination: [UInt8]
    public var clientSource: [UInt8]?
    public var serverSource: [UInt8]?

    public init(clientInitialDestination: [UInt8], clientSource: [UInt8]?, serverSource: [UInt8]?) {
        self.clientInitialDestination = clientInitialDestination
        self.clientSource = clientSource
        self.serverSource = serverSource
    }
}
