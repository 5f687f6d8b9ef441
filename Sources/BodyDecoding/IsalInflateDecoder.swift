internal import CCompression

/// gzip and deflate through ISA-L's igzip inflate, which decodes this project's real HTTP bodies about twice as fast
/// as zlib in pieces as TCP delivers them (Scripts/inflate-bench). zlib stays the reference: anything unusual goes
/// to `ZlibDecoder`, so the output, the warnings and the error texts are zlib's, byte for byte.
/// - ISA-L takes gzip (a plain header: method 8, no reserved flags) and raw deflate. zlib-wrapped streams go to
///   zlib from the start: ISA-L reads past their end (it counted 1 of 3 bytes after an Adler-32 trailer as left
///   over), which would change the "bytes after the end" warning. So does a second gzip member, which zlib
///   checks more strictly, whenever the body is small enough to replay.
/// - When ISA-L finds invalid data, the body's compressed bytes so far are replayed through zlib, whose output
///   after what was already passed on continues the body and whose error message is the one shown. For that the
///   compressed input is kept up to `replayLimit` bytes; past it, an error is reported in zlib's words for the
///   same fault kind where one maps, else with ISA-L's.
final class IsalInflateDecoder: ContentDecoder {
    /// Compressed bytes kept for replaying into zlib on an ISA-L error.
    static let replayLimit = 1 << 20

    let coding: String
    private let format: ZlibDecoder.Format
    /// ISA-L's state, the output buffer and the input kept for a replay, from `pool` when it has some and given
    /// back to it at the end.
    private let buffers: InflateBuffers
    private let pool: InflateBufferPool?
    private var state: UnsafeMutablePointer<inflate_state> { buffers.state }
    private var output: UnsafeMutablePointer<UInt8> { buffers.output }
    private var started = false
    private var streamEnded = false
    private var keepsSeen = true
    /// Decoded bytes passed to the sink so far.
    private var emitted = 0
    /// Set once zlib took over; every later call goes to it.
    private var zlib: ZlibDecoder?
    private var isalTrailingBytes = 0
    var trailingBytes: Int { zlib?.trailingBytes ?? isalTrailingBytes }

    init(coding: String, format: ZlibDecoder.Format, pool: InflateBufferPool? = nil) {
        self.coding = coding
        self.format = format
        self.pool = pool
        buffers = pool?.take() ?? InflateBuffers()
    }

    deinit {
        pool?.giveBack(buffers)
    }

    /// Bytes needed to choose: a gzip header's method and flags, or a zlib header.
    private var sniffLength: Int { format == .gzipOrZlib ? 4 : 2 }

    func decode(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure) {
        if let zlib { return try zlib.decode(input, sink: sink) }
        guard !input.isEmpty else { return }
        if keepsSeen {
            if buffers.seen.count + input.count <= Self.replayLimit {
                buffers.seen.append(contentsOf: input)
            } else {
                keepsSeen = false
                buffers.seen = []
            }
        }
        if !started {
            let before = buffers.sniffed.count
            buffers.sniffed.append(contentsOf: input.prefix(sniffLength - before))
            guard buffers.sniffed.count == sniffLength else {
                // zlib reports a bad first byte at once; so does this, by handing such a stream to zlib now.
                if !mayBeIsalWrapper() { try handOverToZlib(sink: sink) }
                return
            }
            guard let flag = isalWrapper() else {
                try handOverToZlib(sink: sink)
                return
            }
            isal_inflate_init(state)
            state.pointee.crc_flag = flag
            started = true
            if before > 0 {
                try Array(buffers.sniffed.prefix(before)).withBytes { bytes throws(DecodeFailure) in
                    try inflateAll(bytes, sink: sink)
                }
                if zlib != nil { return }  // the replay went to zlib, which saw this input too
            }
        }
        try inflateAll(input, sink: sink)
    }

    /// Whether the bytes sniffed so far (fewer than `sniffLength`) can still start a stream ISA-L decodes.
    private func mayBeIsalWrapper() -> Bool {
        guard format == .gzipOrZlib else { return true }
        let gzipPrefix: [UInt8] = [0x1f, 0x8b, 8]
        return buffers.sniffed.elementsEqual(gzipPrefix.prefix(buffers.sniffed.count))
    }

    /// The ISA-L wrapper for the sniffed bytes, or nil when zlib should decode this stream.
    private func isalWrapper() -> UInt32? {
        let sniffed = buffers.sniffed
        let b0 = sniffed[0], b1 = sniffed[1]
        switch format {
        case .gzipOrZlib:
            return b0 == 0x1f && b1 == 0x8b && sniffed[2] == 8 && sniffed[3] & 0xe0 == 0 ? UInt32(ISAL_GZIP) : nil
        case .sniffZlibOrRaw:
            // ZlibDecoder's own test for a zlib header: method 8 and a header checksum divisible by 31.
            let zlibWrapped = b0 & 0x0f == 8 && (UInt16(b0) << 8 | UInt16(b1)) % 31 == 0
            return zlibWrapped ? nil : UInt32(ISAL_DEFLATE)
        }
    }

    /// zlib decodes the body from its first byte; only its output past what was already passed on reaches `sink`.
    private func handOverToZlib(sink: DecodedSink) throws(DecodeFailure) {
        let decoder = ZlibDecoder(coding: coding, format: format)
        zlib = decoder
        let input = buffers.seen
        buffers.seen = []
        var skip = emitted
        try input.withBytes { bytes throws(DecodeFailure) in
            try decoder.decode(bytes) { piece in
                if skip >= piece.count { skip -= piece.count; return true }
                let rest = UnsafeRawBufferPointer(rebasing: piece[skip...])
                skip = 0
                return sink(rest)
            }
        }
    }

    /// Inflates `input`, member after member, as `ZlibDecoder.inflateAll` does.
    private func inflateAll(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure) {
        var input = input
        while !input.isEmpty, let base = input.baseAddress {
            if streamEnded {
                if format == .gzipOrZlib && input.first == 0x1f {
                    // Another gzip member (RFC 1952 allows any number): zlib's, when the body can be replayed.
                    if keepsSeen {
                        try handOverToZlib(sink: sink)
                        return
                    }
                    isal_inflate_reset(state)
                    state.pointee.crc_flag = UInt32(ISAL_GZIP)
                    streamEnded = false
                } else {
                    isalTrailingBytes += input.count
                    return
                }
            }
            state.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
            state.pointee.avail_in = UInt32(input.count)
            while true {
                state.pointee.next_out = output
                state.pointee.avail_out = UInt32(outputBufferSize)
                let status = isal_inflate(state)
                let produced = outputBufferSize - Int(state.pointee.avail_out)
                if status < 0 {
                    // The output of this call is not passed on: zlib redoes it from the start.
                    try fail(status, sink: sink)
                    return
                }
                if produced > 0 {
                    emitted += produced
                    if !sink(UnsafeRawBufferPointer(start: output, count: produced)) { return }
                }
                if state.pointee.block_state == ISAL_BLOCK_FINISH {
                    streamEnded = true
                    // Bytes after the stream that ISA-L already took into its bit or header buffer: not given back
                    // through avail_in, so the count of bytes after the end would be short. zlib counts exactly.
                    let swallowed = Int(state.pointee.read_in_length) / 8 + Int(state.pointee.tmp_in_size)
                    if swallowed > 0 {
                        if keepsSeen {
                            try handOverToZlib(sink: sink)
                            return
                        }
                        isalTrailingBytes += swallowed
                    }
                    break
                }
                // Input used up and nothing more inside ISA-L (it filled less than the whole buffer).
                if state.pointee.avail_in == 0 && state.pointee.avail_out > 0 { return }
            }
            let rest = Int(state.pointee.avail_in)
            input = UnsafeRawBufferPointer(rebasing: input[(input.count - rest)...])
        }
    }

    private func fail(_ status: Int32, sink: DecodedSink) throws(DecodeFailure) {
        if keepsSeen {
            try handOverToZlib(sink: sink)
            // zlib decoded what ISA-L refused: carry on with zlib (the next calls go to it).
            return
        }
        throw DecodeFailure(coding: coding, reason: "invalid compressed data (\(Self.zlibWording(status)))")
    }

    /// zlib's message for the same kind of fault, for bodies too large to replay.
    static func zlibWording(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: return "invalid block type"
        case ISAL_INVALID_SYMBOL: return "invalid literal/length code"
        case ISAL_INVALID_LOOKBACK: return "invalid distance too far back"
        case ISAL_INVALID_WRAPPER: return "incorrect header check"
        case ISAL_UNSUPPORTED_METHOD: return "unknown compression method"
        case ISAL_INCORRECT_CHECKSUM: return "incorrect data check"
        default: return "ISA-L status \(status)"
        }
    }

    func finish(sink: DecodedSink) throws(DecodeFailure) {
        if let zlib { return try zlib.finish(sink: sink) }
        if !started {
            if buffers.sniffed.isEmpty { return }  // empty body: nothing to decode
            // Too short to choose: zlib says what it makes of these bytes, as it always did.
            try handOverToZlib(sink: sink)
            try zlib?.finish(sink: sink)
            return
        }
        if !streamEnded {
            throw DecodeFailure(coding: coding, reason: "compressed stream ended early (truncated body)")
        }
    }
}

/// What one body's inflate needs: ISA-L's state (87 KB with its window), an output buffer, and the byte arrays for
/// the sniffed header and the replay. Reused by the next body through an `InflateBufferPool` rather than allocated
/// for every compressed body.
final class InflateBuffers {
    let state = UnsafeMutablePointer<inflate_state>.allocate(capacity: 1)
    let output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputBufferSize)
    /// The first bytes, until the wrapper is known.
    var sniffed: [UInt8] = []
    /// Compressed input seen so far, for a replay through zlib; emptied and no longer kept past `replayLimit`.
    var seen: [UInt8] = []

    /// Empties the byte arrays for the next body, keeping their storage unless `seen` grew past `keptCapacity`.
    func reset(keptCapacity: Int) {
        sniffed.removeAll(keepingCapacity: true)
        seen.removeAll(keepingCapacity: seen.capacity <= keptCapacity)
    }

    deinit {
        state.deallocate()
        output.deallocate()
    }
}

/// Inflate buffers that finished bodies gave back, for the next ones. One per HTTP decoder (it hangs off the
/// decoder's `DecodedBytesBudget`), so it is only ever used by the thread that decodes those connections. A new
/// body's state is initialised by `isal_inflate_init` whatever it held, so nothing of one body reaches another.
final class InflateBufferPool {
    /// Buffers held at most: as many bodies as are usually decoded at once on one thread (a connection's
    /// request and response, a few interleaved HTTP/2 streams); more are freed.
    static let capacity = 8
    /// Replay storage a pooled buffer keeps; a larger one (up to `IsalInflateDecoder.replayLimit`) is freed.
    static let keptReplayBytes = 256 * 1024
    private var free: [InflateBuffers] = []

    var freeCount: Int { free.count }

    func take() -> InflateBuffers? { free.popLast() }

    func giveBack(_ buffers: InflateBuffers) {
        guard free.count < Self.capacity else { return }
        buffers.reset(keptCapacity: Self.keptReplayBytes)
        free.append(buffers)
    }
}
