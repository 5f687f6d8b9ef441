/// One QUIC stream's bytes (a STREAM or a CRYPTO stream) put in order from frames that carry an offset: frames
/// out of order are buffered, repeated or overlapping bytes given once (the first copy wins, as in TCP reassembly),
/// and the end known from a FIN's final size. In-order data, the common case, is handed on straight from the
/// packet's plaintext without a copy. What is buffered is counted by the caller against its limits; past them
/// `giveUpHole` turns the first hole into an explicit gap.
struct OffsetReassembly {
    enum Piece {
        case bytes(UnsafeRawBufferPointer)
        /// Bytes that will never be seen (over a limit, or missing at the end): their count.
        case gap(UInt64)
        /// Everything up to the final size was handed on.
        case end
    }

    /// Bytes handed on so far (gaps included): where the next in-order byte starts.
    private(set) var delivered: UInt64 = 0
    /// Out-of-order pieces, sorted by offset, not overlapping each other, all after `delivered`.
    private var pending: [(offset: UInt64, bytes: [UInt8])] = []
    /// Bytes held in `pending`.
    private(set) var buffered = 0
    /// From a FIN (or RESET_STREAM): the stream's length.
    private(set) var finalSize: UInt64?
    private(set) var ended = false

    var hasHole: Bool { !pending.isEmpty }

    /// Takes a frame's bytes at `offset`; hands on what is now in order. Returns the change in buffered bytes.
    @discardableResult
    mutating func receive(offset: UInt64, data: UnsafeRawBufferPointer, fin: Bool,
                          deliver: (Piece) -> Void) -> Int {
        guard !ended else { return 0 }
        let before = buffered
        let end = offset + UInt64(data.count)
        if fin, finalSize == nil { finalSize = end }
        if end > delivered {
            if offset <= delivered {
                // In order (or overlapping what was handed on): the new part goes straight out.
                let fresh = UnsafeRawBufferPointer(rebasing: data[Int(delivered - offset)...])
                deliverInOrder(fresh, deliver)
            } else {
                insert(offset: offset, data: data)
            }
        }
        finishIfComplete(deliver)
        return buffered - before
    }

    /// Over a limit: the first hole becomes a gap and the buffered bytes after it are handed on (up to the next
    /// hole). Returns the change in buffered bytes.
    @discardableResult
    mutating func giveUpHole(_ deliver: (Piece) -> Void) -> Int {
        guard let first = pending.first else { return 0 }
        let before = buffered
        deliver(.gap(first.offset - delivered))
        delivered = first.offset
        drainPending(deliver)
        finishIfComplete(deliver)
        return buffered - before
    }

    /// The stream will get no more frames (the connection ended, or it was reset): holes and a missing tail up to a
    /// known final size become gaps. Returns the change in buffered bytes.
    @discardableResult
    mutating func close(finalSize reset: UInt64? = nil, _ deliver: (Piece) -> Void) -> Int {
        let before = buffered
        if finalSize == nil, let reset { finalSize = reset }
        while hasHole { giveUpHole(deliver) }
        if !ended, let finalSize, finalSize > delivered {
            deliver(.gap(finalSize - delivered))
            delivered = finalSize
        }
        finishIfComplete(deliver)
        return buffered - before
    }

    private mutating func deliverInOrder(_ bytes: UnsafeRawBufferPointer, _ deliver: (Piece) -> Void) {
        var bytes = bytes
        if let finalSize, delivered + UInt64(bytes.count) > finalSize {  // past a FIN: not part of the stream
            bytes = UnsafeRawBufferPointer(rebasing: bytes[..<Int(finalSize - min(finalSize, delivered))])
        }
        guard !bytes.isEmpty else { return }
        deliver(.bytes(bytes))
        delivered += UInt64(bytes.count)
        drainPending(deliver)
    }

    /// Hands on buffered pieces that are now in order, trimming what was already handed on.
    private mutating func drainPending(_ deliver: (Piece) -> Void) {
        while let first = pending.first, first.offset <= delivered {
            pending.removeFirst()
            buffered -= first.bytes.count
            let end = first.offset + UInt64(first.bytes.count)
            guard end > delivered else { continue }
            first.bytes.withUnsafeBytes { bytes in
                let fresh = UnsafeRawBufferPointer(rebasing: bytes[Int(delivered - first.offset)...])
                deliver(.bytes(fresh))
            }
            delivered = end
        }
    }

    /// Buffers an out-of-order piece, keeping only bytes no earlier piece holds.
    private mutating func insert(offset: UInt64, data: UnsafeRawBufferPointer) {
        var start = offset
        let end = offset + UInt64(data.count)
        var index = pending.firstIndex { $0.offset + UInt64($0.bytes.count) > start } ?? pending.count
        while start < end {
            let nextStart = index < pending.count ? pending[index].offset : end
            if start < nextStart {
                let stop = min(end, nextStart)
                let piece = Array(data[Int(start - offset)..<Int(stop - offset)])
                pending.insert((start, piece), at: index)
                buffered += piece.count
                index += 1
                start = stop
            }
            guard index < pending.count, start < end else { break }
            // Skip over the bytes the piece at `index` already holds.
            start = max(start, pending[index].offset + UInt64(pending[index].bytes.count))
            index += 1
        }
    }

    private mutating func finishIfComplete(_ deliver: (Piece) -> Void) {
        guard !ended, let finalSize, delivered >= finalSize, pending.isEmpty else { return }
        ended = true
        deliver(.end)
    }
}
