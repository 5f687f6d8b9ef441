import NIOCore
import PacketDecoding

/// Which way a packet goes for the timeline, up (client to server) or down: the side that sent a connection's SYN
/// is its client, as reassembly decides it. Connections whose handshake was not seen (picked up mid-stream, UDP)
/// fall back to the ports: the higher port is the client's (clients use ephemeral ports). Ports alone get a server
/// on an ephemeral port, such as `python3 -m http.server 0`, backwards half the time.
struct TrafficDirections {
    private struct Conversation: Hashable {
        var client: Endpoint
        var server: Endpoint
    }

    private var known = Set<Conversation>()
    /// Oldest first, so the table forgets the oldest handshakes past `limit`.
    private var order = CircularBuffer<Conversation>()
    private let limit: Int

    init(limit: Int) { self.limit = max(limit, 1) }

    /// Direction and wire length of a decoded packet; nil for what is neither TCP nor UDP.
    mutating func traffic(of packet: DecodedPacket) -> (up: Bool, bytes: Int)? {
        let source: Endpoint, destination: Endpoint
        if let tcp = packet.tcp {
            (source, destination) = (tcp.source, tcp.destination)
            if tcp.flags.contains(.syn) && !tcp.flags.contains(.rst) {
                let fromClient = !tcp.flags.contains(.ack)
                learn(fromClient ? Conversation(client: source, server: destination)
                                 : Conversation(client: destination, server: source))
            }
        } else if let udp = packet.udp {
            (source, destination) = (udp.source, udp.destination)
        } else {
            return nil
        }
        let up: Bool
        if known.contains(Conversation(client: source, server: destination)) {
            up = true
        } else if known.contains(Conversation(client: destination, server: source)) {
            up = false
        } else {
            up = source.port > destination.port
        }
        return (up, packet.originalLength)
    }

    private mutating func learn(_ conversation: Conversation) {
        // A reused 4-tuple may change roles: the latest handshake decides.
        known.remove(Conversation(client: conversation.server, server: conversation.client))
        guard known.insert(conversation).inserted else { return }
        order.append(conversation)
        if order.count > limit { known.remove(order.removeFirst()) }
    }
}
