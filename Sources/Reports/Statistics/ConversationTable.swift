import PacketDecoding

/// One TCP or UDP conversation as tshark's `-z conv,tcp` / `-z conv,udp` counts it: `a` sent the first packet
/// seen, frames and bytes (whole frames, as on the wire) are counted each way, times are first and last packet.
public struct Conversation: Sendable, Hashable {
    public enum Transport: String, Sendable, Hashable {
        case tcp
        case udp
    }

    public var transport: Transport
    /// Position among this transport's conversations in order of first packet, from 0: the same number as
    /// Wireshark's `tcp.stream` / `udp.stream`, and what `--follow` takes.
    public var index: Int
    /// The sender of the first packet seen.
    public var a: Endpoint
    public var b: Endpoint
    public var framesAToB = 0
    public var bytesAToB = 0
    public var framesBToA = 0
    public var bytesBToA = 0
    public var first: Timestamp
    public var last: Timestamp
    /// The sequence number of each side's SYN, when seen: a SYN with another number starts a new conversation.
    var synSequenceA: UInt32?
    var synSequenceB: UInt32?

    public var frames: Int { framesAToB + framesBToA }
    public var bytes: Int { bytesAToB + bytesBToA }
    public var duration: Double { max(0, last.seconds(since: first)) }

    /// Whether this conversation joins `x` and `y`, in either order.
    public func joins(_ x: Endpoint, _ y: Endpoint) -> Bool { (a == x && b == y) || (a == y && b == x) }
}

/// The two ends of a conversation in a fixed order, so both directions find the same entry.
struct ConversationKey: Hashable {
    var lower: Endpoint
    var upper: Endpoint

    init(_ x: Endpoint, _ y: Endpoint) {
        if Self.precedes(y, x) { lower = y; upper = x } else { lower = x; upper = y }
    }

    private static func precedes(_ x: Endpoint, _ y: Endpoint) -> Bool {
        switch (x.address, y.address) {
        case (.v4(let p), .v4(let q)): return p != q ? p < q : x.port < y.port
        case (.v4, .v6): return true
        case (.v6, .v4): return false
        case (.v6(let ph, let pl), .v6(let qh, let ql)):
            if ph != qh { return ph < qh }
            if pl != ql { return pl < ql }
            return x.port < y.port
        }
    }
}

/// Bounds for the statistics tables. Past a bound, packets are still counted in the totals and the protocol
/// hierarchy, and the report says how many were left out of the tables.
public struct StatisticsLimits: Sendable, Hashable {
    /// TCP plus UDP conversations kept (about 150 bytes each, so the default is at most ~150 MB).
    public var maxConversations = 1_000_000
    /// IP addresses kept in the endpoint table.
    public var maxAddresses = 1_000_000
    /// HTTP hosts with a row of their own; exchanges of later hosts go to one "(other hosts)" row.
    public var maxHTTPHosts = 1_000
    /// Latency samples kept per row; percentiles are over the samples kept (the first ones).
    public var maxLatencySamples = 1_000_000
    /// Largest responses listed.
    public var largestResponses = 10

    public init() {}
}

/// TCP and UDP conversations in order of first packet, counted the way tshark counts them.
public struct ConversationTable: Sendable {
    public private(set) var tcp: [Conversation] = []
    public private(set) var udp: [Conversation] = []
    /// Packets of conversations that did not fit under `maxConversations`.
    public private(set) var packetsNotTabled = 0
    private var tcpSlots: [ConversationKey: Int] = [:]
    private var udpSlots: [ConversationKey: Int] = [:]
    private let maxConversations: Int

    public init(limits: StatisticsLimits = StatisticsLimits()) {
        maxConversations = limits.maxConversations
    }

    /// Counts one TCP segment; returns the conversation's index (nil when the table is full).
    @discardableResult
    public mutating func countTCP(from source: Endpoint, to destination: Endpoint, flags: TCPFlags, sequence: UInt32,
                                  frameLength: Int, at time: Timestamp) -> Int? {
        let key = ConversationKey(source, destination)
        if let slot = tcpSlots[key] {
            if flags.contains(.syn) && !flags.contains(.ack) {
                // A new SYN on a 4-tuple already used: a new connection when its sequence number differs from
                // the one this side opened with before (a retransmitted SYN keeps the same one).
                let fromA = tcp[slot].a == source
                if let earlier = fromA ? tcp[slot].synSequenceA : tcp[slot].synSequenceB, earlier != sequence {
                    return openTCP(key, source, destination, sequence: sequence, frameLength: frameLength, at: time)
                }
                if fromA { tcp[slot].synSequenceA = sequence } else { tcp[slot].synSequenceB = sequence }
            }
            Self.add(&tcp[slot], from: source, frameLength: frameLength, at: time)
            return slot
        }
        return openTCP(key, source, destination, sequence: flags.contains(.syn) && !flags.contains(.ack) ? sequence : nil,
                       frameLength: frameLength, at: time)
    }

    private mutating func openTCP(_ key: ConversationKey, _ source: Endpoint, _ destination: Endpoint, sequence: UInt32?,
                                  frameLength: Int, at time: Timestamp) -> Int? {
        guard tcp.count + udp.count < maxConversations else {
            packetsNotTabled += 1
            return nil
        }
        var conversation = Conversation(transport: .tcp, index: tcp.count, a: source, b: destination, first: time, last: time)
        conversation.synSequenceA = sequence
        Self.add(&conversation, from: source, frameLength: frameLength, at: time)
        tcpSlots[key] = tcp.count
        tcp.append(conversation)
        return conversation.index
    }

    /// Counts one UDP datagram; returns the conversation's index (nil when the table is full).
    @discardableResult
    public mutating func countUDP(from source: Endpoint, to destination: Endpoint, frameLength: Int,
                                  at time: Timestamp) -> Int? {
        let key = ConversationKey(source, destination)
        if let slot = udpSlots[key] {
            Self.add(&udp[slot], from: source, frameLength: frameLength, at: time)
            return slot
        }
        guard tcp.count + udp.count < maxConversations else {
            packetsNotTabled += 1
            return nil
        }
        var conversation = Conversation(transport: .udp, index: udp.count, a: source, b: destination, first: time, last: time)
        Self.add(&conversation, from: source, frameLength: frameLength, at: time)
        udpSlots[key] = udp.count
        udp.append(conversation)
        return conversation.index
    }

    private static func add(_ conversation: inout Conversation, from source: Endpoint, frameLength: Int, at time: Timestamp) {
        if conversation.a == source {
            conversation.framesAToB += 1
            conversation.bytesAToB += frameLength
        } else {
            conversation.framesBToA += 1
            conversation.bytesBToA += frameLength
        }
        if time < conversation.first { conversation.first = time }
        if time > conversation.last { conversation.last = time }
    }
}
