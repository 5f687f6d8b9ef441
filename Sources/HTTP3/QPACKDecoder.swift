internal import CNGHTTP3
import HTTPModel

/// QPACK (RFC 9204) for the header blocks one endpoint sends, through nghttp3's decoder, as a passive observer:
/// the encoder stream of that endpoint fills the dynamic table; header blocks that refer to entries not yet
/// inserted wait (blocked) until the encoder stream catches up, as the real peer's decoder would.
///
/// The decoder's table capacity must be the one the *other* endpoint advertised in SETTINGS_QPACK_MAX_TABLE_CAPACITY:
/// Required Insert Count is encoded modulo a range computed from it (section 4.5.1.1). A capacity over the limit
/// is not followed: the table is then not tracked, and blocks that refer to it say so.
///
/// nghttp3 marks its decoder unusable after any error; the table is then lost, and later blocks are decoded with
/// a table-less decoder (literals and static references still come out, dynamic references are reported).
final class QPACKDecoder {
    enum Outcome {
        case decoded([(name: String, value: String)])
        /// Waiting for the encoder stream to insert `required` entries (so far `inserted`).
        case blocked(required: UInt64, inserted: UInt64)
        case failed(HTTPWarning)
    }

    /// One header block waiting for entries, with nghttp3's context holding its prefix.
    private struct Waiting {
        var context: OpaquePointer
        var rest: [UInt8]
        var required: UInt64
        var order: Int
    }

    private var decoder: OpaquePointer
    private let maxBlockedStreams: Int
    private let maxHeaderListBytes: Int
    /// False once the table's contents may differ from the encoder's (an error, a gap, a capacity not followed).
    private(set) var tableTracked: Bool
    private var waiting: [UInt64: Waiting] = [:]
    private var nextOrder = 0

    /// `maxTableCapacity`: what the decoding endpoint advertised (0 when it sent none); `limit`: the most this
    /// observer follows. `maxBlockedStreams`: blocked blocks held at once (the advertised value, capped).
    init(maxTableCapacity: UInt64, limit: Int, maxBlockedStreams: Int, maxHeaderListBytes: Int = 256 * 1024) {
        let followed = maxTableCapacity <= UInt64(limit)
        tableTracked = followed
        self.maxBlockedStreams = maxBlockedStreams
        self.maxHeaderListBytes = maxHeaderListBytes
        decoder = Self.make(capacity: followed ? Int(maxTableCapacity) : 0)
    }

    deinit {
        for entry in waiting.values { nghttp3_qpack_stream_context_del(entry.context) }
        nghttp3_qpack_decoder_del(decoder)
    }

    private static func make(capacity: Int) -> OpaquePointer {
        var made: OpaquePointer?
        // Only NGHTTP3_ERR_NOMEM can fail here; running on without a decoder would lose every header silently.
        guard nghttp3_qpack_decoder_new(&made, capacity, 0, nghttp3_mem_default()) == 0, let made else {
            fatalError("nghttp3_qpack_decoder_new: out of memory")
        }
        return made
    }

    /// Entries inserted so far.
    var insertCount: UInt64 { UInt64(nghttp3_qpack_decoder_get_icnt(decoder)) }

    /// Blocks still waiting, by stream, with the insert count each needs.
    var blocked: [(stream: UInt64, required: UInt64)] {
        waiting.sorted { $0.value.order < $1.value.order }.map { ($0.key, $0.value.required) }
    }

    /// Encoder stream bytes, in order. Nil when read; the error (after which the table is lost) otherwise.
    func readEncoderStream(_ bytes: UnsafeRawBufferPointer) -> HTTPWarning? {
        guard tableTracked else { return nil }
        guard !bytes.isEmpty else { return nil }
        let read = nghttp3_qpack_decoder_read_encoder(decoder, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                      bytes.count)
        if read < 0 { return loseTable(Int32(read)) }
        return nil
    }

    /// The encoder stream cannot be followed any more (a gap in it): later references to the table are reported.
    func markTableLost() {
        guard tableTracked else { return }
        tableTracked = false
        replaceDecoder()
    }

    /// Decodes one header block (a HEADERS or PUSH_PROMISE frame's field section) sent on `stream`.
    func decode(_ block: [UInt8], stream: UInt64) -> Outcome {
        var context: OpaquePointer?
        guard nghttp3_qpack_stream_context_new(&context, Int64(bitPattern: stream), nghttp3_mem_default()) == 0,
              let context else { fatalError("nghttp3_qpack_stream_context_new: out of memory") }
        let (outcome, rest) = run(context, block[...])
        guard case .blocked(let required, _) = outcome else {
            nghttp3_qpack_stream_context_del(context)
            return outcome
        }
        guard waiting.count < maxBlockedStreams, waiting[stream] == nil else {
            nghttp3_qpack_stream_context_del(context)
            return .failed(.qpackTooManyBlockedStreams(limit: maxBlockedStreams))
        }
        waiting[stream] = Waiting(context: context, rest: Array(rest), required: required, order: nextOrder)
        nextOrder += 1
        return outcome
    }

    /// Blocks that were waiting and now have an outcome, in the order they were blocked: decoded with the entries
    /// inserted since, or failed because the table was lost meanwhile.
    func unblocked() -> [(stream: UInt64, outcome: Outcome)] {
        var results: [(UInt64, Outcome)] = []
        // One at a time, looked up afresh: a block that fails loses the table, which frees every other waiting
        // block's context (a list taken before the loop would then run freed contexts: found by fuzzing).
        while let (stream, entry) = waiting.filter({ $0.value.required <= insertCount }).min(by: { $0.value.order < $1.value.order }) {
            waiting[stream] = nil
            results.append((stream, run(entry.context, entry.rest[...]).outcome))
            nghttp3_qpack_stream_context_del(entry.context)
        }
        results += lostWhileWaiting.map { ($0, Outcome.failed(.qpackTableNotTracked)) }
        lostWhileWaiting = []
        return results
    }

    /// The stream was reset or ended: its waiting block, if any, is dropped.
    func cancel(stream: UInt64) {
        guard let entry = waiting.removeValue(forKey: stream) else { return }
        nghttp3_qpack_stream_context_del(entry.context)
    }

    /// Streams whose waiting block was dropped when the table was lost, to be told by `unblocked()`.
    private var lostWhileWaiting: [UInt64] = []
    /// `unblocked()` has outcomes to give even without new encoder bytes (blocks failed with a lost table).
    var hasLostBlocks: Bool { !lostWhileWaiting.isEmpty }

    private func run(_ context: OpaquePointer, _ block: ArraySlice<UInt8>) -> (outcome: Outcome, rest: ArraySlice<UInt8>) {
        var fields: [(name: String, value: String)] = []
        var listBytes = 0
        var input = block
        while true {
            var field = nghttp3_qpack_nv()
            var flags: UInt8 = 0
            let read = input.withUnsafeBufferPointer { buffer in
                // A non-null pointer even for an empty rest: nghttp3 reads nothing then, but expects one.
                withUnsafePointer(to: 0 as UInt8) { empty in
                    nghttp3_qpack_decoder_read_request(decoder, context, &field, &flags, buffer.baseAddress ?? empty,
                                                       buffer.count, 1)
                }
            }
            if read < 0 {
                let lostBefore = !tableTracked
                let warning = loseTable(Int32(read))
                return (.failed(lostBefore ? .qpackTableNotTracked : warning), [])
            }
            input = input.dropFirst(read)
            if flags & UInt8(NGHTTP3_QPACK_DECODE_FLAG_EMIT) != 0 {
                listBytes += nghttp3_rcbuf_get_buf(field.name).len + nghttp3_rcbuf_get_buf(field.value).len + 32
                if listBytes <= maxHeaderListBytes { fields.append((Self.string(field.name), Self.string(field.value))) }
                nghttp3_rcbuf_decref(field.name)
                nghttp3_rcbuf_decref(field.value)
                // The block is dropped here (its stream context with it): the table itself is untouched.
                if listBytes > maxHeaderListBytes { return (.failed(.qpackHeaderListOverLimit(limit: maxHeaderListBytes)), []) }
            }
            if flags & UInt8(NGHTTP3_QPACK_DECODE_FLAG_BLOCKED) != 0 {
                let required = UInt64(nghttp3_qpack_stream_context_get_ricnt(context))
                return (.blocked(required: required, inserted: insertCount), input)
            }
            if flags & UInt8(NGHTTP3_QPACK_DECODE_FLAG_FINAL) != 0 { return (.decoded(fields), []) }
            // nghttp3 reports progress, a flag or an error on every call; this only guards against a loop.
            if read == 0 && flags == 0 { return (.failed(.qpackFailed("no progress in header block")), []) }
        }
    }

    /// nghttp3's decoder is unusable after an error: a table-less one takes its place.
    private func loseTable(_ code: Int32) -> HTTPWarning {
        tableTracked = false
        replaceDecoder()
        return .qpackFailed(String(cString: nghttp3_strerror(code)))
    }

    private func replaceDecoder() {
        for (stream, entry) in waiting.sorted(by: { $0.value.order < $1.value.order }) {
            nghttp3_qpack_stream_context_del(entry.context)
            lostWhileWaiting.append(stream)
        }
        waiting.removeAll()
        nghttp3_qpack_decoder_del(decoder)
        decoder = Self.make(capacity: 0)
    }

    private static func string(_ buffer: OpaquePointer?) -> String {
        let vector = nghttp3_rcbuf_get_buf(buffer)
        guard let base = vector.base else { return "" }
        return String(decoding: UnsafeBufferPointer(start: base, count: vector.len), as: UTF8.self)
    }
}
