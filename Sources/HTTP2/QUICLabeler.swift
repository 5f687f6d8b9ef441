import FlowReassembly
import HTTPModel
import PacketDecoding

/// Watches UDP port 443 for QUIC client Initial packets and labels each flow once (`ConnectionNotice.quic`).
/// Bounded: at most `maxFlows` flows are remembered; past it the memory starts over (a flow may then be
/// labelled twice, never missed).
public struct QUICLabeler {
    public var maxFlows = 10_000
    private var labelled: Set<FlowKey> = []
    private var nextID: UInt64 = 1 << 62

    private struct FlowKey: Hashable {
        var client: Endpoint
        var server: Endpoint
    }

    public init() {}

    /// A notice for the first Initial of a flow to port 443, nil for anything else.
    public mutating func inspect(_ datagram: UDPDatagram, at time: Timestamp) -> ConnectionNotice? {
        guard datagram.destination.port == 443, let first = datagram.payload.first, first & 0xc0 == 0xc0 else { return nil }
        let key = FlowKey(client: datagram.source, server: datagram.destination)
        guard !labelled.contains(key) else { return nil }
        guard let label = QUICInitial.label(Array(datagram.payload)) else { return nil }
        if labelled.count >= maxFlows { labelled.removeAll() }
        labelled.insert(key)
        nextID += 1
        return ConnectionNotice(connection: ConnectionID(nextID), client: datagram.source, server: datagram.destination,
                                kind: .quic(version: label.version, serverName: label.serverName, alpn: label.alpn),
                                time: time)
    }
}
