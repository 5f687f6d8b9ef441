// Longer than 600 lines: record reading, the handshake's key lookup, decryption and the queue of events waiting for
// a key (issue 20) all work on the one per-connection state this consumer keeps; it should be split along those
// lines when next changed (ArchitectureTests asks every file over 600 lines for a reason).
import FlowReassembly
import Foundation
import HTTPModel
import PacketDecoding
import SystemSupport
import TLSWire

/// Sits between TCP reassembly and the HTTP decoders: for connections that start with a TLS handshake it parses the
/// records, finds the session's secrets in the key log, decrypts, and passes the application data on to `inner` as
/// if the connection had been cleartext. Other connections pass through unchanged.
/// The TLS facts of each connection are reported once through `onSession`, before its first decrypted bytes.
/// Sits between TCP reassembly and the HTTP decoders: for connections that start with a TLS handshake it parses the
/// records, finds the session's secrets in the key log, decrypts, and passes the application data on to `inner` as
/// if the connection had been cleartext. Other connections pass through unchanged.
/// The TLS facts of each connection are reported once through `onSession`, before its first decrypted bytes.
///
/// Live equals offline: what `inner` hears must not depend on when the key log's lines were read. So a record
/// that waits for its key holds back everything after it on its connection, both directions, in arrival order:
/// later records, gaps and ends (and the close, past the connection's last packet), and all of it goes on in that
/// same order once the key is read. Pairing a response with its request needs that order: the HTTP decoder hears
/// the request before the response exactly as it would from a complete key log.
public struct TLSDecryptingConsumer<Inner: StreamConsumer>: StreamConsumer {
    public var inner: Inner
    public let limits: TLSDecryptionLimits
    private let keys: TLSKeySource
    private let onSession: (TLSSessionFacts) -> Void
    private var connections: [ConnectionID: TLSConnection] = [:]
    /// Connections whose next event waits for a key (closed ones too): retried when the key log gains lines.
    private var waitingForKeys: Set<ConnectionID> = []
    /// The key log's generation when the waiting connections were last retried.
    private var retriedGeneration = -1
    /// Every record is decrypted into this buffer and handed on from it before the next one: one buffer for all
    /// records instead of one per record.
    private var plaintext: [UInt8] = []
    /// Bytes of records held in memory by all connections (bounded by `limits.maxHeldBytesInMemory`).
    private var heldBytes = 0
    /// Held records past the in-memory bounds (made on first need in `limits.spillDirectory`), the bytes of it
    /// still waiting, and the buffer a spilled record is read back into.
    private var spill: SpillFile?
    private var spillUnavailable = false
    private var spilledBytes = 0
    private var spillScratch: [UInt8] = []
    /// Records that waited in the spill file (a figure for tests and benchmarks).
    public private(set) var recordsSpilled = 0
    /// Connections that stopped waiting at `limits.keyWait`: at the end, those whose key was logged after all are
    /// named (it came too late, not never). Bounded.
    private var expired: [(id: ConnectionID, random: ClientRandom, had: TLSKeyLog.Secrets?)] = []
    /// Capture time: the last packet's timestamp, and the monotonic clock when it came (idle time advances it).
    private var lastPacketTime: Timestamp?
    private var lastPacketClock: UInt64 = 0
    /// When the waiting connections' deadlines were last looked at (capture time, seconds).
    private var lastDeadlineSweep: Double = 0

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

    /// Plaintext goes on without `acknowledged`: ACK numbers count ciphertext bytes, not the plaintext's.
    public mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                                    at time: Timestamp, acknowledged: Int?) {
        noteTime(time)
        retryWaiting(rereadNow: false, at: time)
        guard let connection = connections[id], !bytes.isEmpty else {
            inner.streamData(id, direction, bytes, at: time, acknowledged: acknowledged)
            return
        }
        if connection.mode == .undecided {
            // Decided on the first bytes: a lone first byte 22 is taken as TLS.
            connection.mode = TLSRecordHeader.startsTLS(bytes) != false ? .tls : .passthrough
        }
        guard connection.mode == .tls else {
            inner.streamData(id, direction, bytes, at: time, acknowledged: acknowledged)
            return
        }
        checkDeadline(connection, at: time)
        readRecords(connection, direction == .clientToServer ? 0 : 1, bytes, at: time)
    }

    public mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        guard let connection = connections[id], connection.mode == .tls else {
            inner.streamGap(id, direction, length: length, at: time)
            return
        }
        checkDeadline(connection, at: time)
        let side = direction == .clientToServer ? 0 : 1
        let state = connection.directions[side]
        // Records stop here at once (their boundaries are lost); what the gap tells `inner` keeps its place.
        let offset = state.offset + state.buffer.count
        let warn = !state.stopped
        state.stopped = true
        state.buffer = []
        submit(connection, Pending(side: side, time: time, event: .gap(length: length, offset: offset, warn: warn)))
    }

    public mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                                     at time: Timestamp) {
        guard let connection = connections[id], connection.mode == .tls else {
            inner.streamEnded(id, direction, reason: reason, at: time)
            return
        }
        // The last look before a quiet connection: a key logged since the last read is used now, not at the next
        // packet.
        if connection.waitsForKey { retryWaiting(rereadNow: true, at: time) }
        checkDeadline(connection, at: time)
        submit(connection, Pending(side: direction == .clientToServer ? 0 : 1, time: time, event: .end(reason)))
    }

    public mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        guard let connection = connections[id] else {
            inner.connectionClosed(id, at: time)
            return
        }
        connection.closedAt = time
        if connection.waitsForKey { retryWaiting(rereadNow: true, at: time) }
        // Still waiting for a key that may yet be logged (a program writes its key log after its last packet):
        // the connection stays until the key comes or the capture ends (`finishWaiting`).
        if connection.waitsForKey { return }
        if !connection.pending.isEmpty { drain(connection, forced: true) }
        complete(connection, at: time)
    }

    public mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        inner.warning(id, warning, at: time)
    }

    public mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        inner.applicationProtocolNegotiated(id, protocolName, at: time)
    }

    /// A key logged after the connection went quiet: its held records are shown now, not at the next packet.
    public mutating func idle() {
        if let lastPacketTime {
            // Capture time goes on while no packet comes: the last packet's time plus the time since it came.
            let elapsed = DispatchTime.now().uptimeNanoseconds &- lastPacketClock
            let now = Self.seconds(lastPacketTime) + Double(elapsed) / 1e9
            retryWaiting(rereadNow: false, at: Timestamp(seconds: Int64(now), nanoseconds: Int32((now - now.rounded(.down)) * 1e9)))
        } else {
            retryWaiting(rereadNow: false, at: nil)
        }
        inner.idle()
    }

    /// Reports the key log's bad lines read since the last call (lines appended to a followed file).
    public mutating func reportKeyLogWarnings(at time: Timestamp) {
        for warning in keys.pendingWarnings { inner.warning(nil, TLSConnectionWarning.keyLog(warning), at: time) }
        keys.pendingWarnings = []
    }

    /// The capture ended: reads the key log one last time, lets every connection still waiting go on with what it
    /// has, and decides the rest for good (no key logged). Call after reassembly closed every connection.
    public mutating func finishWaiting(at time: Timestamp) {
        retryWaiting(rereadNow: true, at: nil)
        for id in waitingForKeys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let connection = connections[id] else { continue }
            connection.waitsNoLonger = true
            drain(connection, forced: true)
            if let closedAt = connection.closedAt { complete(connection, at: closedAt) }
        }
        waitingForKeys = []
        // A connection that stopped waiting at the bound, whose key is in the log now: it came too late, and the
        // program is not to blame.
        if !expired.isEmpty { keys.rereadNow() }
        for (id, random, had) in expired where keys.keyLog.secrets(for: random) != had {
            inner.warning(id, TLSConnectionWarning.keyLoggedTooLate(clientRandom: random.description,
                                                                     bound: limits.keyWaitSeconds), at: time)
        }
        expired = []
    }

    static func direction(_ side: Int) -> StreamDirection { side == 0 ? .clientToServer : .serverToClient }

    // MARK: Waiting connections

    /// Retries the connections waiting for a key if the key log gained lines since their last try, and (every
    /// 50 ms of capture time) stops those waiting longer than the bound.
    private mutating func retryWaiting(rereadNow: Bool, at now: Timestamp?) {
        guard !waitingForKeys.isEmpty else { return }
        if rereadNow { keys.rereadNow() } else { keys.rereadIfChanged() }
        if let now, Self.seconds(now) - lastDeadlineSweep >= 0.05 {
            lastDeadlineSweep = Self.seconds(now)
            for id in waitingForKeys.sorted(by: { $0.rawValue < $1.rawValue }) {
                if let connection = connections[id] { checkDeadline(connection, at: now) }
            }
        }
        guard keys.generation != retriedGeneration else { return }
        retriedGeneration = keys.generation
        for id in waitingForKeys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let connection = connections[id] else { continue }
            drain(connection, forced: false)
            if !connection.waitsForKey, let closedAt = connection.closedAt { complete(connection, at: closedAt) }
        }
    }

    /// The connection's last words: the TLS line if not said yet, what was never decrypted, then the close.
    private mutating func complete(_ connection: TLSConnection, at time: Timestamp) {
        connections.removeValue(forKey: connection.id)
        heldBytes -= connection.pendingBytes  // nothing, as the connection was drained; kept exact regardless
        releaseSpilled(connection.spilledBytes)
        connection.spilledBytes = 0
        waitingForKeys.remove(connection.id)
        if connection.mode == .tls {
            for side in 0...1 {
                let state = connection.directions[side]
                if state.recordsWithoutKey > 0 && connection.keyWaitExpired {
                    inner.warning(connection.id, TLSConnectionWarning.recordsAfterKeyWait(
                        Self.direction(side), records: state.recordsWithoutKey, bytes: state.bytesWithoutKey,
                        clientRandom: connection.clientRandomText, bound: limits.keyWaitSeconds), at: time)
                } else if state.recordsWithoutKey > 0 {
                    inner.warning(connection.id, TLSConnectionWarning.recordsWithoutKey(
                        Self.direction(side), records: state.recordsWithoutKey, bytes: state.bytesWithoutKey,
                        clientRandom: connection.clientRandomText), at: time)
                }
                if state.recordsWithoutServerHello > 0 {
                    inner.warning(connection.id, TLSConnectionWarning.recordsWithoutServerHello(
                        Self.direction(side), records: state.recordsWithoutServerHello), at: time)
                }
            }
            emitSummary(connection, at: time)
        }
        inner.connectionClosed(connection.id, at: time)
    }

    /// Handles an event now when nothing before it waits, or queues it behind what does.
    private mutating func submit(_ connection: TLSConnection, _ pending: Pending) {
        let goesNow = connection.pending.isEmpty
            || !connection.waitsForKey && !connection.directions[pending.side].waitsForServerHello
        guard goesNow else {
            enqueue(connection, pending, because: nil)
            return
        }
        guard case .record = pending.event else {
            process(connection, pending)
            return
        }
        let result = handleHeld(connection, pending)
        if result != .done { enqueue(connection, pending, because: result) }
        releaseAfterServerHello(connection)
    }

    /// A record just read: handled now when nothing before it waits, else held behind what does (copied to memory,
    /// or past the in-memory bounds to the spill file).
    private mutating func submitRecord(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                       _ fragment: UnsafeRawBufferPointer) {
        let goesNow = connection.pending.isEmpty
            || !connection.waitsForKey && !connection.directions[side].waitsForServerHello
        if goesNow {
            let result = handle(connection, side, record, fragment)
            if result != .done { hold(connection, side, record, fragment, because: result) }
            releaseAfterServerHello(connection)
        } else {
            hold(connection, side, record, fragment, because: nil)
        }
    }

    /// Keeps a record until its key or the ServerHello comes: in memory up to the in-memory bounds, then in the
    /// spill file up to its bound; past them, `overflow`.
    private mutating func hold(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                               _ fragment: UnsafeRawBufferPointer, because result: RecordResult?) {
        var held = record
        // Records count with their 5-byte header, so a flood of empty records is bounded too.
        let size = HeldRecord.headerLength + fragment.count
        if connection.serverHello == nil {
            let limit = limits.maxHeldBytesBeforeServerHello
            guard connection.pendingBytes + size <= limit else {
                overflow(connection, side, record, fragment, limit: .perConnection(bytes: limit))
                return
            }
        }
        if connection.serverHello == nil
            || connection.pendingBytes + size <= limits.maxHeldBytesInMemoryPerConnection
            && heldBytes + size <= limits.maxHeldBytesInMemory {
            held.fragment = Array(fragment)
            connection.pendingBytes += size
            heldBytes += size
        } else if let extent = spillOut(fragment, size: size) {
            held.spilled = extent
            connection.spilledBytes += size
            recordsSpilled += 1
        } else {
            let limit: TLSConnectionWarning.HoldLimit
            if limits.spillDirectory != nil && !spillUnavailable {
                limit = .onDisk(bytes: limits.maxSpilledBytes)
            } else if connection.pendingBytes + size > limits.maxHeldBytesInMemoryPerConnection {
                limit = .perConnection(bytes: limits.maxHeldBytesInMemoryPerConnection)
            } else {
                limit = .inAll(bytes: limits.maxHeldBytesInMemory)
            }
            overflow(connection, side, record, fragment, limit: limit)
            return
        }
        enqueue(connection, Pending(side: side, time: record.time, event: .record(held)), because: result)
    }

    /// Writes a record to the spill file (made on first need); nil when there is none, it is full or failed.
    private mutating func spillOut(_ fragment: UnsafeRawBufferPointer, size: Int) -> SpillFile.Extent? {
        guard let directory = limits.spillDirectory, !spillUnavailable,
              spilledBytes + size <= limits.maxSpilledBytes else { return nil }
        do {
            if spill == nil { spill = try SpillFile(directory: directory) }
            let extent = try spill!.append(fragment)
            spilledBytes += size
            return extent
        } catch {
            spillUnavailable = true  // the in-memory bounds hold from here on
            return nil
        }
    }

    /// Spilled bytes no longer waiting; when none are left, the file is emptied.
    private mutating func releaseSpilled(_ size: Int) {
        guard size > 0 else { return }
        spilledBytes -= size
        if spilledBytes == 0 { spill?.empty() }
    }

    /// Handles a held record, reading it back from the spill file if it was put there.
    private mutating func handleHeld(_ connection: TLSConnection, _ pending: Pending) -> RecordResult {
        guard case .record(let record) = pending.event else { return .done }
        guard let extent = record.spilled else {
            return record.fragment.withUnsafeBytes { handle(connection, pending.side, record, $0) }
        }
        var scratch = spillScratch
        spillScratch = []
        defer { spillScratch = scratch }
        do {
            try spill?.read(extent, into: &scratch)
        } catch {
            scratch = []
        }
        guard scratch.count == extent.length else {
            // Our own file could not be read back: counted as not decrypted, never passed on as garbage.
            let state = connection.directions[pending.side]
            state.recordsWithoutKey += 1
            state.bytesWithoutKey += extent.length
            return .done
        }
        return scratch.withUnsafeBytes { handle(connection, pending.side, record, $0) }
    }

    private mutating func enqueue(_ connection: TLSConnection, _ pending: Pending, because result: RecordResult?) {
        connection.pending.append(pending)
        switch result {
        case .waitForKey?:
            connection.waitsForKey = true
            if connection.waitingSince == nil { connection.waitingSince = pending.time }
            waitingForKeys.insert(connection.id)
        case .waitForServerHello?:
            connection.directions[pending.side].waitsForServerHello = true
        case .done?, nil:
            break
        }
    }

    // MARK: Waiting by time

    static func seconds(_ time: Timestamp) -> Double { Double(time.seconds) + Double(time.nanoseconds) / 1e9 }

    private mutating func noteTime(_ time: Timestamp) {
        lastPacketTime = time
        lastPacketClock = DispatchTime.now().uptimeNanoseconds
    }

    /// A connection waiting for its key longer than `limits.keyWait`: the key log is read once more, and if the
    /// key is still not there the connection stops waiting (what waits is decided as having no key, and so is
    /// what follows).
    private mutating func checkDeadline(_ connection: TLSConnection, at now: Timestamp) {
        guard connection.waitsForKey, !connection.waitsNoLonger, let since = connection.waitingSince,
              Self.seconds(now) - Self.seconds(since) > limits.keyWaitSeconds else { return }
        keys.rereadNow()
        drain(connection, forced: false)
        if connection.waitsForKey {
            connection.keyWaitExpired = true
            if let random = connection.clientRandom, expired.count < 10_000 { expired.append((connection.id, random, keys.keyLog.secrets(for: random))) }
            drain(connection, forced: true)
        }
        if !connection.waitsForKey, let closedAt = connection.closedAt { complete(connection, at: closedAt) }
    }

    /// Past the hold limit. Waiting for a key: the connection stops waiting (what waits and what follows is
    /// decided as having no key), so nothing is dropped out of order. Waiting for the ServerHello: dropped.
    private mutating func overflow(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                   _ fragment: UnsafeRawBufferPointer, limit: TLSConnectionWarning.HoldLimit) {
        let waitingForServerHello = connection.serverHello == nil
        if !connection.warnedHoldLimit {
            connection.warnedHoldLimit = true
            inner.warning(connection.id, TLSConnectionWarning.holdLimitPassed(
                limit, waitingForServerHello: waitingForServerHello, clientRandom: connection.clientRandomText),
                at: record.time)
        }
        if waitingForServerHello {
            connection.directions[side].recordsWithoutServerHello += 1
            return
        }
        connection.waitsNoLonger = true
        drain(connection, forced: true)
        // Nothing waits now: this record is decided in its place, after everything before it.
        _ = handle(connection, side, record, fragment)
    }

    /// Processes the queue in arrival order: a record waiting for a key stops everything behind it; one waiting
    /// for the ServerHello stops only its own direction. `forced`: the capture ended or the wait was given up, so
    /// nothing waits any more (no key logged; no ServerHello seen).
    private mutating func drain(_ connection: TLSConnection, forced: Bool) {
        if forced { connection.waitsNoLonger = true }
        var index = 0
        var done = [Bool](repeating: false, count: connection.pending.count)
        var blockedSides = [false, false]
        var stoppedForKey = false
        while index < connection.pending.count {
            let pending = connection.pending[index]
            if blockedSides[pending.side] {
                index += 1
                continue
            }
            if case .record(let record) = pending.event {
                let hadServerHello = connection.serverHello != nil
                let result = handleHeld(connection, pending)
                if result == .waitForKey {
                    stoppedForKey = true
                    break
                }
                if result == .waitForServerHello {
                    if forced {
                        connection.directions[pending.side].recordsWithoutServerHello += 1
                    } else {
                        blockedSides[pending.side] = true
                        index += 1
                        continue
                    }
                }
                done[index] = true
                if record.spilled != nil {
                    connection.spilledBytes -= HeldRecord.headerLength + record.length
                    releaseSpilled(HeldRecord.headerLength + record.length)
                } else {
                    connection.pendingBytes -= HeldRecord.headerLength + record.length
                    heldBytes -= HeldRecord.headerLength + record.length
                }
                if !hadServerHello && connection.serverHello != nil && blockedSides[0] {
                    // The ServerHello lets the client's waiting records go on, before anything that came after it.
                    blockedSides = [false, false]
                    index = 0
                    continue
                }
            } else {
                done[index] = true
                process(connection, pending)
            }
            index += 1
        }
        var kept: [Pending] = []
        for (index, pending) in connection.pending.enumerated() where !done[index] { kept.append(pending) }
        connection.pending = kept
        connection.waitsForKey = stoppedForKey
        if !stoppedForKey { connection.waitingSince = nil }
        connection.directions[0].waitsForServerHello = blockedSides[0]
        connection.directions[1].waitsForServerHello = blockedSides[1]
        if stoppedForKey {
            waitingForKeys.insert(connection.id)
        } else {
            waitingForKeys.remove(connection.id)
        }
    }

    /// After a record handled at once: if it was the ServerHello, the client's records waiting for it go on now.
    private mutating func releaseAfterServerHello(_ connection: TLSConnection) {
        if connection.serverHello != nil && (connection.directions[0].waitsForServerHello || connection.directions[1].waitsForServerHello) {
            drain(connection, forced: false)
        }
    }

    /// A gap or an end, in its place among the connection's records.
    private mutating func process(_ connection: TLSConnection, _ pending: Pending) {
        let direction = Self.direction(pending.side)
        let state = connection.directions[pending.side]
        switch pending.event {
        case .record:
            break  // records go through `handle` (see `submit` and `drain`)
        case .gap(let length, let offset, let warn):
            if warn {
                inner.warning(connection.id, TLSConnectionWarning.streamLost(Self.direction(pending.side), length: length,
                                                                           offset: offset), at: pending.time)
            }
            if state.forwardedAny { inner.streamGap(connection.id, direction, length: length, at: pending.time) }
        case .end(let reason):
            inner.streamEnded(connection.id, direction, reason: reason, at: pending.time)
        }
    }

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
        var cursor = ByteCursor(bytes)
        guard let header = TLSRecordHeader(&cursor) else { return nil }
        let state = connection.directions[side]
        guard header.isPlausible, header.length <= limits.maxRecordLength else {
            state.stopped = true
            inner.warning(connection.id, TLSConnectionWarning.notARecord(
                Self.direction(side), offset: state.offset, type: header.type, version: header.version,
                length: header.length, maxLength: limits.maxRecordLength), at: time)
            return 0
        }
        guard let fragment = cursor.take(header.length) else { return nil }
        // Read in place, and copied only if it has to wait.
        let record = HeldRecord(type: header.type, version: header.version, fragment: [], length: fragment.count,
                                offset: state.offset, time: time)
        submitRecord(connection, side, record, fragment)
        return TLSRecordHeader.size + header.length
    }

    // MARK: One record

    /// What became of a record: handled (decrypted, or decided it never will be), or it waits.
    enum RecordResult { case done, waitForServerHello, waitForKey }

    private mutating func handle(_ connection: TLSConnection, _ side: Int, _ record: HeldRecord,
                                 _ fragment: UnsafeRawBufferPointer) -> RecordResult {
        // Until the ServerHello says which version and suite, the client's later records cannot be read.
        if side == 0 && connection.clientHello != nil && connection.serverHello == nil { return .waitForServerHello }
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
                return keyMissing(connection, side, fragmentLength: fragment.count, at: record.time)
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
        // A later stage's secret not read yet, after one that was: key log lines of a session are written in
        // order, so it may still come (an earlier one missing then never will).
        var laterKeyMissing = false
        // The current stage first; when it fails, a later one (0-RTT refused, Finished not seen) may be the right one.
        for stage in state.stage.rawValue...Stage13.application.rawValue {
            let candidate = Stage13(rawValue: stage)!
            var protection: RecordProtection
            if candidate == state.stage, let current = state.protection {
                protection = current
            } else {
                guard let secret = trafficSecret(connection, side, candidate),
                      let fresh = RecordProtection.tls13(secret: secret, suite: suite) else {
                    if anyKey { laterKeyMissing = true }
                    continue
                }
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
        if !anyKey || laterKeyMissing && mayWaitForKey(connection, side) {
            return keyMissing(connection, side, fragmentLength: fragment.count, at: record.time)
        }
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

    /// Whether a record may wait for its key: the key log is followed, waiting is allowed, and this connection
    /// has not stopped waiting.
    private func mayWaitForKey(_ connection: TLSConnection, _ side: Int) -> Bool {
        limits.keyWait > .zero && keys.follows && !connection.waitsNoLonger
            && !connection.directions[side].droppingForNoKey
    }

    private mutating func keyMissing(_ connection: TLSConnection, _ side: Int, fragmentLength: Int,
                                     at time: Timestamp) -> RecordResult {
        if mayWaitForKey(connection, side) { return .waitForKey }
        let state = connection.directions[side]
        state.recordsWithoutKey += 1
        state.bytesWithoutKey += fragmentLength
        state.droppingForNoKey = true
        connection.noKey = true
        emitSummary(connection, at: time)
        return .done
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
                let direction = Self.direction(side)
                bytes.withUnsafeBytes { inner.streamData(connection.id, direction, $0, at: record.time) }
            default:
                break  // alerts: the connection's end shows in TCP anyway
            }
        case .authenticationFailed:
            connection.authenticationFailures += 1
            inner.warning(connection.id, TLSConnectionWarning.authenticationFailed(
                Self.direction(side), offset: record.offset, length: fragmentLength), at: record.time)
            if state.forwardedAny {
                inner.streamGap(connection.id, Self.direction(side), length: fragmentLength,
                                at: record.time)
            }
        case .malformed(let reason):
            inner.warning(connection.id, TLSConnectionWarning.malformedRecord(Self.direction(side), offset: record.offset,
                                                                            reason: reason), at: record.time)
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
        } else if connection.keyWaitExpired && (connection.noKey || connection.secrets == nil) {
            decryption = .noKeyWithin(seconds: limits.keyWaitSeconds)
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

/// One thing a connection's direction told the TLS layer, kept in arrival order while something before it waits.
struct Pending {
    enum Event {
        case record(HeldRecord)
        /// `warn`: the direction was still being read when the bytes were lost (else it had stopped already).
        case gap(length: Int, offset: Int, warn: Bool)
        case end(StreamEndReason)
    }

    var side: Int
    var time: Timestamp
    var event: Event
}

/// A record kept until its key or its session's ServerHello is known.
struct HeldRecord {
    var type: UInt8
    var version: UInt16
    /// The record's bytes when held in memory (empty when `spilled`, or when not held at all).
    var fragment: [UInt8]
    /// The record's length (its fragment's, without the header).
    var length: Int
    /// Where the record's bytes are in the spill file, when held there.
    var spilled: SpillFile.Extent? = nil
    /// Where the record starts in its direction's stream (for warnings).
    var offset: Int
    var time: Timestamp

    static let headerLength = 5
}

/// TLS 1.3 key stages of one direction, in the order they are used.
enum Stage13: Int {
    case early, handshake, application
}

/// Per-direction state: the record buffer, handshake reassembly, keys in use, what could not be decrypted.
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
    /// A record of this direction waits for the ServerHello (and so does everything after it in this direction).
    var waitsForServerHello = false
    var stopped = false
    var droppingForNoKey = false
    var forwardedAny = false
    /// Records decided as having no key, and their bytes (reported when the connection closes).
    var recordsWithoutKey = 0
    var bytesWithoutKey = 0
    var recordsWithoutServerHello = 0

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
    /// Events waiting behind a record that waits (see `TLSDecryptingConsumer`), in arrival order.
    var pending: [Pending] = []
    /// Wire bytes of the waiting records held in memory, and of those spilled to the file (headers included).
    var pendingBytes = 0
    var spilledBytes = 0
    /// When (capture time) the first record that still waits for a key began waiting.
    var waitingSince: Timestamp?
    /// The connection stopped waiting at `TLSDecryptionLimits.keyWait`: its missing key is worded so.
    var keyWaitExpired = false
    /// The first of `pending` waits for a key.
    var waitsForKey = false
    /// The capture ended or the hold limit was passed: a missing key is missing for good.
    var waitsNoLonger = false
    /// When TCP closed the connection, if that is still to be passed on behind waiting records.
    var closedAt: Timestamp?

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
