import HTTPModel
import PacketDecoding

/// Everything `capture --stats` reports, gathered packet by packet (and exchange by exchange for HTTP).
public struct TrafficStatistics: Sendable {
    public private(set) var conversations: ConversationTable
    public private(set) var addresses: AddressEndpointTable
    public private(set) var hierarchy = ProtocolHierarchy()
    public var http: HTTPStatistics
    public let limits: StatisticsLimits
    public private(set) var packets = 0
    public private(set) var bytes = 0
    public private(set) var first: Timestamp?
    public private(set) var last: Timestamp?

    public init(limits: StatisticsLimits = StatisticsLimits()) {
        self.limits = limits
        conversations = ConversationTable(limits: limits)
        addresses = AddressEndpointTable(limits: limits)
        http = HTTPStatistics(limits: limits)
    }

    /// Counts one packet. Returns the index of its TCP conversation, if it is a TCP segment that was tabled.
    @discardableResult
    public mutating func count(_ packet: DecodedPacket) -> Int? {
        let length = packet.originalLength
        packets += 1
        bytes += length
        if first == nil { first = packet.timestamp }
        if last.map({ packet.timestamp > $0 }) ?? true { last = packet.timestamp }
        hierarchy.count(ProtocolPath(packet), frameLength: length)

        // Outer layers first, as a dissector meets them: tunnel IP headers and the UDP of VXLAN/Geneve.
        var outer: (IPAddress, IPAddress)?
        for layer in packet.encapsulation {
            switch layer {
            case .ipv4(let header), .ipv6(let header):
                addresses.count(from: header.source, to: header.destination, frameLength: length)
                outer = (header.source, header.destination)
            case .udp(let header):
                if let (source, destination) = outer {
                    conversations.countUDP(from: Endpoint(address: source, port: header.sourcePort),
                                           to: Endpoint(address: destination, port: header.destinationPort),
                                           frameLength: length, at: packet.timestamp)
                }
            default:
                break
            }
        }
        if let (source, destination) = packet.addresses {
            addresses.count(from: source, to: destination, frameLength: length)
        }
        switch packet.transport {
        case .tcp(let segment):
            return conversations.countTCP(from: segment.source, to: segment.destination, flags: segment.flags,
                                          sequence: segment.sequenceNumber, frameLength: length, at: packet.timestamp)
        case .cutTCP(let header):
            if let fixed = header.fixedTCPHeader {
                return conversations.countTCP(from: header.source, to: header.destination, flags: fixed.flags,
                                              sequence: fixed.sequenceNumber, frameLength: length, at: packet.timestamp)
            }
        case .udp(let datagram):
            conversations.countUDP(from: datagram.source, to: datagram.destination, frameLength: length,
                                   at: packet.timestamp)
        default:
            break
        }
        return nil
    }

    public mutating func add(_ exchange: HTTPExchange) {
        http.add(exchange)
    }
}
