// Longer than 600 lines: a connection's keys, packets, frames, streams and its wait for keys (issue 37) share one
// per-connection state; the wait for keys is the piece to split out when next changed.
import FlowReassembly
import HTTPModel
import PacketDecoding
import TLS
import TLSWire

/// One QUIC connection as an observer follows it: the keys of each level and direction, packet numbers, the TLS
/// handshake read from CRYPTO frames, and every stream's bytes put in order. It sees both directions; which one a
/// packet travels is the decoder's to say (`fromClient`), since addresses change when a client migrates.
final class QUICConnection {
    /// Encryption levels (RFC 9001 section 4.1). 0-RTT and 1-RTT share the application packet number space.
    enum Level: Int { case initial = 0, handshake = 1, application = 2 }

    let id: ConnectionID
    let version: QUICVersion
    var client: Endpoint
    var server: Endpoint
    let start: Timestamp
    var lastSeen: Timestamp
    /// Connection IDs each side chose (its Source Connection IDs and NEW_CONNECTION_ID frames): the other side
    /// sends to them. `newIDs` holds those the decoder has not indexed yet.
    var clientIDLength = 0, serverIDLength = 0
    var newIDs: [(key: ConnectionIDKey, fromClient: Bool)] = []
    /// What the decoder indexed this connection by, to forget it by.
    var addressPairs: [AddressPair] = []
    var indexedIDs: [ConnectionIDKey] = []

    /// The Destination Connection ID of the client's first Initial: its Initial keys, and a Retry's tag, come from it.
    private let originalDCID: [UInt8]
    /// The connection ID a Retry chose: the client's next Initial is keyed by it.
    private var retryID: [UInt8]?
    /// The Source Connection ID of each side's first long header (a Retry's aside), for the line.
    private var firstSource: (client: [UInt8]?, server: [UInt8]?)
    private var initialKeys: (client: PacketProtection, server: PacketProtection)
    private var handshakeKeys: (client: PacketProtection?, server: PacketProtection?) = (nil, nil)
    private var earlyKeys: PacketProtection?
    private var applicationKeys: (client: KeyPhases?, server: KeyPhases?) = (nil, nil)
    /// Largest packet number opened, per space and direction ([space][fromClient ? 0 : 1]).
    private var largest: [[UInt64?]] = Array(repeating: [nil, nil], count: 3)
    private var crypto: [[CryptoStream]]
    private var streams: [StreamKey: OffsetReassembly] = [:]
    private var endedStreams: Set<StreamKey> = []
    private var buffered = 0

    private(set) var clientHello: ClientHelloFacts?
    private var serverHello: ServerHelloFacts?
    private var serverALPN: String?
    /// The server's quic_transport_parameters, from its EncryptedExtensions.
    private var serverTransportParameters: [UInt8]?
    /// Whether the EncryptedExtensions accepted 0-RTT; nil until it is read.
    private var serverAcceptedEarlyData: Bool?
    private var secrets: TLSKeyLog.Secrets?
    private var keysLooked = false
    private var noticeSent = false
    /// Datagrams held for keys a followed key log does not have yet, in the order they came.
    private var held: [(bytes: [UInt8], fromClient: Bool, time: Timestamp)] = []
    private var heldBytes = 0
    /// When the first datagram still held was (capture time).
    private var heldSince: Timestamp?
    /// Held datagrams are being read again: those still without keys are held again, in order.
    private var replaying = false
    private(set) var waitingForKeys = false
    private var stoppedWaiting = false
    private var openedSent = false
    private(set) var closed = false
    /// A transport CONNECTION_CLOSE with APPLICATION_ERROR in an Initial or Handshake packet: RFC 9000 section
    /// 10.2.3's stand-in for an application close, whose own code only a 1-RTT packet may carry. It waits for the
    /// rest of its datagram, where the 1-RTT close (the real one) usually follows.
    private var standInClose: (fromClient: Bool, reason: String, time: Timestamp)?
    /// Packets that did not open, per level: Initial, Handshake, 1-RTT, 0-RTT.
    private var undecryptable = [0, 0, 0, 0]
    private var warned: Set<String> = []
    var packetsOpened = 0

    private let limits: QUICLimits
    private let keySource: TLSKeySource?

    struct StreamKey: Hashable {
        var stream: UInt64
        var fromClient: Bool
    }

    struct AddressPair: Hashable {
        var source: Endpoint
        var destination: Endpoint
    }

    /// A direction's 1-RTT keys across key updates (RFC 9001 section 6): the current phase, and the keys before it
    /// for packets reordered across an update.
    struct KeyPhases {
        var current: PacketProtection
        var phase = false
        var previous: PacketProtection?
        var next: PacketProtection?
    }

    struct CryptoStream {
        var reassembly = OffsetReassembly()
        var messages: HandshakeAssembler
    }

    init(id: ConnectionID, version: QUICVersion, client: Endpoint, server: Endpoint, originalDCID: [UInt8],
         initialKeys: (client: PacketProtection, server: PacketProtection), time: Timestamp, limits: QUICLimits,
         keySource: TLSKeySource?) {
        self.id = id
        self.originalDCID = originalDCID
        self.version = version
        self.client = client
        self.server = server
        self.initialKeys = initialKeys
        start = time
        lastSeen = time
        self.limits = limits
        self.keySource = keySource
        let stream = CryptoStream(messages: HandshakeAssembler(maxMessageLength: limits.maxHandshakeMessage))
        crypto = Array(repeating: [stream, stream], count: 3)
    }

    // MARK: Packets

    /// Reads every packet of a datagram (coalesced packets one after another).
    func receive(_ datagram: UnsafeRawBufferPointer, fromClient: Bool, at time: Timestamp, opener: inout PacketOpener,
                 emit: (QUICEvent) -> Void) {
        lastSeen = time
        defer {
            if let close = standInClose {
                standInClose = nil
                connectionClosed(code: QUICWarning.applicationErrorCode, application: false, reason: close.reason,
                                 fromClient: close.fromClient, at: close.time, emit: emit)
            }
        }
        if waitingForKeys {  // behind a datagram held for its keys: held too, in order
            hold(datagram, fromClient: fromClient, at: time, emit: emit, opener: &opener)
            return
        }
        var start = 0
        while start < datagram.count {
            let idLength = fromClient ? serverIDLength : clientIDLength
            guard let packet = PacketHeader.read(datagram, at: start, shortDCIDLength: idLength) else { return }
            switch packet.kind {
            case .versionNegotiation:
                warnOnce(.versionNegotiation(versions: packet.offeredVersions(in: datagram)), at: time, emit)
                return
            case .unknownVersion:
                return
            case .long(.retry):
                // A Retry the client would discard (its tag does not verify against the first Initial's connection
                // ID: forged, damaged, or for another connection) changes nothing; it is reported.
                guard RetryIntegrity.verifies(UnsafeRawBufferPointer(rebasing: datagram[packet.start...]),
                                              originalDCID: originalDCID, version: version) else {
                    warnOnce(.retryIntegrityFailed, at: time, emit)
                    return
                }
                // The client's next Initial goes to the connection ID the server chose here, keyed by it.
                if !fromClient {
                    learnID(UnsafeRawBufferPointer(rebasing: datagram[packet.scid]), fromClient: false)
                    retryID = Array(datagram[packet.scid])
                    // The client starts its handshake again (a new ClientHello may follow, with a new random).
                    crypto[Level.initial.rawValue][0] = CryptoStream(messages: HandshakeAssembler(maxMessageLength: limits.maxHandshakeMessage))
                    clientHello = nil
                }
                warnOnce(.retry, at: time, emit)
                return
            case .long(let type):
                if packet.scid.count > 0 || type == .initial {
                    learnID(UnsafeRawBufferPointer(rebasing: datagram[packet.scid]), fromClient: fromClient)
                }
                if fromClient, firstSource.client == nil { firstSource.client = Array(datagram[packet.scid]) }
                if !fromClient, firstSource.server == nil { firstSource.server = Array(datagram[packet.scid]) }
                let level: Level = type == .initial ? .initial : type == .handshake ? .handshake : .application
                guard readPacket(datagram, packet, level: level, early: type == .zeroRTT, fromClient: fromClient, at: time,
                                 opener: &opener, emit: emit) else {
                    hold(UnsafeRawBufferPointer(rebasing: datagram[packet.start...]), fromClient: fromClient, at: time,
                         emit: emit, opener: &opener)
                    return
                }
            case .short:
                guard readPacket(datagram, packet, level: .application, early: false, fromClient: fromClient, at: time,
                                 opener: &opener, emit: emit) else {
                    hold(UnsafeRawBufferPointer(rebasing: datagram[packet.start...]), fromClient: fromClient, at: time,
                         emit: emit, opener: &opener)
                    return
                }
            }
            start = packet.end
        }
    }

    /// Opens one packet and reads its frames. False when its keys are not logged yet but may be (a followed key log):
    /// the caller holds the rest of the datagram.
    private func readPacket(_ datagram: UnsafeRawBufferPointer, _ packet: PacketHeader, level: Level, early: Bool,
                            fromClient: Bool, at time: Timestamp, opener: inout PacketOpener,
                            emit: (QUICEvent) -> Void) -> Bool {
        if level == .initial, fromClient, let retryID, datagram[packet.dcid].elementsEqual(retryID) {
            // After a Retry the client keys its Initials by the connection ID the Retry gave it (RFC 9001 5.2).
            let dcid = UnsafeRawBufferPointer(rebasing: datagram[packet.dcid])
            if let client = PacketProtection.initial(dcid: dcid, version: version, client: true),
               let server = PacketProtection.initial(dcid: dcid, version: version, client: false) {
                initialKeys = (client, server)
            }
            self.retryID = nil
        }
        guard let keys = protection(level: level, early: early, fromClient: fromClient, emit: emit, at: time) else {
            if mayWait && level != .initial { return false }
            undecryptable[early ? 3 : level.rawValue] += 1
            return true
        }
        guard let unprotected = opener.unprotect(datagram, packet, with: keys.header) else {
            undecryptable[early ? 3 : level.rawValue] += 1
            return true
        }
        let direction = fromClient ? 0 : 1
        let number = decodePacketNumber(largest: largest[level.rawValue][direction],
                                        truncated: unprotected.truncatedPacketNumber, bits: unprotected.packetNumberBits)
        var opened = false
        if packet.kind == .short {
            opened = openOneRTT(datagram, packet, number: number, phase: unprotected.keyPhase, fromClient: fromClient,
                                opener: &opener)
        } else {
            opened = opener.open(datagram, packet, packetNumber: number, with: keys)
        }
        guard opened else {
            undecryptable[early ? 3 : level.rawValue] += 1
            return true
        }
        packetsOpened += 1
        if number > largest[level.rawValue][direction] ?? 0 || largest[level.rawValue][direction] == nil {
            largest[level.rawValue][direction] = number
        }
        // After CONNECTION_CLOSE the peers only close and acknowledge: packets are still opened (and counted).
        guard !closed else { return true }
        let plaintext = opener.plaintext
        plaintext.withUnsafeBytes { frames($0, level: level, fromClient: fromClient, at: time, emit: emit) }
        return true
    }

    /// A short-header packet with the keys of its key phase: the current ones, or across an update the next ones
    /// (which then become current) or the previous ones (a packet sent before the update, arriving late).
    private func openOneRTT(_ datagram: UnsafeRawBufferPointer, _ packet: PacketHeader, number: UInt64, phase: Bool,
                            fromClient: Bool, opener: inout PacketOpener) -> Bool {
        guard var phases = fromClient ? applicationKeys.client : applicationKeys.server else { return false }
        defer { if fromClient { applicationKeys.client = phases } else { applicationKeys.server = phases } }
        if phase == phases.phase { return opener.open(datagram, packet, packetNumber: number, with: phases.current) }
        if let previous = phases.previous, opener.open(datagram, packet, packetNumber: number, with: previous) {
            return true
        }
        if phases.next == nil { phases.next = phases.current.next() }
        guard let next = phases.next, opener.open(datagram, packet, packetNumber: number, with: next) else { return false }
        phases = KeyPhases(current: next, phase: phase, previous: phases.current, next: nil)
        return true
    }

    /// The keys that remove header protection for a level and direction, looked up in the key log on first need.
    private func protection(level: Level, early: Bool, fromClient: Bool, emit: (QUICEvent) -> Void,
                            at time: Timestamp) -> PacketProtection? {
        switch level {
        case .initial:
            return fromClient ? initialKeys.client : initialKeys.server
        case .handshake:
            if (fromClient ? handshakeKeys.client : handshakeKeys.server) == nil {
                lookUpKeys(emit: emit, at: time) { fromClient ? $0.clientHandshakeTrafficSecret != nil : $0.serverHandshakeTrafficSecret != nil }
            }
            return fromClient ? handshakeKeys.client : handshakeKeys.server
        case .application where early:
            if earlyKeys == nil, fromClient { lookUpKeys(emit: emit, at: time) { $0.clientEarlyTrafficSecret != nil } }
            return fromClient ? earlyKeys : nil
        case .application:
            if (fromClient ? applicationKeys.client : applicationKeys.server) == nil {
                lookUpKeys(emit: emit, at: time) { fromClient ? $0.clientTrafficSecret0 != nil : $0.serverTrafficSecret0 != nil }
            }
            return fromClient ? applicationKeys.client?.current : applicationKeys.server?.current
        }
    }

    /// Finds the connection's secrets by its ClientHello random, once the cipher suite is known (ServerHello), and
    /// derives the keys of every level they hold and not derived yet. A followed key log is read again (when due)
    /// while the secret `need` asks for is missing.
    private func lookUpKeys(emit: (QUICEvent) -> Void, at time: Timestamp,
                            need: (TLSKeyLog.Secrets) -> Bool = { _ in true }) {
        guard let keySource, let random = clientHello.flatMap({ ClientRandom($0.random) }) else {
            // Without a key log the line waits for the ServerHello (or the end), which says whether it resumed.
            if keySource == nil ? serverHello != nil : clientHello != nil { sendNoticeIfReady(emit, force: true) }
            return
        }
        let found = keySource.secrets(for: random, need: need)
        keysLooked = true
        guard let found else {
            sendNoticeIfReady(emit, force: true)
            return
        }
        let suiteID = serverHello?.cipherSuite ?? clientHello?.cipherSuites.first { $0 >> 8 == 0x13 } ?? 0x1301
        guard let suite = PacketProtection.Suite(id: suiteID) else { return }
        func keys(_ secret: [UInt8]?) -> PacketProtection? {
            secret.flatMap { PacketProtection(secret: $0, suite: suite, version: version) }
        }
        if let early = found.clientEarlyTrafficSecret, earlyKeys == nil { earlyKeys = keys(early) }
        // 0-RTT may come before the ServerHello names the suite; the other levels wait for it.
        guard serverHello != nil else { return }
        secrets = found
        if handshakeKeys.client == nil { handshakeKeys.client = keys(found.clientHandshakeTrafficSecret) }
        if handshakeKeys.server == nil { handshakeKeys.server = keys(found.serverHandshakeTrafficSecret) }
        if applicationKeys.client == nil { applicationKeys.client = keys(found.clientTrafficSecret0).map { KeyPhases(current: $0) } }
        if applicationKeys.server == nil { applicationKeys.server = keys(found.serverTrafficSecret0).map { KeyPhases(current: $0) } }
    }

    // MARK: Waiting for keys (a followed key log)

    /// Whether a packet whose keys are missing may wait for them: the key log is followed (live: the program writes
    /// its secrets while we read), the handshake names the session, and this connection has not stopped waiting.
    private var mayWait: Bool {
        keySource?.follows == true && limits.keyWait > .zero && clientHello != nil && !stoppedWaiting
    }

    /// Keeps a copy of (the rest of) a datagram until the keys come or the wait ends; past the limit, stops waiting.
    private func hold(_ bytes: UnsafeRawBufferPointer, fromClient: Bool, at time: Timestamp, emit: (QUICEvent) -> Void,
                      opener: inout PacketOpener) {
        waitingForKeys = true
        held.append((Array(bytes), fromClient, time))
        heldBytes += bytes.count
        if heldSince == nil { heldSince = time }
        guard !replaying else { return }  // the wait is judged once the replay is over
        if heldBytes > limits.maxHeldBytesPerConnection {
            warnOnce(.keyWaitOverLimit(bytes: limits.maxHeldBytesPerConnection), at: time, emit)
            stopWaiting(opener: &opener, emit: emit)
        } else if let since = heldSince, Self.seconds(time) - Self.seconds(since) > keyWaitSeconds {
            expire(at: time, opener: &opener, emit: emit)
        }
    }

    static func seconds(_ time: Timestamp) -> Double { Double(time.seconds) + Double(time.nanoseconds) / 1e9 }

    private var keyWaitSeconds: Double {
        Double(limits.keyWait.components.seconds) + Double(limits.keyWait.components.attoseconds) / 1e18
    }

    /// Past the bound in time (`now`, capture time): the key log is read once more, then what waits is read with
    /// the keys there are.
    func expireIfDue(at now: Timestamp, opener: inout PacketOpener, emit: (QUICEvent) -> Void) {
        guard waitingForKeys, let since = heldSince, Self.seconds(now) - Self.seconds(since) > keyWaitSeconds else { return }
        expire(at: now, opener: &opener, emit: emit)
    }

    private func expire(at time: Timestamp, opener: inout PacketOpener, emit: (QUICEvent) -> Void) {
        keySource?.rereadNow()
        retryHeld(opener: &opener, emit: emit)
        guard waitingForKeys else { return }
        warnOnce(.keyWaitExpired(seconds: keyWaitSeconds), at: time, emit)
        stopWaiting(opener: &opener, emit: emit)
    }

    /// Reads the held datagrams again, in order (the key log gained lines): those whose keys came are opened, the
    /// rest are held again.
    func retryHeld(opener: inout PacketOpener, emit: (QUICEvent) -> Void) {
        let queue = held
        held = []
        heldBytes = 0
        heldSince = nil
        waitingForKeys = false
        replaying = true
        defer { replaying = false }
        for datagram in queue {
            datagram.bytes.withUnsafeBytes {
                receive($0, fromClient: datagram.fromClient, at: datagram.time, opener: &opener, emit: emit)
            }
        }
    }

    /// The wait is over (the capture ended, or too much is held): the held datagrams are read with what keys there
    /// are, and what cannot be opened is counted.
    func stopWaiting(opener: inout PacketOpener, emit: (QUICEvent) -> Void) {
        stoppedWaiting = true
        retryHeld(opener: &opener, emit: emit)
    }

    // MARK: Frames

    private func frames(_ plaintext: UnsafeRawBufferPointer, level: Level, fromClient: Bool, at time: Timestamp,
                        emit: (QUICEvent) -> Void) {
        var reader = FrameReader(plaintext)
        while let frame = reader.next() {
            switch frame {
            case .padding, .ping, .ack, .retireConnectionID, .skipped:
                break
            case .stopSending(let stream, let code):
                emit(.stopSending(connection: id, stream: stream, fromClient: fromClient, errorCode: code, time: time))
            case .crypto(let offset, let data):
                cryptoData(offset: offset, data: data, level: level, fromClient: fromClient, at: time, emit: emit)
            case .stream(let stream, let offset, let data, let fin):
                streamData(StreamKey(stream: stream, fromClient: fromClient), offset: offset, data: data, fin: fin,
                           at: time, emit: emit)
            case .resetStream(let stream, let code, let finalSize):
                reset(StreamKey(stream: stream, fromClient: fromClient), code: code, finalSize: finalSize, at: time,
                      emit: emit)
            case .newConnectionID(_, let id):
                learnID(id, fromClient: fromClient)
            case .connectionClose(let code, let application, let reason):
                let text = String(decoding: reason.prefix(200), as: UTF8.self)
                if !application && code == QUICWarning.applicationErrorCode && level != .application {
                    standInClose = (fromClient, text, time)
                    return
                }
                standInClose = nil
                connectionClosed(code: code, application: application, reason: text, fromClient: fromClient, at: time,
                                 emit: emit)
                return
            case .handshakeDone:
                break
            }
        }
        if let problem = reader.problem {
            warnOnce(.badFrame(type: problem.type, known: problem.known), at: time, emit)
        }
    }

    private func connectionClosed(code: UInt64, application: Bool, reason: String, fromClient: Bool, at time: Timestamp,
                                  emit: (QUICEvent) -> Void) {
        if openedSent {
            emit(.connectionClose(connection: id, fromClient: fromClient, errorCode: code, application: application,
                                  reason: reason, time: time))
        }
        // H3_NO_ERROR (0x100) and transport NO_ERROR (0) are the ordinary way to close.
        if code != 0 && !(application && code == 0x100) {
            emit(.warning(connection: id, .closedWithError(code: code, application: application, reason: reason), time: time))
        }
        close(at: time, emit: emit)
    }

    private func cryptoData(offset: UInt64, data: UnsafeRawBufferPointer, level: Level, fromClient: Bool,
                            at time: Timestamp, emit: (QUICEvent) -> Void) {
        let direction = fromClient ? 0 : 1
        var messages: [(UInt8, [UInt8])] = []
        var stream = crypto[level.rawValue][direction]
        buffered += stream.reassembly.receive(offset: offset, data: data, fin: false) { piece in
            if case .bytes(let bytes) = piece {
                stream.messages.append(bytes) { type, body in messages.append((type, Array(body))) }
            }
        }
        if buffered > limits.maxBufferedBytesPerConnection {
            buffered += stream.reassembly.giveUpHole { _ in }
        }
        crypto[level.rawValue][direction] = stream
        for (type, body) in messages { handshakeMessage(type, body, fromClient: fromClient, emit: emit, at: time) }
    }

    private func handshakeMessage(_ type: UInt8, _ body: [UInt8], fromClient: Bool, emit: (QUICEvent) -> Void,
                                  at time: Timestamp) {
        switch (type, fromClient) {
        case (HandshakeType.clientHello, true) where clientHello == nil:
            clientHello = ClientHelloFacts(body: body[...]) ?? ClientHelloFacts()
        case (HandshakeType.serverHello, false) where serverHello?.isHelloRetryRequest != false:
            // A HelloRetryRequest is followed by the ServerHello that says how the handshake goes on.
            serverHello = ServerHelloFacts(body: body[...])
            guard serverHello?.isHelloRetryRequest != true else { break }
            // Without a key log the line waits for the ServerHello too (an Initial, always readable): it says
            // whether the session was resumed.
            lookUpKeys(emit: emit, at: time)
        case (HandshakeType.encryptedExtensions, false):
            let facts = EncryptedExtensionsFacts(body: body[...])
            serverALPN = facts.alpn
            serverTransportParameters = facts.quicTransportParameters
            serverAcceptedEarlyData = facts.acceptedEarlyData
            sendNoticeIfReady(emit, force: true)
        default:
            break
        }
    }

    // MARK: Streams

    private func streamData(_ key: StreamKey, offset: UInt64, data: UnsafeRawBufferPointer, fin: Bool, at time: Timestamp,
                            emit: (QUICEvent) -> Void) {
        guard !endedStreams.contains(key) else { return }
        if !openedSent {
            openedSent = true
            emit(.opened(connection: id, client: client, server: server, alpn: serverALPN ?? clientHello?.alpn.first,
                         time: time))
        }
        if streams[key] == nil {
            guard streams.count < limits.maxStreamsPerConnection else {
                warnOnce(.streamLimit(limit: limits.maxStreamsPerConnection), at: time, emit)
                return
            }
            streams[key] = OffsetReassembly()
        }
        buffered += streams[key]!.receive(offset: offset, data: data, fin: fin) { hand($0, key, time, emit) }
        if buffered > limits.maxBufferedBytesPerConnection {
            warnOnce(.bufferLimit(limit: limits.maxBufferedBytesPerConnection), at: time, emit)
            while buffered > limits.maxBufferedBytesPerConnection, streams[key]!.hasHole {
                buffered += streams[key]!.giveUpHole { hand($0, key, time, emit) }
            }
        }
        if streams[key]!.ended { finish(key) }
    }

    private func reset(_ key: StreamKey, code: UInt64, finalSize: UInt64, at time: Timestamp, emit: (QUICEvent) -> Void) {
        guard !endedStreams.contains(key) else { return }
        if var stream = streams[key] {
            // What was buffered is handed on; the bytes never sent are not a gap: the sender gave them up.
            buffered += stream.close(finalSize: nil) { piece in
                if case .end = piece { return }
                hand(piece, key, time, emit)
            }
            streams[key] = stream
        }
        emit(.streamReset(connection: id, stream: key.stream, fromClient: key.fromClient, errorCode: code, time: time))
        finish(key)
    }

    private func finish(_ key: StreamKey) {
        streams[key] = nil
        // A retransmitted frame of an ended stream must not start it again; bounded, like everything else.
        if endedStreams.count >= 100_000 { endedStreams.removeAll() }
        endedStreams.insert(key)
    }

    /// Hands a stream's piece on as an event (the end as empty bytes with `fin`).
    private func hand(_ piece: OffsetReassembly.Piece, _ key: StreamKey, _ time: Timestamp, _ emit: (QUICEvent) -> Void) {
        switch piece {
        case .bytes(let bytes):
            emit(.streamData(connection: id, stream: key.stream, fromClient: key.fromClient, bytes: bytes, fin: false,
                             time: time))
        case .gap(let length):
            emit(.streamGap(connection: id, stream: key.stream, fromClient: key.fromClient, length: length, time: time))
        case .end:
            emit(.streamData(connection: id, stream: key.stream, fromClient: key.fromClient,
                             bytes: UnsafeRawBufferPointer(start: nil, count: 0), fin: true, time: time))
        }
    }

    // MARK: Labels, IDs, the end

    /// The connection's line, once: as soon as the ClientHello is read without a key log; with one, once the keys
    /// were looked up (and then, when found, once the server's ALPN is known).
    private func sendNoticeIfReady(_ emit: (QUICEvent) -> Void, force: Bool) {
        guard !noticeSent, force else { return }
        let keys: ConnectionNotice.QUICKeys
        if keySource == nil {
            keys = .noKeyLog
        } else if secrets != nil || packetsOpenedBeyondInitial {
            guard serverALPN != nil || closed else { return }
            keys = .decrypted
        } else if (keysLooked && !mayWait) || closed {
            keys = .notLogged
        } else {
            return
        }
        noticeSent = true
        let alpn = serverALPN.map { [$0] } ?? clientHello?.alpn ?? []
        emit(.notice(ConnectionNotice(connection: id, client: client, server: server,
                                      kind: .quic(version: version.rawValue, serverName: clientHello?.serverName,
                                                  alpn: alpn, keys: keys),
                                      time: start, transportParameters: transportParameters,
                                      resumption: QUICResumption(offered: clientHello?.offersPreSharedKey,
                                                                 resumed: serverHello?.acceptedPreSharedKey,
                                                                 earlyDataOffered: clientHello?.offersEarlyData,
                                                                 earlyDataAccepted: serverAcceptedEarlyData),
                                      connectionIDs: QUICConnectionIDs(clientInitialDestination: originalDCID,
                                                                       clientSource: firstSource.client,
                                                                       serverSource: firstSource.server))))
    }

    /// Each side's transport parameters as far as its handshake was read; nil before the ClientHello was.
    private var transportParameters: QUICTransportParameters? {
        guard let client = clientHello?.quicTransportParameters else { return nil }
        return QUICTransportParameters(client: QUICTransportParameter.list(client),
                                       server: serverTransportParameters.map(QUICTransportParameter.list))
    }

    private var packetsOpenedBeyondInitial: Bool { handshakeKeys.client != nil || handshakeKeys.server != nil }

    private func learnID(_ bytes: UnsafeRawBufferPointer, fromClient: Bool) {
        guard let key = ConnectionIDKey(bytes) else { return }
        if fromClient { clientIDLength = bytes.count } else { serverIDLength = bytes.count }
        newIDs.append((key, fromClient))
    }

    private func warnOnce(_ warning: QUICWarning, at time: Timestamp, _ emit: (QUICEvent) -> Void) {
        guard warned.insert(String(describing: warning)).inserted else { return }
        emit(.warning(connection: id, warning, time: time))
    }

    /// Ends the connection: holes in streams become gaps, the line is sent if it was not, packets that could not
    /// be decrypted are counted in a warning.
    func close(at time: Timestamp, emit: (QUICEvent) -> Void) {
        guard !closed else { return }
        closed = true
        sendNoticeIfReady(emit, force: true)
        for key in streams.keys.sorted(by: { ($0.stream, $0.fromClient ? 0 : 1) < ($1.stream, $1.fromClient ? 0 : 1) }) {
            var stream = streams[key]!
            stream.close { hand($0, key, time, emit) }
        }
        streams = [:]
        if keySource != nil {
            for (index, name) in ["Initial", "Handshake", "1-RTT", "0-RTT"].enumerated() where undecryptable[index] > 0 && keysLooked {
                emit(.warning(connection: id, .undecryptable(level: name, packets: undecryptable[index]), time: time))
            }
        }
        emit(.closed(connection: id, time: time))
    }
}
