import PacketDecoding

/// One end of traffic as tshark's `-z endpoints,...` counts it: packets and bytes it sent (tx) and received (rx).
public struct TrafficEndpoint: Sendable, Hashable {
    /// An IP address alone (`-z endpoints,ip`) or with a port (`-z endpoints,tcp` / `udp`).
    public var address: IPAddress
    public var port: UInt16?
    public var txFrames = 0
    public var txBytes = 0
    public var rxFrames = 0
    public var rxBytes = 0

    public var frames: Int { txFrames + rxFrames }
    public var bytes: Int { txBytes + rxBytes }

    public init(address: IPAddress, port: UInt16?) {
        self.address = address
        self.port = port
    }
}

/// IP endpoints, counted per IP header (a tunnelled packet counts for its outer and inner addresses, as in tshark).
public struct AddressEndpointTable: Sendable {
    public private(set) var endpoints: [TrafficEndpoint] = []
    private var slots: [IPAddress: Int] = [:]
    public private(set) var packetsNotTabled = 0
    private let maxAddresses: Int

    public init(limits: StatisticsLimits = StatisticsLimits()) {
        maxAddresses = limits.maxAddresses
    }

    public mutating func count(from source: IPAddress, to destination: IPAddress, frameLength: Int) {
        if let s = slot(source) {
            endpoints[s].txFrames += 1
            endpoints[s].txBytes += frameLength
        }
        if let d = slot(destination) {
            endpoints[d].rxFrames += 1
            endpoints[d].rxBytes += frameLength
        }
    }

    private mutating func slot(_ address: IPAddress) -> Int? {
        if let slot = slots[address] { return slot }
        guard endpoints.count < maxAddresses else {
            packetsNotTabled += 1
            return nil
        }
        slots[address] = endpoints.count
        endpoints.append(TrafficEndpoint(address: address, port: nil))
        return endpoints.count - 1
    }
}

extension Array where Element == Conversation {
    /// The `address:port` endpoints of these conversations, in order of first appearance (`-z endpoints,tcp`).
    public func endpoints() -> [TrafficEndpoint] {
        var order: [Endpoint: Int] = [:]
        var result: [TrafficEndpoint] = []
        func slot(_ endpoint: Endpoint) -> Int {
            if let slot = order[endpoint] { return slot }
            order[endpoint] = result.count
            result.append(TrafficEndpoint(address: endpoint.address, port: endpoint.port))
            return result.count - 1
        }
        for conversation in self {
            let a = slot(conversation.a), b = slot(conversation.b)
            result[a].txFrames += conversation.framesAToB
            result[a].txBytes += conversation.bytesAToB
            result[a].rxFrames += conversation.framesBToA
            result[a].rxBytes += conversation.bytesBToA
            result[b].txFrames += conversation.framesBToA
            result[b].txBytes += conversation.bytesBToA
            result[b].rxFrames += conversation.framesAToB
            result[b].rxBytes += conversation.bytesAToB
        }
        return result
    }
}
