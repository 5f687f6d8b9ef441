import Dispatch
import FlowReassembly
import HTTPModel
import PacketDecoding
import TLS

/// Finds QUIC connections among UDP datagrams on any port and follows each one: a connection starts with a
/// client Initial of a version we read (v1, v2) that opens with the keys its Destination Connection ID gives; its
/// later datagrams are found by address, or, when the client moves to a new address or port (migration, NAT
/// rebinding), by a connection ID either side chose. With a key log, Handshake, 0-RTT and 1-RTT packets are
/// decrypted and streams handed on in order (`QUICEvent`); without one, each connection still gets its line.
///
/// Bounded: `QUICLimits` caps connections, streams and buffered bytes; idle connections are closed.
public struct QUICDecoder {
    public let limits: QUICLimits
    private let keySource: TLSKeySource?
    private var byAddress: [QUICConnection.AddressPair: (connection: QUICConnection, fromClient: Bool)] = [:]
    private var byID: [ConnectionIDKey: (connection: QUICConnection, fromClient: Bool)] = [:]
    /// Lengths of the connection IDs indexed: a short header does not say how long its ID is.
    private var idLengths: Set<Int> = []
    private var connections: [ConnectionID: QUICConnection] = [:]
    private var opener = PacketOpener()
    private var nextID: UInt64 = 1 << 62
    private var lastSweep: Int64 = 0
    /// Connections holding datagrams for keys a followed key log does not have yet, and the key log's generation
    /// they were last tried with.
    private var waiting: Set<ConnectionID> = []
    private var retriedGeneration = 0
    /// Capture time while connections wait: the last datagram's timestamp and the monotonic clock when it came.
    private var lastTime: Timestamp?
    private var lastClock: UInt64 = 0
    /// Packets opened in all (a figure for tests and benchmarks).
    public var packetsOpened: Int { openedByForgotten + connections.values.reduce(0) { $0 + $1.packetsOpened } }
    private var openedByForgotten = 0
    /// Connections in versions TapKit does not read: named, never decoded.
    private var unknownVersions: UnknownVersionFlights

    /// `keySource`: the key log to decrypt with, nil to label connections only.
    public init(keySource: TLSKeySource?, limits: QUICLimits = QUICLimits()) {
        self.keySource = keySource
        self.limits = limits
        unknownVersions = UnknownVersionFlights(limit: limits.maxConnections)
    }

    /// Reads one UDP datagram; events for what it completes go to `emit`.
    public mutating func receive(_ datagram: UDPDatagram, at time: Timestamp, emit: (QUICEvent) -> Void) {
        receive(UnsafeRawBufferPointer(rebasing: datagram.payload.prefix(datagram.payloadLength)),
                from: datagram.source, to: datagram.destination, at: time, emit: emit)
    }

    /// Reads one UDP payload sent from `source` to `destination`.
    public mutating func receive(_ payload: UnsafeRawBufferPointer, from source: Endpoint, to destination: Endpoint,
                                 at time: Timestamp, emit: (QUICEvent) -> Void) {
        guard let first = payload.first, first & 0x40 != 0 || first & 0x80 != 0 else { return }
        if time.seconds - lastSweep >= 10 { sweep(at: time, emit: emit) }
        if !waiting.isEmpty {
            lastTime = time
            lastClock = DispatchTime.now().uptimeNanoseconds
            retryWaiting(rereadNow: false, emit: emit)
            expireWaiting(at: time, emit: emit)
        }
        let pair = QUICConnection.AddressPair(source: source, destination: destination)
        if let (connection, fromClient) = byAddress[pair] {
            // A closed connection's addresses may carry a new one (the client reused its port).
            if connection.closed, fromClient, let next = start(payload, from: source, to: destination, at: time, emit: emit) {
                deliver(payload, to: next, fromClient: true, at: time, emit: emit)
                return
            }
            deliver(payload, to: connection, fromClient: fromClient, at: time, emit: emit)
            return
        }
        if let (connection, fromClient) = lookUpByID(payload) {
            // The same connection from a new address: the client (or server) moved.
            if fromClient { connection.client = source } else { connection.server = source }
            index(connection, pair, fromClient: fromClient)
            index(connection, QUICConnection.AddressPair(source: destination, destination: source),
                  fromClient: !fromClient)
            deliver(payload, to: connection, fromClient: fromClient, at: time, emit: emit)
            return
        }
        guard let connection = start(payload, from: source, to: destination, at: time, emit: emit) else {
            if first & 0x80 != 0 {
                unknownVersions.receive(payload, from: source, to: destination, at: time,
                                        lastID: &nextID, emit: emit)
            }
            return
        }
        deliver(payload, to: connection, fromClient: true, at: time, emit: emit)
    }

    /// Closes every connection still open (the capture ended). Connections closed by CONNECTION_CLOSE are kept until
    /// they go quiet, so the peers' last packets are still read as theirs.
    public mutating func finish(at time: Timestamp, emit: (QUICEvent) -> Void) {
        retryWaiting(rereadNow: true, emit: emit)
        for connection in connections.values.sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            end(connection, at: time, emit: emit)
        }
    }

    /// The capture is quiet: connections waiting for keys are tried again if the followed key log gained lines.
    public mutating func idle(emit: (QUICEvent) -> Void) {
        guard !waiting.isEmpty else { return }
        retryWaiting(rereadNow: false, emit: emit)
        if let lastTime {
            // Capture time goes on while no packet comes.
            let now = QUICConnection.seconds(lastTime) + Double(DispatchTime.now().uptimeNanoseconds &- lastClock) / 1e9
            expireWaiting(at: Timestamp(seconds: Int64(now), nanoseconds: Int32((now - now.rounded(.down)) * 1e9)), emit: emit)
        }
    }

    /// Connections waiting for keys longer than `limits.keyWait` stop waiting.
    private mutating func expireWaiting(at now: Timestamp, emit: (QUICEvent) -> Void) {
        for id in waiting.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let connection = connections[id] else { continue }
            connection.expireIfDue(at: now, opener: &opener, emit: emit)
            indexNewIDs(connection)
        }
    }

    private mutating func retryWaiting(rereadNow: Bool, emit: (QUICEvent) -> Void) {
        guard let keySource, keySource.follows, !waiting.isEmpty else { return }
        if rereadNow { keySource.rereadNow() } else { keySource.rereadIfChanged() }
        guard keySource.generation != retriedGeneration else { return }
        retriedGeneration = keySource.generation
        for id in waiting.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let connection = connections[id] else { continue }
            connection.retryHeld(opener: &opener, emit: emit)
            indexNewIDs(connection)
        }
    }

    /// Closes a connection for good (a wait for keys ends with it) and forgets it.
    private mutating func end(_ connection: QUICConnection, at time: Timestamp, emit: (QUICEvent) -> Void) {
        if connection.waitingForKeys {
            connection.stopWaiting(opener: &opener, emit: emit)
            indexNewIDs(connection)
        }
        connection.close(at: time, emit: emit)
        forget(connection)
    }

    private mutating func deliver(_ payload: UnsafeRawBufferPointer, to connection: QUICConnection, fromClient: Bool,
                                  at time: Timestamp, emit: (QUICEvent) -> Void) {
        connection.receive(payload, fromClient: fromClient, at: time, opener: &opener, emit: emit)
        indexNewIDs(connection)
    }

    /// Indexes the connection IDs the connection learnt, and whether it now waits for keys.
    private mutating func indexNewIDs(_ connection: QUICConnection) {
        // Packets sent *to* an ID come from the other side than the one that chose it.
        for (key, fromClient) in connection.newIDs { indexID(key, connection, fromClient: !fromClient) }
        connection.newIDs.removeAll()
        if connection.waitingForKeys { waiting.insert(connection.id) } else { waiting.remove(connection.id) }
    }

    /// The connection a datagram from an unknown address belongs to, by its Destination Connection ID.
    private func lookUpByID(_ payload: UnsafeRawBufferPointer) -> (QUICConnection, Bool)? {
        if payload[0] & 0x80 != 0 {
            guard payload.count > 6 else { return nil }
            let length = Int(payload[5])
            guard length > 0, payload.count >= 6 + length,
                  let key = ConnectionIDKey(UnsafeRawBufferPointer(rebasing: payload[6..<(6 + length)])) else { return nil }
            return byID[key].map { ($0.connection, $0.fromClient) }
        }
        for length in idLengths.sorted(by: >) where length > 0 && payload.count >= 1 + length {
            if let key = ConnectionIDKey(UnsafeRawBufferPointer(rebasing: payload[1..<(1 + length)])),
               let found = byID[key] { return (found.connection, found.fromClient) }
        }
        return nil
    }

    /// A new connection, when the datagram starts with a client Initial that opens with the keys its Destination
    /// Connection ID gives (RFC 9001 section 5.2). Clients pad Initials to 1200 bytes (RFC 9000 section 14.1), so
    /// shorter datagrams are not tried.
    private mutating func start(_ payload: UnsafeRawBufferPointer, from source: Endpoint, to destination: Endpoint,
                                at time: Timestamp,
                                emit: (QUICEvent) -> Void) -> QUICConnection? {
        guard payload.count >= 1200, payload[0] & 0xc0 == 0xc0,
              let packet = PacketHeader.read(payload, at: 0, shortDCIDLength: 0),
              packet.kind == .long(.initial), packet.dcid.count >= 8,
              let version = QUICVersion(packet.version) else { return nil }
        let dcid = UnsafeRawBufferPointer(rebasing: payload[packet.dcid])
        guard let client = PacketProtection.initial(dcid: dcid, version: version, client: true),
              let server = PacketProtection.initial(dcid: dcid, version: version, client: false),
              let unprotected = opener.unprotect(payload, packet, with: client.header) else { return nil }
        let number = decodePacketNumber(largest: nil, truncated: unprotected.truncatedPacketNumber,
                                        bits: unprotected.packetNumberBits)
        guard opener.open(payload, packet, packetNumber: number, with: client) else { return nil }
        if connections.count >= limits.maxConnections, let oldest = connections.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            end(oldest, at: time, emit: emit)
        }
        nextID += 1
        let connection = QUICConnection(id: ConnectionID(nextID), version: version, client: source,
                                        server: destination, originalDCID: Array(dcid),
                                        initialKeys: (client, server), time: time, limits: limits, keySource: keySource)
        connections[connection.id] = connection
        index(connection, QUICConnection.AddressPair(source: source, destination: destination),
              fromClient: true)
        index(connection, QUICConnection.AddressPair(source: destination, destination: source),
              fromClient: false)
        if let key = ConnectionIDKey(dcid) { indexID(key, connection, fromClient: true) }
        return connection
    }

    private mutating func index(_ connection: QUICConnection, _ pair: QUICConnection.AddressPair, fromClient: Bool) {
        byAddress[pair] = (connection, fromClient)
        connection.addressPairs.append(pair)
    }

    /// `fromClient`: whether packets sent to this ID come from the client.
    private mutating func indexID(_ key: ConnectionIDKey, _ connection: QUICConnection, fromClient: Bool) {
        guard key.count > 0 else { return }
        byID[key] = (connection, fromClient)
        connection.indexedIDs.append(key)
        idLengths.insert(Int(key.count))
    }

    private mutating func forget(_ connection: QUICConnection) {
        connections[connection.id] = nil
        openedByForgotten += connection.packetsOpened
        waiting.remove(connection.id)
        for pair in connection.addressPairs where byAddress[pair]?.connection === connection { byAddress[pair] = nil }
        for key in connection.indexedIDs where byID[key]?.connection === connection { byID[key] = nil }
    }

    /// Closes connections idle for longer than the limit.
    private mutating func sweep(at time: Timestamp, emit: (QUICEvent) -> Void) {
        lastSweep = time.seconds
        let idle = Int64(limits.idleTimeoutSeconds)
        for connection in connections.values.sorted(by: { $0.id.rawValue < $1.id.rawValue })
        where time.seconds - connection.lastSeen.seconds > idle {
            end(connection, at: time, emit: emit)
        }
    }
}
