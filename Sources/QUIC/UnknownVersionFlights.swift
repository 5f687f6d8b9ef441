import FlowReassembly
import HTTPModel
import PacketDecoding

/// QUIC connections in a version TapKit does not read, found by the invariants every version keeps (RFC 8999: the
/// long header's form bit, version and connection IDs) and named on a line of their own, as Zeek's quic.log names
/// them (`unknown-VERSION`); nothing in them is decoded.
///
/// A client's first flight is a long-header datagram of at least 1200 bytes with the fixed bit set and connection
/// IDs of at most 20 bytes (what every published version does). That alone could be another protocol's datagram, so
/// it is named only when the server answers it: a long header in the same version addressed to the client's Source
/// Connection ID, or a Version Negotiation listing what the server speaks; or when it goes to UDP port 443, QUIC's
/// own. Bounded: at most `limit` address pairs are remembered, the oldest forgotten first.
struct UnknownVersionFlights {
    private struct Flight {
        var id: ConnectionID
        var version: UInt32
        var client: Endpoint
        var server: Endpoint
        var dcid: [UInt8]
        var scid: [UInt8]
        var time: Timestamp
        var named = false
    }

    private var flights: [QUICConnection.AddressPair: Flight] = [:]
    private let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Reads a datagram no QUIC connection TapKit follows took; a flight seen for the first time takes the number
    /// after `lastID` (the decoder's, so connection numbers stay unique).
    mutating func receive(_ payload: UnsafeRawBufferPointer, from source: Endpoint, to destination: Endpoint,
                          at time: Timestamp, lastID: inout UInt64, emit: (QUICEvent) -> Void) {
        guard let packet = PacketHeader.read(payload, at: 0, shortDCIDLength: 0) else { return }
        let answered = QUICConnection.AddressPair(source: destination, destination: source)
        if var flight = flights[answered] {
            guard !flight.named, Array(payload[packet.dcid]) == flight.scid else { return }
            let serverSource: [UInt8]?, offered: [UInt32]?
            switch packet.kind {
            case .unknownVersion where packet.version == flight.version && packet.scid.count <= 20:
                (serverSource, offered) = (Array(payload[packet.scid]), nil)
            case .versionNegotiation:
                (serverSource, offered) = (nil, packet.offeredVersions(in: payload))
            default:
                return
            }
            flight.named = true
            flights[answered] = flight
            emit(.notice(notice(flight, serverSource: serverSource)))
            if let offered { emit(.warning(connection: flight.id, .versionNegotiation(versions: offered), time: time)) }
            return
        }
        let pair = QUICConnection.AddressPair(source: source, destination: destination)
        guard flights[pair] == nil, packet.kind == .unknownVersion, payload.count >= 1200, payload[0] & 0x40 != 0,
              packet.dcid.count <= 20, packet.scid.count <= 20 else { return }
        if flights.count >= limit, let oldest = flights.min(by: { $0.value.time < $1.value.time })?.key {
            flights.removeValue(forKey: oldest)
        }
        lastID += 1
        var flight = Flight(id: ConnectionID(lastID), version: packet.version, client: source, server: destination,
                            dcid: Array(payload[packet.dcid]), scid: Array(payload[packet.scid]), time: time)
        if destination.port == 443 {
            flight.named = true
            emit(.notice(notice(flight, serverSource: nil)))
        }
        flights[pair] = flight
    }

    private func notice(_ flight: Flight, serverSource: [UInt8]?) -> ConnectionNotice {
        ConnectionNotice(connection: flight.id, client: flight.client, server: flight.server,
                         kind: .quic(version: flight.version, serverName: nil, alpn: [], keys: .unknownVersion),
                         time: flight.time,
                         connectionIDs: QUICConnectionIDs(clientInitialDestination: flight.dcid, clientSource: flight.scid,
                                                          serverSource: serverSource))
    }
}
