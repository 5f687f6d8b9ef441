import PacketDecoding

/// Both directions of one TCP connection, plus what is needed to recognise it again.
struct Connection: Sendable {
    enum State { case open, closed, free }

    var state: State
    var key: ConnectionKey
    var id: ConnectionID
    var client: Endpoint
    var server: Endpoint
    var toServer = HalfStream()
    var toClient = HalfStream()
    var lastSeen: Timestamp
    /// A warning about overlaps with different bytes is given once per connection.
    var warnedAboutConflict = false
    /// A warning about RSTs a stack would ignore is given once per connection.
    var warnedAboutIgnoredReset = false

    init(key: ConnectionKey, id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        self.state = .open
        self.key = key
        self.id = id
        self.client = client
        self.server = server
        self.lastSeen = time
    }

    var bufferedBytes: Int { toServer.pendingBytes + toClient.pendingBytes }
    var bufferedChunks: Int { toServer.pending.count + toClient.pending.count }

    subscript(direction: StreamDirection) -> HalfStream {
        get { direction == .clientToServer ? toServer : toClient }
        _modify {
            if direction == .clientToServer { yield &toServer } else { yield &toClient }
        }
    }

    /// Which way a segment from `source` to `destination` flows. A connection to itself (same endpoint twice)
    /// counts as client to server.
    func direction(from source: Endpoint) -> StreamDirection {
        source == client ? .clientToServer : .serverToClient
    }
}

extension StreamDirection {
    var reversed: StreamDirection { self == .clientToServer ? .serverToClient : .clientToServer }
    var label: String { self == .clientToServer ? "client→server" : "server→client" }
}
