// Longer than 600 lines: `process(_:at:into:)` is TCP's segment state machine for one connection (handshake,
// re-anchoring, holes, overlaps, FIN and RST ordering, limits) and reads best as one function beside the flushing
// and eviction code that shares its private state; split across files, each part would need that state internal.
import PacketDecoding

/// Counters over everything a reassembler has seen, for reports and tests.
public struct ReassemblyStatistics: Sendable, Hashable {
    public var segments = 0
    public var connectionsOpened = 0
    /// Payload bytes handed to the consumer as data.
    public var bytesDelivered = 0
    /// Bytes announced as gaps.
    public var gapBytes = 0
    /// Payload bytes that repeated bytes already seen (retransmissions and overlaps).
    public var duplicateBytes = 0
    /// Segments that arrived ahead of a hole and were buffered.
    public var outOfOrderSegments = 0
    /// Overlaps whose bytes differed from the ones seen first (the first ones were kept).
    public var conflictingOverlaps = 0
    /// Segments that started nothing and belonged to nothing (a stray ACK or RST), came after a close, or lay
    /// further ahead than any TCP window reaches (2^30 bytes).
    public var ignoredSegments = 0
    /// Times a limit forced a hole to be given up or a connection to be evicted.
    public var limitHits = 0
    /// The most out-of-order bytes buffered between two segments, over all connections. (Within one call the
    /// segment being stored may briefly add up to its own size before the limits release older data.)
    public var peakBufferedBytes = 0
    public var peakConnections = 0
}

/// TCP stream reassembly: turns captured segments, in capture order, into per-direction ordered byte streams for
/// a `StreamConsumer`, with every hole announced as a gap. See docs/reassembly.md for the rules.
///
/// A value type driven from one thread. In-order data goes from the capture's buffer straight to the consumer;
/// only data that arrives ahead of a hole is copied, and only up to `limits`.
public struct TCPReassembler: Sendable {
    public let limits: ReassemblyLimits
    private var counters = ReassemblyStatistics()
    /// Bytes delivered by connections already forgotten.
    private var retiredDeliveredBytes = 0

    /// Counters over everything seen so far. Costs a walk over the tracked connections (for `bytesDelivered`),
    /// so read it for reports, not per packet.
    public var statistics: ReassemblyStatistics {
        var result = counters
        result.bytesDelivered = retiredDeliveredBytes
        for s in table.values {
            result.bytesDelivered += slots[s].toServer.deliveredBytes + slots[s].toClient.deliveredBytes
        }
        return result
    }
    /// Out-of-order bytes buffered right now, over all connections.
    public private(set) var bufferedBytes = 0

    private var table: [ConnectionKey: Int] = [:]
    private var slots: [Connection] = []
    private var freeSlots: [Int] = []
    /// Slots whose connection has buffered bytes: the only ones the total limit needs to look at.
    private var buffering: Set<Int> = []
    private var nextConnectionID: UInt64 = 1
    private var latestTime: Timestamp?
    private var nextIdleCheck: Timestamp?

    public init(limits: ReassemblyLimits = .default) {
        self.limits = limits
    }

    /// Connections tracked, including recently closed ones kept to absorb late retransmissions.
    public var connectionCount: Int { table.count }
    /// Connections whose streams are still open.
    public var openConnectionCount: Int { table.values.count { slots[$0].state == .open } }

    // MARK: Entry points

    /// Feeds one decoded packet; anything but an unfragmented TCP segment is ignored.
    public mutating func process<Consumer: StreamConsumer>(_ packet: DecodedPacket, into consumer: inout Consumer) {
        guard let segment = packet.tcp else { return }
        process(segment, at: packet.timestamp, into: &consumer)
    }

    /// Feeds one decoded TCP segment captured at `time`. Its payload is only read during the call.
    public mutating func process<Consumer: StreamConsumer>(_ segment: TCPSegment, at time: Timestamp,
                                                           into consumer: inout Consumer) {
        var signed = false
        if segment.flags.contains(.rst) {
            // Only RSTs need the look: TCP-MD5 (kind 19, RFC 2385) or TCP-AO (kind 29, RFC 5925).
            for option in segment.optionIterator where option.kind == 19 || option.kind == 29 { signed = true }
        }
        process(source: segment.source, destination: segment.destination, sequenceNumber: segment.sequenceNumber,
                acknowledgmentNumber: segment.acknowledgmentNumber, flags: segment.flags, payload: segment.payload,
                payloadLength: segment.payloadLength, at: time, into: &consumer, signedReset: signed)
    }

    /// Feeds one TCP segment by its fields. `payload` holds the captured bytes; `payloadLength` is the length the
    /// IP header gave (more than `payload.count` when the snap length cut the packet), nil when all were captured.
    public mutating func process<Consumer: StreamConsumer>(
        source: Endpoint, destination: Endpoint, sequenceNumber: UInt32, acknowledgmentNumber: UInt32,
        flags: TCPFlags, payload: UnsafeRawBufferPointer, payloadLength: Int? = nil, at time: Timestamp,
        into consumer: inout Consumer, signedReset: Bool = false
    ) {
        counters.segments += 1
        if latestTime.map({ time > $0 }) ?? true { latestTime = time }
        if let check = nextIdleCheck, time >= check {
            expireIdle(now: time, into: &consumer)
        }
        if nextIdleCheck == nil || time >= nextIdleCheck! {
            nextIdleCheck = time.adding(seconds: sweepInterval)
        }

        let key = ConnectionKey(source, destination)
        var slot = table[key]
        /// A SYN placed the bytes of a connection opened by data: it is announced once the SYN's own direction has
        /// started, so the gates of the held bytes measure against the right start.
        var releaseAfterSYN = false
        let isSYN = flags.contains(.syn), isACK = flags.contains(.ack), isRST = flags.contains(.rst)

        if let existing = slot {
            if slots[existing].state == .closed {
                // A closed 4-tuple reopens only with a new SYN; anything else is a late retransmission.
                let direction = slots[existing].direction(from: source)
                if isSYN && !isRST && slots[existing][direction].initialSequence != sequenceNumber {
                    remove(slot: existing)
                    slot = nil
                } else {
                    slots[existing].lastSeen = time
                    counters.ignoredSegments += 1
                    return
                }
            } else if slots[existing].isProvisional && isSYN && !isRST {
                if reanchor(slot: existing, synFrom: source, sequence: sequenceNumber, isSYNACK: isACK) {
                    releaseAfterSYN = true
                } else {
                    // The held bytes lie before this SYN or far beyond it: another connection's on this 4-tuple.
                    release(slot: existing, synSeen: false, at: time, into: &consumer)
                    endReusedConnection(slot: existing, at: time, into: &consumer)
                    slot = nil
                }
            } else if isSYN && !isACK && !isRST {
                let direction = slots[existing].direction(from: source)
                let half = slots[existing][direction]
                if half.phase != .unseen && half.initialSequence == nil && half.startSequence == sequenceNumber &+ 1 {
                    // A SYN reordered behind this direction's first bytes: the same connection after all.
                    slots[existing][direction].initialSequence = sequenceNumber
                } else if half.phase != .unseen && half.initialSequence != sequenceNumber {
                    // The 4-tuple was reused before we saw the old connection end.
                    endReusedConnection(slot: existing, at: time, into: &consumer)
                    slot = nil
                }
            }
        }

        let captured = payload.count
        let onWire = max(payloadLength ?? captured, captured)
        let opensConnection = slot == nil
        if slot == nil {
            // Only a SYN or a segment with data starts tracking; a stray ACK, FIN or RST would only make noise.
            guard (isSYN || onWire > 0) && !isRST else {
                counters.ignoredSegments += 1
                return
            }
            slot = openConnection(key: key, source: source, destination: destination, flags: flags, at: time,
                                  into: &consumer)
        }
        guard let s = slot else { return }
        slots[s].lastSeen = time
        let id = slots[s].id
        let direction = slots[s].direction(from: source)
        if !opensConnection && !isSYN && slots[s][direction].phase == .unseen && isACK
            && !acknowledgmentIsPlausible(acknowledgmentNumber, for: slots[s][direction.reversed]) {
            // The first segment of this direction acknowledges bytes its peer's stream, begun by a SYN, never had:
            // a late segment of an earlier connection on this 4-tuple (its final ACK or RST after a new SYN).
            counters.ignoredSegments += 1
            return
        }
        if slots[s].isProvisional && !opensConnection && !releaseAfterSYN
            && (isRST || slots[s][direction].phase == .unseen
                || time.seconds(since: slots[s].heldSince) >= limits.acknowledgedHoleTimeoutSeconds) {
            // The peer of the held bytes showed up without a SYN (or the hold is over): a mid-stream pickup.
            release(slot: s, synSeen: false, at: time, into: &consumer)
        }

        if isRST {
            if let reason = reasonToIgnoreReset(slot: s, direction: direction, sequence: sequenceNumber,
                                                signed: signedReset) {
                counters.ignoredSegments += 1
                if !slots[s].warnedAboutIgnoredReset {
                    slots[s].warnedAboutIgnoredReset = true
                    consumer.warning(id, ReassemblyWarning.resetIgnored(reason), at: time)
                }
                return
            }
            slots[s].wasReset = true
            if slots[s][direction].phase == .open {
                // Nothing of this direction lies after the RST's sequence number; bytes below it may still come.
                let released = slots[s][direction].setFIN(at: sequenceNumber)
                account(gap: 0, released: released, slot: s)
            }
            if slots[s].toServer.isWaitingOnHole || slots[s].toClient.isWaitingOnHole {
                // Late segments can still fill the holes (captures merged or reordered): wait for them, as long as
                // the acknowledged-hole delay, then give up what is missing (`closeIfOverdue`).
                slots[s].closingSince = slots[s].closingSince ?? time
                for side in [StreamDirection.clientToServer, .serverToClient] where !slots[s][side].isWaitingOnHole {
                    let ended = slots[s][side].end(.reset, at: time, id: id, direction: side, into: &consumer)
                    account(gap: ended.gap, released: ended.released, slot: s)
                }
                closeIfBothEnded(slot: s, at: time, into: &consumer)
                return
            }
            closeConnection(slot: s, reason: .reset, at: time, into: &consumer)
            return
        }

        // This direction's own bytes.
        if slots[s][direction].phase == .unseen {
            if isSYN {
                slots[s][direction].initialSequence = sequenceNumber
                slots[s][direction].start(at: sequenceNumber &+ 1)
                if let hint = slots[s][direction].acknowledgedHint {
                    // The peer acknowledged bytes of this direction before its SYN was seen (a merged capture):
                    // if they never show up, the acknowledged-hole delay gives them up.
                    slots[s][direction].noteAcknowledgment(hint, at: time)
                }
            } else {
                // Picked up mid-stream: start at the first byte seen, or at what the peer already acknowledged
                // when that is a little earlier (so a reordered first segment still gets buffered, not lost).
                var start = sequenceNumber
                if let hint = slots[s][direction].acknowledgedHint {
                    let ahead = sequenceDistance(from: hint, to: sequenceNumber)
                    if ahead > 0 && ahead <= limits.maxBufferedBytesPerConnection { start = hint }
                }
                slots[s][direction].start(at: start)
            }
        }
        if releaseAfterSYN { release(slot: s, synSeen: true, at: time, into: &consumer) }
        if slots[s][direction].phase == .open {
            let dataSequence = isSYN ? sequenceNumber &+ 1 : sequenceNumber
            if flags.contains(.fin) {
                let released = slots[s][direction].setFIN(at: dataSequence &+ UInt32(truncatingIfNeeded: onWire))
                account(gap: 0, released: released, slot: s)
            }
            if flags.contains(.fin) && onWire == 0
                && sequenceDistance(from: slots[s][direction].nextSequence, to: dataSequence) > 0 {
                counters.outOfOrderSegments += 1  // a FIN ahead of data still missing
            }
            // Causal order: this segment's ACK says which of the peer's bytes its sender had received. When the
            // peer's delivery is behind that point (the capture shows the two directions out of order), these
            // bytes wait for it, so a response never reaches the consumer before the request it answers.
            var gate: UInt32?
            if isACK && onWire > 0 {
                if let position = deliveryPosition(of: slots[s][direction.reversed]) {
                    let ahead = sequenceDistance(from: position, to: acknowledgmentNumber)
                    // Only a plausible distance: an ACK further ahead than the buffer limit acknowledges a
                    // stream other than the one seen (the peer re-anchored with a new ISN, or the capture lost
                    // megabytes); waiting for it would only stall this direction.
                    if ahead > 0 && ahead <= limits.maxBufferedBytesPerConnection { gate = acknowledgmentNumber }
                } else if slots[s].isProvisional {
                    // The peer's start is not known yet: keep the ACK, measured once it is (`release`).
                    gate = acknowledgmentNumber
                }
            }
            // The same ACK as an offset in the peer's stream, handed on with the bytes (for pairing requests and
            // responses across a gap); held bytes get theirs once the peer's start is known (`release`).
            let acknowledged = isACK && onWire > 0
                ? slots[s][direction.reversed].anchor?.offset(of: acknowledgmentNumber,
                                                              limit: limits.maxBufferedBytesPerConnection)
                : nil
            syncPeerPositions(slot: s)
            let change = slots[s][direction].accept(
                sequence: dataSequence, payload: payload, uncapturedTail: onWire - captured, at: time, id: id,
                direction: direction, into: &consumer, gate: gate, acknowledged: acknowledged)
            account(change, slot: s, at: time, into: &consumer)
            if slots[s][direction].reachedFIN && !slots[s].isProvisional {
                let ended = slots[s][direction].end(slots[s].endReason, at: time, id: id, direction: direction,
                                                    into: &consumer)
                account(gap: ended.gap, released: ended.released, slot: s)
            }
        } else if onWire > 0 {
            counters.duplicateBytes += onWire
        }

        // What this segment acknowledges about the other direction.
        if isACK {
            let other = direction.reversed
            switch slots[s][other].phase {
            case .unseen:
                let earliest = slots[s][other].earliestAcknowledgedHint
                if earliest.map({ sequenceDistance(from: $0, to: acknowledgmentNumber) < 0 }) ?? true {
                    slots[s][other].earliestAcknowledgedHint = acknowledgmentNumber
                }
                if let hint = slots[s][other].acknowledgedHint,
                   sequenceDistance(from: hint, to: acknowledgmentNumber) <= 0 {
                    break
                }
                slots[s][other].acknowledgedHint = acknowledgmentNumber
            case .open:
                // Bytes the peer holds that were not seen, a FIN's included: the sender will not send them again,
                // but a capture merged or reordered may still show them late, so they are waited for as long as
                // the acknowledged-hole delay (Zeek and Suricata also keep a closed connection a while).
                slots[s][other].noteAcknowledgment(acknowledgmentNumber, at: time)
            case .ended:
                break
            }
        }

        releaseGatedData(slot: s, at: time, into: &consumer)
        giveUpOverdueAcknowledgedHoles(slot: s, now: time, into: &consumer)
        enforceBufferLimits(current: s, at: time, into: &consumer)
        releaseGatedData(slot: s, at: time, into: &consumer)

        closeIfBothEnded(slot: s, at: time, into: &consumer)
        // Only a FIN can make both directions finished while the connection stays open (a RST sets it itself).
        if flags.contains(.fin) && slots[s].state == .open && slots[s].closingSince == nil
            && bothDirectionsFinished(slot: s) {
            slots[s].closingSince = time  // both FINs seen, holes below them: wait a while for late segments
        }
        closeIfOverdue(slot: s, now: time, into: &consumer)
    }

    /// A new SYN on a 4-tuple whose connection had not ended: the old one ends (`.evicted`) and is forgotten.
    private mutating func endReusedConnection<Consumer: StreamConsumer>(slot s: Int, at time: Timestamp,
                                                                        into consumer: inout Consumer) {
        consumer.warning(slots[s].id, ReassemblyWarning.reusedBySYN, at: time)
        closeConnection(slot: s, reason: .evicted, at: time, into: &consumer)
        remove(slot: s)
    }

    /// Whether each direction has ended or seen its FIN. Reads the fields in place (no copy of the directions).
    private func bothDirectionsFinished(slot s: Int) -> Bool {
        (slots[s].toServer.phase == .ended || slots[s].toServer.finSequence != nil)
            && (slots[s].toClient.phase == .ended || slots[s].toClient.finSequence != nil)
    }

    /// A connection that is over (both FINs, or a RST) but still had holes below its end: once the
    /// acknowledged-hole delay has passed, the holes are given up as gaps and it closes.
    private mutating func closeIfOverdue<Consumer: StreamConsumer>(slot s: Int, now: Timestamp,
                                                                   into consumer: inout Consumer) {
        guard slots[s].state == .open, let since = slots[s].closingSince,
              now.seconds(since: since) >= limits.acknowledgedHoleTimeoutSeconds else { return }
        closeConnection(slot: s, reason: slots[s].endReason, at: now, into: &consumer)
    }

    /// Whether `acknowledgment` could acknowledge bytes of `half`: when it began with a SYN, an ACK before its
    /// first byte, or further past the last byte seen than the per-connection buffer reaches, belongs to another
    /// connection.
    private func acknowledgmentIsPlausible(_ acknowledgment: UInt32, for half: HalfStream) -> Bool {
        guard half.phase == .open, half.initialSequence != nil else { return true }
        var highest = half.nextSequence
        if let last = half.pending.last, sequenceDistance(from: highest, to: last.end) > 0 { highest = last.end }
        return sequenceDistance(from: half.startSequence, to: acknowledgment) >= 0
            && sequenceDistance(from: highest, to: acknowledgment) <= limits.maxBufferedBytesPerConnection
    }

    /// A SYN (or SYN/ACK) for a connection opened by data: it says who is the client, and where its sender's
    /// stream starts. Returns false when the bytes already held cannot belong to that stream (they lie before it,
    /// or further after it than the per-connection buffer reaches).
    private mutating func reanchor(slot s: Int, synFrom source: Endpoint, sequence: UInt32, isSYNACK: Bool) -> Bool {
        let senderIsClient = !isSYNACK
        if senderIsClient != (slots[s].direction(from: source) == .clientToServer) { slots[s].swapRoles() }
        let direction = slots[s].direction(from: source)
        let half = slots[s][direction]
        guard half.phase == .open else { return true }  // nothing of its sender held: it starts with this SYN
        let ahead = sequenceDistance(from: sequence &+ 1, to: half.startSequence)
        guard ahead >= 0 && ahead <= limits.maxBufferedBytesPerConnection else { return false }
        slots[s][direction].reanchor(initialSequence: sequence)
        return true
    }

    /// Ends the hold on a connection opened by data: announces it (with the roles a SYN gave, or guessed from the
    /// ports when none came: a mid-stream pickup) and delivers what its gates allow.
    private mutating func release<Consumer: StreamConsumer>(slot s: Int, synSeen: Bool, at time: Timestamp,
                                                            into consumer: inout Consumer) {
        guard slots[s].isProvisional else { return }
        slots[s].isProvisional = false
        slots[s].toServer.held = false
        slots[s].toClient.held = false
        let connection = slots[s]
        consumer.connectionOpened(connection.id, client: connection.client, server: connection.server,
                                  at: connection.heldSince)
        if !synSeen {
            consumer.warning(connection.id, ReassemblyWarning.pickedUpMidStream(server: connection.server),
                             at: connection.heldSince)
        }
        syncPeerPositions(slot: s)
        let serverAnchor = slots[s].toServer.anchor, clientAnchor = slots[s].toClient.anchor
        slots[s].toServer.measureHeldGates(against: clientAnchor, limit: limits.maxBufferedBytesPerConnection)
        slots[s].toClient.measureHeldGates(against: serverAnchor, limit: limits.maxBufferedBytesPerConnection)
        releaseGatedData(slot: s, at: time, into: &consumer)
    }

    /// Tells each direction where the other one's delivery stands, for its gates.
    private mutating func syncPeerPositions(slot s: Int) {
        let toServer = slots[s].toServer, toClient = slots[s].toClient
        slots[s].toServer.peerPosition = deliveryPosition(of: toClient)
        slots[s].toClient.peerPosition = deliveryPosition(of: toServer)
    }

    /// How far a direction's delivery has come, for the other direction's gates: its next byte when open; before
    /// its first segment, where the peer's earliest ACK says it starts (a merged capture can show a response
    /// before any byte of the request); nil once ended (nothing more will come, so nothing should wait).
    private func deliveryPosition(of half: HalfStream) -> UInt32? {
        switch half.phase {
        case .open: return half.nextSequence
        case .unseen: return half.earliestAcknowledgedHint
        case .ended: return nil
        }
    }

    /// Delivers data that waited for the other direction, as far as the gates now allow; delivery in one
    /// direction can open the other's gates, so this goes back and forth until neither moves.
    private mutating func releaseGatedData<Consumer: StreamConsumer>(slot s: Int, at time: Timestamp,
                                                                     into consumer: inout Consumer) {
        // The common case, nothing buffered, costs two checks (this runs for every segment).
        guard slots[s].state == .open, !slots[s].toServer.pending.isEmpty || !slots[s].toClient.pending.isEmpty
        else { return }
        let id = slots[s].id
        var moved = true
        while moved {
            moved = false
            for side in 0..<2 {
                let direction: StreamDirection = side == 0 ? .clientToServer : .serverToClient
                syncPeerPositions(slot: s)
                let half = slots[s][direction]
                guard half.phase == .open, let first = half.pending.first,
                      sequenceDistance(from: half.nextSequence, to: first.sequence) <= 0,
                      half.gateIsOpen(first.gate) else { continue }
                let released = slots[s][direction].drain(at: time, id: id, direction: direction, into: &consumer)
                account(gap: 0, released: released, slot: s)
                if released > 0 { moved = true }
                if slots[s][direction].reachedFIN {
                    let ended = slots[s][direction].end(slots[s].endReason, at: time, id: id, direction: direction,
                                                        into: &consumer)
                    account(gap: ended.gap, released: ended.released, slot: s)
                }
            }
        }
    }

    /// Why a real stack would drop this RST, or nil when it ends the connection: it carries a TCP-MD5 or TCP-AO
    /// signature (a stack without the key cannot check it, so it ignores it), or its sequence number lies before
    /// the bytes its sender already sent or beyond any window (RFC 5961 section 3).
    private func reasonToIgnoreReset(slot s: Int, direction: StreamDirection, sequence: UInt32,
                                     signed: Bool) -> ReassemblyWarning.IgnoredReset? {
        if signed { return .signed }
        let half = slots[s][direction]
        guard half.phase == .open else { return nil }
        let distance = sequenceDistance(from: half.nextSequence, to: sequence)
        if distance < 0 || distance > maximumWindow {
            return .outsideWindow(sequence: sequence, nextExpected: half.nextSequence)
        }
        return nil
    }

    private mutating func closeIfBothEnded<Consumer: StreamConsumer>(slot s: Int, at time: Timestamp,
                                                                     into consumer: inout Consumer) {
        if slots[s].state == .open && slots[s].toServer.phase == .ended && slots[s].toClient.phase == .ended {
            slots[s].state = .closed
            consumer.connectionClosed(slots[s].id, at: time)
        }
    }

    /// Ends connections that saw no packet for longer than the idle timeout, forgets closed ones as old, and gives
    /// up acknowledged holes past their delay. `process` calls this as packet time advances (every
    /// `min(idle timeout / 10, acknowledged-hole delay, 60 s)`, at least 0.1 s); call it yourself in a quiet live
    /// capture.
    public mutating func expireIdle<Consumer: StreamConsumer>(now: Timestamp, into consumer: inout Consumer) {
        var expired: [(ConnectionID, Int)] = []
        for s in table.values where now.seconds(since: slots[s].lastSeen) > limits.idleTimeoutSeconds {
            expired.append((slots[s].id, s))
        }
        var open = table.values.filter { slots[$0].state == .open }
        open.sort { slots[$0].id.rawValue < slots[$1].id.rawValue }
        for s in open {
            if slots[s].isProvisional && now.seconds(since: slots[s].heldSince) >= limits.acknowledgedHoleTimeoutSeconds {
                release(slot: s, synSeen: false, at: now, into: &consumer)
            }
            giveUpOverdueAcknowledgedHoles(slot: s, now: now, into: &consumer)
            closeIfOverdue(slot: s, now: now, into: &consumer)
        }
        expired.sort { $0.0.rawValue < $1.0.rawValue }
        for (_, s) in expired {
            if slots[s].state == .open {
                closeConnection(slot: s, reason: .idleTimeout, at: now, into: &consumer)
            }
            remove(slot: s)
        }
    }

    /// Ends every open stream (`.captureEnded`), giving up remaining holes as gaps, and forgets all connections.
    /// `time` defaults to the latest packet time seen.
    public mutating func finish<Consumer: StreamConsumer>(at time: Timestamp? = nil, into consumer: inout Consumer) {
        let when = time ?? latestTime ?? Timestamp(seconds: 0, nanoseconds: 0)
        var open = table.values.filter { slots[$0].state == .open }
        open.sort { slots[$0].id.rawValue < slots[$1].id.rawValue }
        for s in open {
            closeConnection(slot: s, reason: .captureEnded, at: when, into: &consumer)
        }
        for s in Array(table.values) { remove(slot: s) }
    }

    /// Same as `finish(at:into:)`: ends every open stream at `time`.
    public mutating func flush<Consumer: StreamConsumer>(at time: Timestamp, into consumer: inout Consumer) {
        finish(at: time, into: &consumer)
    }

    /// Packet time between sweeps for idle connections and overdue acknowledged holes.
    private var sweepInterval: Double {
        max(0.1, min(limits.idleTimeoutSeconds / 10, limits.acknowledgedHoleTimeoutSeconds, 60))
    }

    // MARK: Connections

    private mutating func openConnection<Consumer: StreamConsumer>(
        key: ConnectionKey, source: Endpoint, destination: Endpoint, flags: TCPFlags, at time: Timestamp,
        into consumer: inout Consumer
    ) -> Int {
        if table.count >= limits.maxConnections {
            evictLeastRecentlyActive(at: time, into: &consumer)
        }
        let sourceIsClient: Bool
        let guessed: Bool
        if flags.contains(.syn) {
            sourceIsClient = !flags.contains(.ack)
            guessed = false
        } else {
            // No SYN: the lower port is the server (well-known and registered ports sit below the ephemeral
            // range); on equal ports, the first segment's destination is.
            sourceIsClient = source.port >= destination.port
            guessed = true
        }
        let id = ConnectionID(nextConnectionID)
        nextConnectionID += 1
        let connection = Connection(key: key, id: id, client: sourceIsClient ? source : destination,
                                    server: sourceIsClient ? destination : source, at: time)
        let slot: Int
        if let free = freeSlots.popLast() {
            slots[free] = connection
            slot = free
        } else {
            slots.append(connection)
            slot = slots.count - 1
        }
        table[key] = slot
        counters.connectionsOpened += 1
        counters.peakConnections = max(counters.peakConnections, table.count)
        if guessed {
            // Announced later (`release`): a SYN captured after these bytes may still place them and say which
            // side is the client.
            slots[slot].isProvisional = true
            slots[slot].toServer.held = true
            slots[slot].toClient.held = true
        } else {
            consumer.connectionOpened(id, client: connection.client, server: connection.server, at: time)
        }
        return slot
    }

    /// Ends both directions (giving up holes as gaps) and reports the close. The slot stays as a closed entry.
    private mutating func closeConnection<Consumer: StreamConsumer>(
        slot s: Int, reason: StreamEndReason, at time: Timestamp, into consumer: inout Consumer
    ) {
        guard slots[s].state == .open else { return }
        release(slot: s, synSeen: false, at: time, into: &consumer)
        let id = slots[s].id
        for direction in [StreamDirection.clientToServer, .serverToClient] {
            // A direction whose FIN (or the RST) was seen ended that way; the holes still below it are given up.
            let how = slots[s][direction].finSequence != nil ? slots[s].endReason : reason
            let ended = slots[s][direction].end(how, at: time, id: id, direction: direction, into: &consumer)
            account(gap: ended.gap, released: ended.released, slot: s)
        }
        slots[s].state = .closed
        consumer.connectionClosed(id, at: time)
    }

    private mutating func remove(slot s: Int) {
        account(gap: 0, released: slots[s].bufferedBytes, slot: s)
        table.removeValue(forKey: slots[s].key)
        retiredDeliveredBytes += slots[s].toServer.deliveredBytes + slots[s].toClient.deliveredBytes
        buffering.remove(s)
        slots[s].state = .free
        slots[s].toServer = HalfStream()
        slots[s].toClient = HalfStream()
        freeSlots.append(s)
    }

    /// Frees an eighth of the table: closed entries first, then the connections idle the longest.
    private mutating func evictLeastRecentlyActive<Consumer: StreamConsumer>(at time: Timestamp,
                                                                              into consumer: inout Consumer) {
        var candidates = Array(table.values)
        candidates.sort { a, b in
            let aOpen = slots[a].state == .open, bOpen = slots[b].state == .open
            if aOpen != bOpen { return !aOpen }
            if slots[a].lastSeen != slots[b].lastSeen { return slots[a].lastSeen < slots[b].lastSeen }
            return slots[a].id.rawValue < slots[b].id.rawValue
        }
        let count = max(1, limits.maxConnections / 8)
        for s in candidates.prefix(count) {
            if slots[s].state == .open {
                counters.limitHits += 1
                consumer.warning(slots[s].id, ReassemblyWarning.connectionLimitReached(limit: limits.maxConnections),
                                 at: time)
                closeConnection(slot: s, reason: .evicted, at: time, into: &consumer)
            }
            remove(slot: s)
        }
    }

    // MARK: Buffer accounting and limits

    /// Bytes the peer acknowledged long enough ago will never be sent again: announce them as gaps. First, in both
    /// directions, the gaps and the bytes after them whose gates are open; then what either side can deliver now
    /// (a request the client sent after a lost response); then, forced, whatever still waits below the
    /// acknowledged points. So a response after a lost one still reaches the consumer after the request it answers.
    private mutating func giveUpOverdueAcknowledgedHoles<Consumer: StreamConsumer>(
        slot s: Int, now: Timestamp, into consumer: inout Consumer
    ) {
        guard !slots[s].isProvisional else { return }
        let toServer = slots[s].toServer.acknowledgedBeyond != nil
            && isOverdue(since: slots[s].toServer.acknowledgedBeyondSince, now: now)
        let toClient = slots[s].toClient.acknowledgedBeyond != nil
            && isOverdue(since: slots[s].toClient.acknowledgedBeyondSince, now: now)
        guard toServer || toClient else { return }
        let id = slots[s].id
        for respectingGates in [true, false] {
            for direction in [StreamDirection.clientToServer, .serverToClient]
            where direction == .clientToServer ? toServer : toClient {
                guard slots[s].state == .open else { return }
                syncPeerPositions(slot: s)
                let step = slots[s][direction].giveUpAcknowledgedHole(at: now, id: id, direction: direction,
                                                                      into: &consumer, respectingGates: respectingGates)
                account(gap: step.gap, released: step.released, slot: s)
                if slots[s][direction].reachedFIN {
                    let ended = slots[s][direction].end(slots[s].endReason, at: now, id: id, direction: direction,
                                                        into: &consumer)
                    account(gap: ended.gap, released: ended.released, slot: s)
                    closeIfBothEnded(slot: s, at: now, into: &consumer)
                }
            }
            releaseGatedData(slot: s, at: now, into: &consumer)
            closeIfBothEnded(slot: s, at: now, into: &consumer)
        }
    }

    private func isOverdue(since: Timestamp, now: Timestamp) -> Bool {
        now.seconds(since: since) >= limits.acknowledgedHoleTimeoutSeconds
    }

    private mutating func account<Consumer: StreamConsumer>(_ change: HalfStreamChange, slot s: Int,
                                                            at time: Timestamp, into consumer: inout Consumer) {
        counters.duplicateBytes += change.duplicate
        if change.outOfOrder { counters.outOfOrderSegments += 1 }
        if change.beyondWindow { counters.ignoredSegments += 1 }
        if change.conflict {
            counters.conflictingOverlaps += 1
            if !slots[s].warnedAboutConflict && !slots[s].isProvisional {
                slots[s].warnedAboutConflict = true
                consumer.warning(slots[s].id, ReassemblyWarning.retransmissionDiffers, at: time)
            }
        }
        bufferedBytes += change.buffered
        account(gap: 0, released: change.released, slot: s)
    }

    private mutating func account(gap: Int, released: Int, slot s: Int) {
        counters.gapBytes += gap
        bufferedBytes -= released
        if slots[s].bufferedBytes > 0 { buffering.insert(s) } else { buffering.remove(s) }
    }

    private mutating func enforceBufferLimits<Consumer: StreamConsumer>(current s: Int, at time: Timestamp,
                                                                        into consumer: inout Consumer) {
        while slots[s].bufferedBytes > limits.maxBufferedBytesPerConnection {
            giveUpOldestHole(slot: s, limit: .bytesPerConnection(limits.maxBufferedBytesPerConnection), at: time,
                             into: &consumer)
        }
        while slots[s].bufferedChunks > limits.maxBufferedSegmentsPerConnection {
            giveUpOldestHole(slot: s, limit: .chunksPerConnection(limits.maxBufferedSegmentsPerConnection), at: time,
                             into: &consumer)
        }
        while bufferedBytes > limits.maxBufferedBytesTotal {
            // The connection whose oldest buffered data has waited longest gives way.
            guard let oldest = buffering.min(by: { a, b in
                let x = slots[a].oldestStall, y = slots[b].oldestStall
                return x != y ? x < y : slots[a].id.rawValue < slots[b].id.rawValue
            }) else { break }
            giveUpOldestHole(slot: oldest, limit: .bytesInAll(limits.maxBufferedBytesTotal), at: time, into: &consumer)
        }
        counters.peakBufferedBytes = max(counters.peakBufferedBytes, bufferedBytes)
    }

    private mutating func giveUpOldestHole<Consumer: StreamConsumer>(
        slot s: Int, limit: ReassemblyWarning.BufferLimit, at time: Timestamp, into consumer: inout Consumer
    ) {
        if slots[s].isProvisional {
            // Held bytes count too: stop holding first (the loop calling this checks the limit again).
            release(slot: s, synSeen: false, at: time, into: &consumer)
            return
        }
        let toServer = slots[s].toServer, toClient = slots[s].toClient
        let direction: StreamDirection
        if toServer.pending.isEmpty {
            direction = .serverToClient
        } else if toClient.pending.isEmpty {
            direction = .clientToServer
        } else {
            direction = toClient.stalledSince < toServer.stalledSince ? .serverToClient : .clientToServer
        }
        let id = slots[s].id
        let step = slots[s][direction].skipToBufferedData(at: time, id: id, direction: direction, into: &consumer)
        counters.limitHits += 1
        account(gap: step.gap, released: step.released, slot: s)
        consumer.warning(id, ReassemblyWarning.gaveUpWaiting(limit, missingBytes: step.gap, direction: direction), at: time)
        if slots[s][direction].reachedFIN {
            let ended = slots[s][direction].end(slots[s].endReason, at: time, id: id, direction: direction,
                                                into: &consumer)
            account(gap: ended.gap, released: ended.released, slot: s)
        }
    }
}

extension Connection {
    /// When the older of the two directions' buffered data started waiting.
    var oldestStall: Timestamp {
        switch (toServer.pending.isEmpty, toClient.pending.isEmpty) {
        case (false, false): return min(toServer.stalledSince, toClient.stalledSince)
        case (false, true): return toServer.stalledSince
        case (true, false): return toClient.stalledSince
        case (true, true): return Timestamp(seconds: .max, nanoseconds: 0)
        }
    }
}
