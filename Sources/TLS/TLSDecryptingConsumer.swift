import FlowReassembly
import Foundation
import PacketDecoding

/// Sits between TCP reassembly and the HTTP decoders: for connections that start with a TLS handshake it parses the
/// records, finds the session's secrets in the key log, decrypts, and passes the application data on to `inner` as
/// if the connection had been cleartext. Other connections pass through unchanged.
/// The TLS facts of each connection are reported once through `onSession`, before its first decrypted bytes.
public struct TLSDecryptingConsumer<Inner: StreamConsumer>: StreamConsumer {
    public var inner: Inner
    public let limits: TLSDecryptionLimits
    private let keys: TLSKeySource
    private let onSession: (TLSSessionFacts) -> Void
    private var connections: [ConnectionID: TLSConnection] = [:]
    /// Every record is decrypted into this buffer and handed on from it before the next one: one buffer for all
    /// records instead of one per record.
    private var plaintext: [UInt8] = []

    public init(keys: TLSKeySource, limits: TLSDecryptionLimits = TLSDecryptionLimits(), inner: Inner,
                onSession: @escaping (TLSSessionFacts) -> Void) {
        self.keys = keys
        self.limits = limits
        self.inner = inner
        self.onSession = onSession
    }

    public mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        connections[id] = TLSConnection(id: id, client: client, server: server, limits: limits)
        inner.connectionOpened(id, client: client, server: server, at: time)
    }

    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp) {
        guard let connection = connections[id], !bytes.isEmpty else {
            inner.streamData(id, direction, bytes, at: time)
            return
        }
        if connection.mode == .undecided {
            // A TLS stream opens with a handshake record: type 22, major version 3.
            connection.mode = bytes[0] == 0x16 && (bytes.count < 2 || bytes[1] == 0x03) ? .tls : .passthrough
        }
        guard connection.mode == .tls else {
            inner.streamData(id, direction, bytes, at: time)
            return
        }
        readRecords(connection, direction == .clientToServer ? 0 : 1, bytes, at: time)
        finishRecord(connection)
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        guard let connection = connections[id], connection.mode == .tls else {
            inner.streamGap(id, direction, length: length, at: time)
            return
        }
        let side = direction == .clientToServer ? 0 : 1
        let state = connection.directions[side]
        if !state.stopped {
            state.stopped = true
            inner.warning(id, "TLS \(Self.sideName(side)) stream lost \(length) bytes at offset \(state.offset + state.buffer.count); "
                          + "record boundaries and sequence numbers are unknown after it, so the rest of this direction is not decrypted",
                          at: time)
        }
        if state.forwardedAny { inner.streamGap(id, direction, length: length, at: time) }
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {
        // Records still waiting for their key must reach the inner consumer before it hears the stream ended:
        // live, a short connection (a request, a response, a close within the key log's recheck interval) would
        // otherwise deliver its plaintext after the end, and the exchange would be lost.
        if let connection = connections[id], connection.mode == .tls,
           !connection.directions[0].held.isEmpty || !connection.directions[1].held.isEmpty {
            keys.allowImmediateRecheck()
            drainHeld(connection, forced: true)
        }
        inner.streamEnded(id, direction, reason: reason, at: time)
    }

    public mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        if let connection = connections.removeValue(forKey: id), connection.mode == .tls {
            if !connection.directions[0].held.isEmpty || !connection.directions[1].held.isEmpty {
                keys.allowImmediateRecheck()
            }
            drainHeld(connection, forced: true)
            for side in 0...1 where !connection.directions[side].held.isEmpty {
                let held = connection.directions[side].held
                inner.warning(id, "\(held.count) TLS \(Self.sideName(side)) record(s) (\(held.reduce(0) { $0 + $1.fragment.count }) bytes) "
                              + "never got their key: no key logged for client random \(connection.clientRandomText)", at: time)
            }
            emitSummary(connection, at: time)
        }
        inner.connectionClosed(id, at: time)
    }

    public mutating func warning(_ id: ConnectionID?, _ message: String, at time: Timestamp) {
        inner.warning(id, message, at: time)
    }

    public mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        inner.applicationProtocolNegotiated(id, protocolName, at: time)
    }

    /// Reports the key log's bad lines read since the last call (lines appended to a followed file).
    public mutating func reportKeyLogWarnings(at time: Timestamp) {
        for warning in keys.pendingWarnings { inner.warning(nil, warning.description, at: time) }
        keys.pendingWarnings = []
    }

    static func sideName(_ side: Int) -> String { side == 0 ? "client→server" : "server→client" }

    // MARK: Records

    private mutating func readRecords(_ connection: TLSConnection, _ side: Int, _ bytes: UnsafeRawBufferPointer,
                                      at time: Timestamp) {
        let state = connection.directions[side]
        guard !state.stopped else { return }
        var input = bytes
        // Fast path: nothing buffered, so records wholly inside this segment are read in place.
        if state.buffer.isEmpty {
            while let consumed = nextRecord(connection, side, input, at: time) {
                guard consumed > 0 else { return }
                input = UnsafeRawBufferPointer(rebasing: input[consumed...])
                state.offset += consumed
            }
            state.buffer += input
            return
        }
        state.buffer += input
        var start = 0
        while true {
            let consumed = state.buffer.withUnsafeBytes { all in
                nextRecord(connection, side, UnsafeRawBufferPointer(rebasing: all[start...]), at: time)
            }
            guard let consumed else { break }
            guard consumed > 0 else {
                state.buffer = []  // stopped: nothing more is read from this direction
                return
            }
            start += consumed
            state.offset += consumed
        }
        state.buffer.removeFirst(start)
    }

    /// Reads one record from the front of `bytes`: its length when whole (and handled), nil when more bytes are
    /// needed, 0 when the direction stopped because the bytes are not TLS records.
    private mutating func nextRecord(_ connection: TLSConnection, _ side: Int, _ bytes: UnsafeRawBufferPointer,
                                     at time: Timestamp) -> Int? {
        guard bytes.count >= 5 else { return nil }
        let type = bytes[0]
        let version = UInt16(bytes[1]) << 8 | UInt16(bytes[2])
        let length = Int(bytes[3]) << 8 | Int(bytes[4])
        let state = connection.directions[side]
        guard (20...24).contains(type), bytes[1] == 3, length <= limits.maxRecordLength else {
            state.stopped = true
            inner.warning(connection.id, "TLS \(Self.sideName(side)) stream offset \(state.offset): not a TLS record "
                          + "(type \(type), version 0x\(String(version, radix: 16)), length \(length), at most \(limits.maxRecordLength) allowed); "
                          + "the rest of this direction is not decrypted", at: time)
            return 0
        }
        guard bytes.count >= 5 + length else { return nil }
        let record = HeldRecord(type: type, version: version, fragment: [], offset: state.offset, time: time)
        let fragment = UnsafeRawBufferPointer(rebasing: bytes[5..<(5 + length)])
        if !state.held.isEmpty || handle(connection, side, record, fragment) == .hold {
            hold(connection, side, record, fragment)
        }
        return 5 + length
    }

    private mutating func hold(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                               _ fragment: UnsafeRawBufferPointer) {
        let heldBytes = connection.directions[0].heldBytes + connection.directions[1].heldBytes
        let waitingForServerHello = connection.serverHello == nil
        let limit = waitingForServerHello ? limits.maxHeldBytesBeforeServerHello : limits.maxHeldBytesPerConnection
        // Records count with their 5-byte header, so a flood of empty records is bounded too.
        guard heldBytes + HeldRecord.headerLength + fragment.count <= limit else {
            if !connection.warnedHoldLimit {
                connection.warnedHoldLimit = true
                inner.warning(connection.id, "TLS records waiting for \(waitingForServerHello ? "the ServerHello" : "their key") passed \(limit) bytes "
                              + "(client random \(connection.clientRandomText)); later records are dropped", at: record.time)
            }
            if !waitingForServerHello { markNoKey(connection, side, at: record.time) }
            return
        }
        var copy = record
        copy.fragment = Array(fragment)
        connection.directions[side].held.append(copy)
        connection.directions[side].heldBytes += HeldRecord.headerLength + fragment.count
    }

    /// After a record: a ServerHello or a new key may let held records go on.
    private mutating func finishRecord(_ connection: TLSConnection) {
        if connection.directions[0].held.isEmpty && connection.directions[1].held.isEmpty { return }
        drainHeld(connection, forced: false)
    }

    private mutating func drainHeld(_ connection: TLSConnection, forced: Bool) {
        for side in [1, 0] {
            let state = connection.directions[side]
            // Records are taken from the front and removed together at the end: removing them one by one would
            // make releasing many held records quadratic.
            var released = 0
            while released < state.held.count {
                let first = state.held[released]
                let result = first.fragment.withUnsafeBytes { handle(connection, side, first, $0) }
                if result == .hold { break }
                released += 1
                state.heldBytes -= HeldRecord.headerLength + first.fragment.count
            }
            if released > 0 { state.held.removeFirst(released) }
        }
    }

    // MARK: One record

    enum RecordResult { case done, hold }

    private mutating func handle(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                 _ fragment: UnsafeRawBufferPointer) -> RecordResult {
        // Until the ServerHello says which version and suite, the client's later records cannot be read.
        if side == 0 && connection.clientHello != nil && connection.serverHello == nil { return .hold }
        let state = connection.directions[side]
        if connection.isTLS13 {
            switch record.type {
            case 22: feedHandshake(connection, side, fragment, at: record.time)
            case 23: return open13(connection, side, record, fragment)
            default: break  // compatibility ChangeCipherSpec, cleartext alerts
            }
            return .done
        }
        if !state.encrypted {
            switch record.type {
            case 20 where connection.serverHello == nil:
                break  // TLS 1.3 middlebox compatibility after a HelloRetryRequest: not a key change
            case 20:
                state.encrypted = true
                if side == 1 { connection.serverChangedCipherSpec = true }
            case 22: feedHandshake(connection, side, fragment, at: record.time)
            default: break
            }
            return .done
        }
        return open12(connection, side, record, fragment)
    }

    private mutating func open12(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                 _ fragment: UnsafeRawBufferPointer) -> RecordResult {
        let state = connection.directions[side]
        if state.protection == nil {
            guard let suite = connection.suite else {
                unsupported(connection, at: record.time)
                return .done
            }
            guard let master = secrets(connection, need: { $0.masterSecret != nil })?.masterSecret,
                  let hello = connection.clientHello, let serverHello = connection.serverHello else {
                return keyMissing(connection, side, record)
            }
            state.protection = .tls12(masterSecret: master, clientRandom: hello.random, serverRandom: serverHello.random,
                                      suite: suite, forClient: side == 0, encryptThenMAC: serverHello.encryptThenMAC)
        }
        guard var protection = state.protection else { return .done }
        let outcome = protection.open(type: record.type, version: record.version, fragment: fragment,
                                      into: &plaintext)
        protection.sequence &+= 1
        state.protection = protection
        deliver(connection, side, record, outcome, fragmentLength: fragment.count)
        return .done
    }

    private mutating func open13(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                 _ fragment: UnsafeRawBufferPointer) -> RecordResult {
        guard let suite = connection.suite else {
            unsupported(connection, at: record.time)
            return .done
        }
        let state = connection.directions[side]
        var currentKeyKnown = false
        var anyKey = false
        // The current stage first; when it fails, a later one (0-RTT refused, Finished not seen) may be the right one.
        for stage in state.stage.rawValue...Stage13.application.rawValue {
            let candidate = Stage13(rawValue: stage)!
            var protection: RecordProtection
            if candidate == state.stage, let current = state.protection {
                protection = current
            } else {
                guard let secret = trafficSecret(connection, side, candidate),
                      let fresh = RecordProtection.tls13(secret: secret, suite: suite) else { continue }
                protection = fresh
            }
            anyKey = true
            if candidate == state.stage { currentKeyKnown = true }
            let outcome = protection.open(type: record.type, version: record.version, fragment: fragment,
                                          into: &plaintext)
            if case .authenticationFailed = outcome {
                if candidate == state.stage { state.protection = protection }
                continue
            }
            if candidate == .application && state.applicationSecret == nil {
                state.applicationSecret = trafficSecret(connection, side, .application)
            }
            state.stage = candidate
            protection.sequence &+= 1
            state.protection = protection
            deliver(connection, side, record, outcome, fragmentLength: fragment.count)
            return .done
        }
        if !anyKey { return keyMissing(connection, side, record) }
        if currentKeyKnown {
            state.protection?.sequence &+= 1
            deliver(connection, side, record, .authenticationFailed, fragmentLength: fragment.count)
        } else {
            connection.handshakeRecordsWithoutKey += 1  // e.g. handshake secrets not logged, traffic secrets are
        }
        return .done
    }

    private func trafficSecret(_ connection: TLSConnection, _ side: Int, _ stage: Stage13) -> [UInt8]? {
        switch stage {
        case .early:
            guard side == 0 else { return nil }
            return secrets(connection, need: { $0.clientEarlyTrafficSecret != nil })?.clientEarlyTrafficSecret
        case .handshake:
            return side == 0
                ? secrets(connection, need: { $0.clientHandshakeTrafficSecret != nil })?.clientHandshakeTrafficSecret
                : secrets(connection, need: { $0.serverHandshakeTrafficSecret != nil })?.serverHandshakeTrafficSecret
        case .application:
            if let current = connection.directions[side].applicationSecret { return current }
            return side == 0
                ? secrets(connection, need: { $0.clientTrafficSecret0 != nil })?.clientTrafficSecret0
                : secrets(connection, need: { $0.serverTrafficSecret0 != nil })?.serverTrafficSecret0
        }
    }

    private func secrets(_ connection: TLSConnection, need: (TLSKeyLog.Secrets) -> Bool) -> TLSKeyLog.Secrets? {
        guard let random = connection.clientRandom else { return nil }
        if let known = connection.secrets, need(known) { return known }
        connection.secrets = keys.secrets(for: random, need: need) ?? connection.secrets
        return connection.secrets
    }

    private mutating func keyMissing(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord) -> RecordResult {
        if limits.maxHeldBytesPerConnection > 0 && keys.follows && !connection.directions[side].droppingForNoKey {
            return .hold
        }
        markNoKey(connection, side, at: record.time)
        return .done
    }

    private mutating func markNoKey(_ connection: TLSConnection, _ side: Int, at time: Timestamp) {
        connection.directions[side].droppingForNoKey = true
        connection.noKey = true
        emitSummary(connection, at: time)
    }

    private mutating func unsupported(_ connection: TLSConnection, at time: Timestamp) {
        emitSummary(connection, at: time)
    }

    /// Acts on a decrypted record (or reports why it could not be).
    private mutating func deliver(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                  _ outcome: RecordProtection.Outcome, fragmentLength: Int) {
        let state = connection.directions[side]
        switch outcome {
        case .plaintext(let contentType, let bytes):
            switch contentType {
            case 22:
                feedHandshake(connection, side, bytes, at: record.time)
            case 23:
                emitSummary(connection, at: record.time)
                if let alpn = connection.alpn, !connection.announcedALPN {
                    connection.announcedALPN = true
                    inner.applicationProtocolNegotiated(connection.id, alpn, at: record.time)
                }
                state.forwardedAny = true
                let direction: StreamDirection = side == 0 ? .clientToServer : .serverToClient
                bytes.withUnsafeBytes { inner.streamData(connection.id, direction, $0, at: record.time) }
            default:
                break  // alerts: the connection's end shows in TCP anyway
            }
        case .authenticationFailed:
            connection.authenticationFailures += 1
            inner.warning(connection.id, "TLS \(Self.sideName(side)) record at stream offset \(record.offset) "
                          + "(\(fragmentLength) bytes) failed authentication: wrong key in the key log, or corrupted bytes; skipped",
                          at: record.time)
            if state.forwardedAny {
                inner.streamGap(connection.id, side == 0 ? .clientToServer : .serverToClient, length: fragmentLength,
                                at: record.time)
            }
        case .malformed(let reason):
            inner.warning(connection.id, "TLS \(Self.sideName(side)) record at stream offset \(record.offset): \(reason); skipped",
                          at: record.time)
        }
    }

    // MARK: Handshake

    private mutating func feedHandshake<Bytes: Collection>(_ connection: TLSConnection, _ side: Int, _ bytes: Bytes,
                                                          at time: Timestamp) where Bytes.Element == UInt8 {
        var messages: [(UInt8, ArraySlice<UInt8>)] = []
        connection.directions[side].handshake.append(bytes) { messages.append(($0, $1)) }
        for (type, body) in messages { handshakeMessage(connection, side, type, body, at: time) }
    }

    private mutating func handshakeMessage(_ connection: TLSConnection, _ side: Int, _ type: UInt8,
                                           _ body: ArraySlice<UInt8>, at time: Timestamp) {
        let state = connection.directions[side]
        switch (side, type) {
        case (0, 1):  // ClientHello (a second one after a HelloRetryRequest keeps the random)
            guard let hello = ClientHelloFacts(body: body) else { return }
            if connection.clientHello == nil {
                connection.clientRandom = ClientRandom(hello.random)
                connection.firstSeen = time
            }
            connection.clientHello = hello
        case (1, 2):  // ServerHello or HelloRetryRequest
            guard let hello = ServerHelloFacts(body: body) else { return }
            if hello.isHelloRetryRequest {
                connection.helloRetryRequest = true
                return
            }
            connection.serverHello = hello
            connection.suite = CipherSuite.suite(hello.cipherSuite)
            if hello.version != 0x0304 { connection.alpn = hello.alpn }
            if connection.suite == nil || !(hello.version == 0x0303 || hello.version == 0x0304) {
                emitSummary(connection, at: time)
            } else if hello.version == 0x0304 {
                connection.directions[0].stage = connection.clientHello?.offersEarlyData == true ? .early : .handshake
                connection.directions[1].stage = .handshake
            }
        case (1, 11), (1, 14):  // Certificate, ServerHelloDone: a full TLS 1.2 handshake
            connection.sawFullHandshake = true
        case (1, 8):  // EncryptedExtensions (TLS 1.3)
            let facts = EncryptedExtensionsFacts(body: body)
            connection.alpn = facts.alpn
        case (_, 5) where connection.isTLS13:  // EndOfEarlyData
            state.stage = .handshake
            state.protection = nil
        case (_, 20) where connection.isTLS13:  // Finished: application keys next
            if state.stage != .application {
                state.stage = .application
                state.protection = nil
            }
        case (_, 24) where connection.isTLS13:  // KeyUpdate: this direction's next secret
            guard let suite = connection.suite,
                  let current = state.applicationSecret ?? trafficSecret(connection, side, .application) else { return }
            let next = RecordProtection.nextTrafficSecret(current, suite: suite)
            state.applicationSecret = next
            state.protection = RecordProtection.tls13(secret: next, suite: suite)
            connection.keyUpdates += 1
        default:
            break
        }
    }

    // MARK: The TLS line

    private mutating func emitSummary(_ connection: TLSConnection, at time: Timestamp) {
        guard !connection.summaryEmitted else { return }
        connection.summaryEmitted = true
        let decryption: TLSSessionFacts.Decryption
        if let serverHello = connection.serverHello, connection.suite == nil {
            decryption = .unsupported("cipher suite \(CipherSuite.name(of: serverHello.cipherSuite)) is not supported")
        } else if let serverHello = connection.serverHello, serverHello.version != 0x0303 && serverHello.version != 0x0304 {
            decryption = .unsupported("\(TLSVersionName.name(serverHello.version)) is not supported (TLS 1.2 and 1.3 are)")
        } else if connection.noKey || connection.secrets == nil {
            decryption = .noKeyLogged
        } else {
            decryption = .decrypted
        }
        onSession(TLSSessionFacts(
            connection: connection.id, client: connection.client, server: connection.server,
            time: connection.firstSeen ?? time, version: connection.serverHello?.version,
            cipherSuite: connection.serverHello?.cipherSuite, serverName: connection.clientHello?.serverName,
            offeredALPN: connection.clientHello?.alpn ?? [], alpn: connection.alpn, resumed: connection.resumed,
            helloRetryRequest: connection.helloRetryRequest,
            earlyDataOffered: connection.clientHello?.offersEarlyData ?? false, decryption: decryption))
    }
}

/// A record kept until its key or its session's ServerHello is known.
struct HeldRecord {
    var type: UInt8
    var version: UInt16
    var fragment: [UInt8]
    /// Where the record starts in its direction's stream (for warnings).
    var offset: Int
    var time: Timestamp

    static let headerLength = 5
}

/// TLS 1.3 key stages of one direction, in the order they are used.
enum Stage13: Int {
    case early, handshake, application
}

/// Per-direction state: the record buffer, handshake reassembly, keys in use and records held for a key.
final class TLSDirection {
    var buffer: [UInt8] = []
    /// Stream offset of the first byte of `buffer` (bytes consumed so far).
    var offset = 0
    var handshake: HandshakeAssembler
    /// TLS 1.2: a ChangeCipherSpec was seen; every later record is protected.
    var encrypted = false
    var stage: Stage13 = .handshake
    var protection: RecordProtection?
    /// TLS 1.3: the current application traffic secret (changes with KeyUpdate).
    var applicationSecret: [UInt8]?
    var held: [HeldRecord] = []
    /// Wire bytes of the held records (headers included), kept as records come and go.
    var heldBytes = 0
    var stopped = false
    var droppingForNoKey = false
    var forwardedAny = false

    init(limits: TLSDecryptionLimits) {
        handshake = HandshakeAssembler(maxMessageLength: limits.maxHandshakeMessageLength)
    }
}

/// One TCP connection as the TLS layer sees it.
final class TLSConnection {
    enum Mode { case undecided, tls, passthrough }

    let id: ConnectionID
    let client: Endpoint
    let server: Endpoint
    var mode = Mode.undecided
    let directions: [TLSDirection]
    var clientHello: ClientHelloFacts?
    var clientRandom: ClientRandom?
    var serverHello: ServerHelloFacts?
    var suite: CipherSuite?
    var secrets: TLSKeyLog.Secrets?
    var alpn: String?
    var announcedALPN = false
    var helloRetryRequest = false
    var sawFullHandshake = false
    var serverChangedCipherSpec = false
    var summaryEmitted = false
    var noKey = false
    var warnedHoldLimit = false
    var firstSeen: Timestamp?
    var authenticationFailures = 0
    var handshakeRecordsWithoutKey = 0
    var keyUpdates = 0

    init(id: ConnectionID, client: Endpoint, server: Endpoint, limits: TLSDecryptionLimits) {
        self.id = id
        self.client = client
        self.server = server
        directions = [TLSDirection(limits: limits), TLSDirection(limits: limits)]
    }

    var isTLS13: Bool { serverHello?.version == 0x0304 }

    /// TLS 1.3: the server accepted a PSK. TLS 1.2: the server echoed the session id, or went straight to
    /// ChangeCipherSpec without a Certificate (a session ticket).
    var resumed: Bool {
        guard let serverHello else { return false }
        if serverHello.version == 0x0304 { return serverHello.acceptedPreSharedKey }
        if let hello = clientHello, !hello.sessionID.isEmpty, hello.sessionID == serverHello.sessionID { return true }
        return serverChangedCipherSpec && !sawFullHandshake
    }

    var clientRandomText: String { clientRandom?.description ?? "(no ClientHello seen)" }
}
