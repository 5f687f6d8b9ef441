import PacketDecoding

/// Bytes that arrived ahead of a hole, copied (the capture's buffer dies after the callback) until the hole fills.
struct PendingChunk: Sendable {
    var sequence: UInt32
    var bytes: [UInt8]
    /// Causal order: the peer's sequence number this chunk's segment acknowledged. The chunk is not delivered
    /// before the peer's stream has been delivered up to there (its sender had received those bytes first).
    var gate: UInt32? = nil
    /// When the bytes were captured, kept only for bytes held before the connection was announced (see
    /// `HalfStream.held`): they are delivered with it, so a held request still starts when it was captured.
    var capturedAt: Timestamp? = nil
    /// How far into the peer's stream this chunk's first segment acknowledged (see `StreamConsumer.streamData`).
    /// Segments with different ones are kept in separate chunks, so delivery can say it exactly.
    var acknowledged: Int? = nil
    var end: UInt32 { sequence &+ UInt32(truncatingIfNeeded: bytes.count) }
}

/// A sequence number of one direction and its stream offset (bytes delivered or announced as gaps before it):
/// enough to turn the peer's ACK numbers into offsets.
struct StreamAnchor {
    var sequence: UInt32
    var offset: Int

    /// The offset of `sequence`; nil before the stream's start or further ahead than `limit` (not its bytes).
    func offset(of sequence: UInt32, limit: Int) -> Int? {
        let ahead = sequenceDistance(from: self.sequence, to: sequence)
        guard ahead <= limit, offset + ahead >= 0 else { return nil }
        return offset + ahead
    }
}

/// What one call changed, for the owner's accounting.
struct HalfStreamChange {
    /// Bytes newly copied into the out-of-order buffer.
    var buffered = 0
    /// Bytes that left the buffer (delivered or given up).
    var released = 0
    /// Bytes of this segment that repeated bytes already seen (retransmission or overlap).
    var duplicate = 0
    /// An overlap carried different bytes than the ones seen first.
    var conflict = false
    var outOfOrder = false
    /// The segment lay further ahead than any window allows and was ignored.
    var beyondWindow = false
}

/// The largest receive window TCP can advertise (65,535 scaled by 2^14): no valid byte lies further ahead.
let maximumWindow = 1 << 30

/// One direction of a connection: the next sequence number owed to the consumer and the buffered bytes beyond it.
///
/// Invariants: `pending` is sorted, its chunks do not overlap, and each starts after `nextSequence` (a chunk that
/// becomes contiguous is delivered at once by `drain`), except a chunk held by its gate, which may start at
/// `nextSequence` and waits there until the peer's delivery reaches the gate (or a limit gives up waiting).
struct HalfStream: Sendable {
    enum Phase { case unseen, open, ended }

    var phase: Phase = .unseen
    /// Sequence number of the next byte the consumer gets.
    var nextSequence: UInt32 = 0
    /// The ISN, when this direction's SYN was seen.
    var initialSequence: UInt32?
    /// Before the first segment of this direction: the latest ACK the peer sent for it, a hint where it starts.
    var acknowledgedHint: UInt32?
    /// Before the first segment of this direction: the lowest ACK the peer sent for it, where its first byte will
    /// most likely be. The peer's gates measure against it until this direction opens.
    var earliestAcknowledgedHint: UInt32?
    /// The sequence number the FIN occupies, once a FIN was seen (first FIN wins).
    var finSequence: UInt32?
    var pending = ChunkQueue()
    var pendingBytes = 0
    /// When the buffer last went from empty to non-empty: the age of the oldest data waiting on a hole.
    var stalledSince = Timestamp(seconds: 0, nanoseconds: 0)
    /// The highest ACK from the peer beyond `nextSequence` (bytes the peer holds that were not seen), and since when.
    var acknowledgedBeyond: UInt32?
    var acknowledgedBeyondSince = Timestamp(seconds: 0, nanoseconds: 0)

    /// Where the stream started (ISN+1 after a SYN).
    var startSequence: UInt32 = 0
    /// Bytes handed to the consumer as data.
    var deliveredBytes = 0
    /// Bytes handed to the consumer as data or announced as gaps: the consumer's offset of `nextSequence`, which
    /// ACK numbers of the peer are measured against (`StreamConsumer.streamData`'s `acknowledged`).
    var position = 0
    /// Where the peer's delivery stands (its `nextSequence`), nil when the peer is not open: gates compare
    /// against it. The reassembler sets it before each call.
    var peerPosition: UInt32?

    /// The connection is not announced yet (opened by data without a SYN, see `Connection.isProvisional`): every
    /// byte is buffered and nothing is delivered, so a late SYN can still place it and set the roles.
    var held = false

    /// Whether a chunk's gate lets it go: no gate, the peer is not open, or the peer's delivery reached it.
    func gateIsOpen(_ gate: UInt32?) -> Bool {
        if held { return false }
        guard let gate, let peerPosition else { return true }
        return sequenceDistance(from: peerPosition, to: gate) <= 0
    }

    /// A chunk at the front waits on its gate: new in-order bytes must queue behind it.
    var isHeldByGate: Bool {
        guard let first = pending.first else { return false }
        return sequenceDistance(from: nextSequence, to: first.sequence) <= 0 && !gateIsOpen(first.gate)
    }

    mutating func start(at sequence: UInt32) {
        phase = .open
        nextSequence = sequence
        startSequence = sequence
        position = 0
    }

    /// `count` more bytes were delivered or announced as a gap.
    private mutating func advance(by count: Int) {
        nextSequence &+= UInt32(truncatingIfNeeded: count)
        position += count
    }

    /// Where this direction's delivery stands, to measure the peer's ACK numbers against; nil before it opened
    /// or while its bytes are held (its start may still move).
    var anchor: StreamAnchor? {
        phase == .unseen || held ? nil : StreamAnchor(sequence: nextSequence, offset: position)
    }

    var isWaitingOnHole: Bool {
        if !pending.isEmpty { return true }
        if let finSequence { return sequenceDistance(from: nextSequence, to: finSequence) > 0 }
        return false
    }

    /// Whether the FIN has been reached: every byte before it was delivered or announced as a gap.
    var reachedFIN: Bool {
        guard let finSequence else { return false }
        return sequenceDistance(from: nextSequence, to: finSequence) <= 0
    }

    /// Takes the captured `payload` of a segment whose first byte has number `sequence`; `uncapturedTail` more
    /// bytes were on the wire but cut by the snap length. Delivers what is in order straight from `payload`
    /// (no copy) and copies the rest into the buffer. Bytes already delivered or buffered win over new ones.
    ///
    /// `gate`: the peer's bytes this segment acknowledged (see `PendingChunk.gate`); when the peer's delivery has
    /// not reached it, the segment's bytes are buffered until it has, so the consumer sees the two directions in
    /// causal order even when the capture shows them the other way round. `acknowledged`: the same ACK as an
    /// offset in the peer's stream, handed on with the bytes.
    mutating func accept<Consumer: StreamConsumer>(
        sequence: UInt32, payload: UnsafeRawBufferPointer, uncapturedTail: Int, at time: Timestamp,
        id: ConnectionID, direction: StreamDirection, into consumer: inout Consumer, gate: UInt32? = nil,
        acknowledged: Int? = nil
    ) -> HalfStreamChange {
        var change = HalfStreamChange()
        guard phase == .open else { return change }
        var payload = payload
        var uncapturedTail = uncapturedTail
        if let finSequence {
            // Nothing exists after the FIN; bytes claiming to be there are not part of the stream.
            let room = max(0, sequenceDistance(from: sequence, to: finSequence))
            if payload.count > room {
                change.duplicate += payload.count - room
                payload = UnsafeRawBufferPointer(rebasing: payload[0..<room])
            }
            uncapturedTail = min(uncapturedTail, room - payload.count)
        }
        let count = payload.count
        var offset = sequenceDistance(from: nextSequence, to: sequence)
        if offset > maximumWindow {
            // Further ahead than any TCP window (2^30 with scaling) can reach: not this stream's bytes.
            change.beyondWindow = true
            return change
        }
        let gated = !gateIsOpen(gate)
        if count > 0 && offset > 0 {
            change.outOfOrder = true
            store(sequence: sequence, payload: payload, at: time, gate: gated ? gate : nil, acknowledged: acknowledged,
                  change: &change)
        } else if count > 0 && (gated || isHeldByGate) {
            // In order but not yet due: buffer from the next byte owed (earlier bytes are repeats).
            let repeated = min(count, -offset)
            change.duplicate += repeated
            if repeated < count {
                store(sequence: nextSequence, payload: UnsafeRawBufferPointer(rebasing: payload[repeated...]),
                      at: time, gate: gated ? gate : nil, acknowledged: acknowledged, change: &change)
            }
            change.released += drain(at: time, id: id, direction: direction, into: &consumer)
        } else if count > 0 {
            change.duplicate += min(count, -offset)
            if !pending.isEmpty { compareWithPending(sequence: sequence, payload: payload, change: &change) }
            while offset + count > 0 {
                let from = -offset
                if isHeldByGate {
                    // Delivery reached a buffered chunk that waits on its gate: the rest of this segment queues
                    // behind it (found by fuzzing: without this the loop made no progress and never ended).
                    store(sequence: nextSequence, payload: UnsafeRawBufferPointer(rebasing: payload[from...]),
                          at: time, acknowledged: acknowledged, change: &change)
                    break
                }
                var upTo = count
                if let first = pending.first {
                    let firstAt = sequenceDistance(from: nextSequence, to: first.sequence)
                    upTo = min(count, from + firstAt)
                }
                if upTo > from {
                    consumer.streamData(id, direction, UnsafeRawBufferPointer(rebasing: payload[from..<upTo]), at: time,
                                        acknowledged: acknowledged)
                    deliveredBytes += upTo - from
                    advance(by: upTo - from)
                }
                change.released += drain(at: time, id: id, direction: direction, into: &consumer)
                offset = sequenceDistance(from: nextSequence, to: sequence)
            }
        }
        // Bytes cut by the snap length will never be seen; say so right away rather than stall the stream on them.
        let capturedEnd = sequence &+ UInt32(truncatingIfNeeded: count)
        if uncapturedTail > 0 && !held && sequenceDistance(from: nextSequence, to: capturedEnd) == 0 {
            consumer.streamGap(id, direction, length: uncapturedTail, at: time)
            advance(by: uncapturedTail)
            change.released += drain(at: time, id: id, direction: direction, into: &consumer)
        }
        return change
    }

    /// Copies the parts of an out-of-order segment that no buffered chunk covers yet.
    private mutating func store(sequence: UInt32, payload: UnsafeRawBufferPointer, at time: Timestamp,
                                gate: UInt32? = nil, acknowledged: Int?, change: inout HalfStreamChange) {
        let wasEmpty = pending.isEmpty
        let start = sequenceDistance(from: nextSequence, to: sequence)
        let end = start + payload.count
        var cursor = start
        // The first chunk ending after the segment's start (chunks are sorted, so their ends are too).
        var index = 0
        var upper = pending.count
        while index < upper {
            let middle = (index + upper) / 2
            if sequenceDistance(from: nextSequence, to: pending[middle].end) <= cursor {
                index = middle + 1
            } else {
                upper = middle
            }
        }
        while cursor < end {
            while index < pending.count && sequenceDistance(from: nextSequence, to: pending[index].end) <= cursor {
                index += 1
            }
            let stop: Int
            if index == pending.count {
                stop = end
            } else {
                let chunkStart = sequenceDistance(from: nextSequence, to: pending[index].sequence)
                if chunkStart <= cursor {
                    // Overlap with bytes seen first: they stay; remember if the new ones disagree.
                    let chunkEnd = chunkStart + pending[index].bytes.count
                    let overlapEnd = min(end, chunkEnd)
                    if !equalBytes(payload, from: cursor - start, pending[index].bytes, from: cursor - chunkStart,
                                   count: overlapEnd - cursor) {
                        change.conflict = true
                    }
                    change.duplicate += overlapEnd - cursor
                    cursor = overlapEnd
                    continue
                }
                stop = min(end, chunkStart)
            }
            let bytes = UnsafeRawBufferPointer(rebasing: payload[(cursor - start)..<(stop - start)])
            let chunkSequence = nextSequence &+ UInt32(truncatingIfNeeded: cursor)
            if index > 0 && pending[index - 1].end == chunkSequence && (gate == nil || pending[index - 1].gate == gate)
                && (pending[index - 1].capturedAt == nil) == !held && pending[index - 1].acknowledged == acknowledged {
                // Continues the previous chunk (the usual case: a stream flowing on behind one hole, its segments
                // all acknowledging the same peer bytes). A gated segment joins only a chunk with the same gate,
                // so it is never released before its own; bytes held before the announcement keep their own
                // capture time, so later ones do not join them; a new ACK (the peer spoke in between: a request
                // and its response) starts a new chunk, so the consumer learns it with the right bytes.
                pending[index - 1].bytes.append(contentsOf: bytes)
            } else {
                pending.insert(PendingChunk(sequence: chunkSequence, bytes: [UInt8](bytes), gate: gate,
                                            capturedAt: held ? time : nil, acknowledged: acknowledged), at: index)
                index += 1
            }
            pendingBytes += bytes.count
            change.buffered += bytes.count
            cursor = stop
        }
        if wasEmpty && !pending.isEmpty { stalledSince = time }
    }

    /// Notes whether an in-order segment disagrees with buffered bytes it overlaps (those win when delivered).
    private func compareWithPending(sequence: UInt32, payload: UnsafeRawBufferPointer, change: inout HalfStreamChange) {
        let segmentEnd = sequenceDistance(from: sequence, to: sequence &+ UInt32(truncatingIfNeeded: payload.count))
        for chunk in pending {
            let chunkStart = sequenceDistance(from: sequence, to: chunk.sequence)
            if chunkStart >= segmentEnd { break }
            let lower = max(0, chunkStart)
            let upper = min(segmentEnd, chunkStart + chunk.bytes.count)
            if upper > lower {
                change.duplicate += upper - lower
                if !equalBytes(payload, from: lower, chunk.bytes, from: lower - chunkStart, count: upper - lower) {
                    change.conflict = true
                }
            }
        }
    }

    /// A late SYN says where this direction really starts: `sequence` (ISN+1), at or before the first byte held.
    /// Only before anything was delivered; the held chunks stay where their sequence numbers put them.
    mutating func reanchor(initialSequence isn: UInt32) {
        initialSequence = isn
        nextSequence = isn &+ 1
        startSequence = isn &+ 1
        position = 0
    }

    /// Gates measured against a peer whose start was unknown when they were set (held bytes keep their raw ACK
    /// as the gate): each becomes an offset in the peer's stream, and one further ahead of the peer's delivery than
    /// `limit` acknowledges a stream other than the one seen and would only stall this direction.
    mutating func measureHeldGates(against peer: StreamAnchor?, limit: Int) {
        for index in 0..<pending.count {
            guard let gate = pending[index].gate else { continue }
            pending[index].acknowledged = peer?.offset(of: gate, limit: limit)
            if let peerPosition, sequenceDistance(from: peerPosition, to: gate) > limit { pending[index].gate = nil }
        }
    }

    /// Records the FIN (the first one seen wins) and drops buffered bytes claiming to lie after it.
    /// Returns the bytes that left the buffer.
    mutating func setFIN(at sequence: UInt32) -> Int {
        guard finSequence == nil else { return 0 }
        finSequence = sequence
        var released = 0
        while let last = pending.last, sequenceDistance(from: sequence, to: last.end) > 0 {
            let keep = max(0, sequenceDistance(from: last.sequence, to: sequence))
            released += last.bytes.count - keep
            if keep == 0 {
                pending.removeLast()
            } else {
                pending[pending.count - 1].bytes.removeLast(last.bytes.count - keep)
            }
        }
        pendingBytes -= released
        return released
    }

    /// Notes an ACK from the peer. One beyond the next byte owed means the peer holds bytes we have not seen.
    mutating func noteAcknowledgment(_ acknowledgment: UInt32, at time: Timestamp) {
        guard phase == .open, sequenceDistance(from: nextSequence, to: acknowledgment) > 0 else { return }
        if let previous = acknowledgedBeyond {
            if sequenceDistance(from: previous, to: acknowledgment) > 0 { acknowledgedBeyond = acknowledgment }
        } else {
            acknowledgedBeyond = acknowledgment
            acknowledgedBeyondSince = time
        }
    }

    /// Gives up on bytes the peer acknowledged that never showed up: gaps for them, delivery of buffered bytes
    /// below the acknowledged point. Returns the gap bytes and the bytes that left the buffer.
    ///
    /// `respectingGates`: stop at a buffered chunk whose gate is still closed (the peer's bytes it answers are not
    /// delivered yet) and keep the rest for a later call, so the owner can let the peer's delivery go first: a
    /// response after a lost one then still follows the request it answers. Without it, everything below the
    /// acknowledged point goes now.
    mutating func giveUpAcknowledgedHole<Consumer: StreamConsumer>(
        at time: Timestamp, id: ConnectionID, direction: StreamDirection, into consumer: inout Consumer,
        respectingGates: Bool = false
    ) -> (gap: Int, released: Int) {
        guard phase == .open, let acknowledged = acknowledgedBeyond else { return (0, 0) }
        var gap = 0
        var released = 0
        while let first = pending.first, sequenceDistance(from: first.sequence, to: acknowledged) > 0 {
            let step = skipToBufferedData(at: time, id: id, direction: direction, into: &consumer,
                                          respectingGates: respectingGates)
            gap += step.gap
            released += step.released
            if isHeldByGate { return (gap, released) }  // only when respecting gates: the rest waits for a later call
        }
        acknowledgedBeyond = nil
        var missing = sequenceDistance(from: nextSequence, to: acknowledged)
        if let finSequence { missing = min(missing, sequenceDistance(from: nextSequence, to: finSequence)) }
        if missing > 0 {
            consumer.streamGap(id, direction, length: missing, at: time)
            advance(by: missing)
            gap += missing
            released += drain(at: time, id: id, direction: direction, into: &consumer)
        }
        return (gap, released)
    }

    /// Delivers buffered chunks that have become contiguous and whose gates are open (all of them when
    /// `ignoringGates`: giving up waiting). Returns the bytes that left the buffer.
    mutating func drain<Consumer: StreamConsumer>(at time: Timestamp, id: ConnectionID, direction: StreamDirection,
                                                  into consumer: inout Consumer, ignoringGates: Bool = false) -> Int {
        var removed = 0
        var released = 0
        while removed < pending.count {
            let at = sequenceDistance(from: nextSequence, to: pending[removed].sequence)
            if at > 0 { break }
            if !ignoringGates && !gateIsOpen(pending[removed].gate) { break }
            let skip = -at
            let chunkCount = pending[removed].bytes.count
            if skip < chunkCount {
                let at = pending[removed].capturedAt ?? time
                let acknowledged = pending[removed].acknowledged
                pending[removed].bytes.withUnsafeBytes { bytes in
                    consumer.streamData(id, direction, UnsafeRawBufferPointer(rebasing: bytes[skip...]), at: at,
                                        acknowledged: acknowledged)
                    deliveredBytes += chunkCount - skip
                }
                advance(by: chunkCount - skip)
            }
            released += chunkCount
            removed += 1
        }
        if removed > 0 {
            pending.removeFirst(removed)
            pendingBytes -= released
        }
        if let acknowledged = acknowledgedBeyond, sequenceDistance(from: nextSequence, to: acknowledged) <= 0 {
            acknowledgedBeyond = nil  // delivery caught up with what the peer acknowledged
        }
        return released
    }

    /// Gives up on the hole before the first buffered chunk: announces it as a gap and delivers what follows
    /// (only as far as the gates allow when `respectingGates`).
    mutating func skipToBufferedData<Consumer: StreamConsumer>(
        at time: Timestamp, id: ConnectionID, direction: StreamDirection, into consumer: inout Consumer,
        respectingGates: Bool = false
    ) -> (gap: Int, released: Int) {
        guard let first = pending.first else { return (0, 0) }
        let gap = sequenceDistance(from: nextSequence, to: first.sequence)
        if gap > 0 {
            consumer.streamGap(id, direction, length: gap, at: time)
            advance(by: gap)
        }
        let released = drain(at: time, id: id, direction: direction, into: &consumer, ignoringGates: !respectingGates)
        if !pending.isEmpty { stalledSince = time }
        return (max(gap, 0), released)
    }

    /// Gives up on every hole: gaps for the missing bytes, delivery of everything buffered, and a final gap up to
    /// the FIN when one was seen. Returns the gap bytes and the bytes that left the buffer.
    mutating func giveUpHoles<Consumer: StreamConsumer>(
        at time: Timestamp, id: ConnectionID, direction: StreamDirection, into consumer: inout Consumer
    ) -> (gap: Int, released: Int) {
        guard phase == .open else { return (0, 0) }
        var gap = 0
        var released = 0
        while !pending.isEmpty {
            let step = skipToBufferedData(at: time, id: id, direction: direction, into: &consumer)
            gap += step.gap
            released += step.released
        }
        if let finSequence {
            let missing = sequenceDistance(from: nextSequence, to: finSequence)
            if missing > 0 {
                consumer.streamGap(id, direction, length: missing, at: time)
                advance(by: missing)
                gap += missing
            }
        }
        return (gap, released)
    }

    /// Ends this direction once; an unseen direction ends too, so the consumer always sees both ends.
    mutating func end<Consumer: StreamConsumer>(
        _ reason: StreamEndReason, at time: Timestamp, id: ConnectionID, direction: StreamDirection,
        into consumer: inout Consumer
    ) -> (gap: Int, released: Int) {
        guard phase != .ended else { return (0, 0) }
        let result = giveUpHoles(at: time, id: id, direction: direction, into: &consumer)
        phase = .ended
        pending.removeAll()
        pendingBytes = 0
        consumer.streamEnded(id, direction, reason: reason, at: time)
        return result
    }
}

private func equalBytes(_ a: UnsafeRawBufferPointer, from aStart: Int, _ b: [UInt8], from bStart: Int,
                        count: Int) -> Bool {
    guard count > 0 else { return true }
    for i in 0..<count where a[aStart + i] != b[bStart + i] { return false }
    return true
}
