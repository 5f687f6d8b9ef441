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
    /// Opened by data without a SYN and not announced to the consumer yet: its bytes are held (see
    /// `HalfStream.held`) until a SYN places them and says who is the client, the peer's first segment shows up, a
    /// limit is reached, or `heldSince` is older than the acknowledged-hole delay.
    var isProvisional = false
    var heldSince: Timestamp
    /// Both FINs were seen, or a RST, while bytes below them were still missing: when that began. The connection
    /// waits (up to the acknowledged-hole delay) for late segments to fill the holes before it closes.
    var closingSince: Timestamp?
    /// The close was a RST: the directions end with `.reset`, whenever the holes below it are filled or given up.
    var wasReset = false

    init(key: ConnectionKey, id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        self.state = .open
        self.key = key
        self.id = id
        self.client = client
        self.server = server
        self.lastSeen = time
        self.heldSince = time
    }

    var bufferedBytes: Int { toServer.pendingBytes + toClient.pendingBytes }
    var bufferedChunks: Int { toServer.pending.count + toClient.pending.count }
    /// How a direction that reaches its end (FIN, or the RST's sequence number) ends.
    var endReason: StreamEndReason { wasReset ? .reset : .fin }

    subscript(direction: StreamDirection) -> HalfStream {
        get { direction == .clientToServer ? toServer : toClient }
        _modify {
            if direction == .clientToServer { yield &toServer } else { yield &toClient }
        }
    }

    /// The SYN showed the roles the other way round from the guess: swap the endpoints and the directions' state.
    mutating func swapRoles() {
        swap(&client, &server)
        swap(&toServer, &toClient)
    }

    /// Which way a segment from `source` to `destination` flows. A connection to itself (same endpoint twice)
    /// counts as client to server.
    func direction(from source: Endpoint) -> StreamDirection {
        source == client ? .clientToServer : .serverToClient
    }
}

extension StreamDirection {
    var reversed: StreamDirection { self == .clientToServer ? .serverToClient : .clientToServer }
    public var label: String { self == .clientToServer ? "client→server" : "server→client" }
}
