internal import CCompression
import HTTPModel

/// permessage-deflate (RFC 7692) for one direction of a WebSocket: raw deflate, each message's compressed bytes
/// followed by the 0x00 0x00 0xff 0xff tail the sender removed. With context takeover the window carries over
/// from message to message; without it the inflater starts fresh for each.
final class MessageInflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let output = UnsafeMutablePointer<UInt8>.allocate(capacity: 16 * 1024)
    private let outputSize = 16 * 1024
    private let contextTakeover: Bool
    private var ready = false
    private(set) var failure: HTTPWarning?
    /// The current message's deflate data ended with a BFINAL block.
    private var streamEnded = false

    init(contextTakeover: Bool) {
        self.contextTakeover = contextTakeover
        stream.initialize(to: z_stream())
        // Window bits 15 reads any window the sender chose (server_max_window_bits only ever lowers it).
        ready = inflateInit2_(stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        if !ready { failure = .webSocketInflateNotStarted }
    }

    deinit {
        if ready { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    func inflate(_ input: UnsafeRawBufferPointer, _ sink: (UnsafeRawBufferPointer) -> Void) {
        guard ready, failure == nil, !streamEnded, let base = input.baseAddress, !input.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        repeat {
            let inputBefore = stream.pointee.avail_in
            stream.pointee.next_out = output
            stream.pointee.avail_out = uInt(outputSize)
            let status = CCompression.inflate(stream, Z_SYNC_FLUSH)
            let produced = outputSize - Int(stream.pointee.avail_out)
            if produced > 0 { sink(UnsafeRawBufferPointer(start: output, count: produced)) }
            if status == Z_BUF_ERROR && produced == 0 { break }
            if status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR {
                failure = .webSocketInflateFailed(stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)")
                return
            }
            // A block with BFINAL set ends the deflate stream (RFC 7692 allows it); bytes after it in the message
            // are ignored and the next message starts a new stream. Without stopping here zlib would answer
            // Z_STREAM_END forever (found by the http2-frames fuzz target).
            if status == Z_STREAM_END { streamEnded = true; break }
            if stream.pointee.avail_in == inputBefore && produced == 0 { break }  // no progress: never spin
        } while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0
    }

    /// The message is complete: feed the removed tail, and forget the window when there is no context takeover.
    func finishMessage(_ sink: (UnsafeRawBufferPointer) -> Void) {
        if !streamEnded {
            let tail: [UInt8] = [0x00, 0x00, 0xff, 0xff]
            tail.withUnsafeBytes { inflate($0, sink) }
        }
        if (streamEnded || !contextTakeover) && ready { inflateReset(stream) }
        streamEnded = false
    }

    func clearFailure() { failure = nil }
}
