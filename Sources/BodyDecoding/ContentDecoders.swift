internal import CCompression

/// Why a body could not be decoded; shown to the user next to the raw bytes that were kept instead.
public struct DecodeFailure: Error, Sendable, CustomStringConvertible {
    public var coding: String
    public var reason: String
    public var description: String { "\(coding) decoding failed: \(reason)" }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws `DecodeFailure`, which the standard one rethrows as `any Error`.
    func withBytes(_ body: (UnsafeRawBufferPointer) throws(DecodeFailure) -> Void) throws(DecodeFailure) {
        var failure: DecodeFailure?
        withUnsafeBytes { bytes in
            do throws(DecodeFailure) { try body(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// Takes a decoder's output piece by piece; returns false to stop the decoder (a limit was hit), which then
/// returns without producing more from the input in hand.
typealias DecodedSink = (UnsafeRawBufferPointer) -> Bool

/// A streaming decoder for one content coding. Output goes to `sink` in pieces; nothing is held beyond a fixed
/// output buffer, so a compressed body of any size decodes in constant memory.
protocol ContentDecoder: AnyObject {
    var coding: String { get }
    func decode(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure)
    /// The body ended; fails when the compressed stream was cut short.
    func finish(sink: DecodedSink) throws(DecodeFailure)
    /// Bytes that followed the end of the compressed stream and were not decoded.
    var trailingBytes: Int { get }
}

enum ContentDecoders {
    /// The codings this build can remove, by their registered names (lower case).
    static let supported: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd"]

    /// `pool`: where gzip and deflate decoders take their buffers from and give them back.
    static func make(_ coding: String, pool: InflateBufferPool? = nil) -> ContentDecoder? {
        switch coding {
        case "gzip", "x-gzip": return IsalInflateDecoder(coding: coding, format: .gzipOrZlib, pool: pool)
        case "deflate": return IsalInflateDecoder(coding: coding, format: .sniffZlibOrRaw, pool: pool)
        case "br": return BrotliDecoder()
        case "zstd": return ZstdDecoder()
        default: return nil
        }
    }
}

let outputBufferSize = 32 * 1024

/// gzip and deflate through zlib's inflate.
final class ZlibDecoder: ContentDecoder {
    enum Format {
        /// gzip; zlib's automatic header detection also accepts a zlib wrapper mislabelled as gzip.
        case gzipOrZlib
        /// `deflate` is meant to be zlib-wrapped (RFC 9110), but many servers send raw deflate: look at the first
        /// two bytes (a zlib header has compression method 8 and a header checksum divisible by 31).
        case sniffZlibOrRaw
    }

    let coding: String
    private let format: Format
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputBufferSize)
    private var initialized = false
    private var sniffed: [UInt8] = []
    private var streamEnded = false
    private(set) var trailingBytes = 0

    init(coding: String, format: Format) {
        self.coding = coding
        self.format = format
        stream.initialize(to: z_stream())
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    private func start(windowBits: Int32) throws(DecodeFailure) {
        let status = inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw DecodeFailure(coding: coding, reason: "zlib could not start (status \(status))") }
        initialized = true
    }

    func decode(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure) {
        if !initialized {
            switch format {
            case .gzipOrZlib:
                try start(windowBits: 15 + 32)
            case .sniffZlibOrRaw:
                let before = sniffed.count
                sniffed.append(contentsOf: input.prefix(2 - before))
                guard sniffed.count == 2 else { return }
                let isZlib = sniffed[0] & 0x0f == 8 && (UInt16(sniffed[0]) << 8 | UInt16(sniffed[1])) % 31 == 0
                try start(windowBits: isZlib ? 15 : -15)
                // Bytes sniffed in earlier calls were not fed yet: replay them before this input.
                if before > 0 {
                    try Array(sniffed.prefix(before)).withBytes { bytes throws(DecodeFailure) in
                        try inflateAll(bytes, sink: sink)
                    }
                }
            }
        }
        try inflateAll(input, sink: sink)
    }

    /// Inflates `input`, member after member: a loop, not recursion, so a body of a million concatenated gzip
    /// members (RFC 1952 allows any number) runs in constant stack.
    private func inflateAll(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure) {
        var input = input
        while !input.isEmpty, let base = input.baseAddress {
            if streamEnded {
                // Another gzip member may follow; anything else is trailing junk, counted for a warning.
                if format == .gzipOrZlib && input.first == 0x1f {
                    inflateReset(stream)
                    streamEnded = false
                } else {
                    trailingBytes += input.count
                    return
                }
            }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            while stream.pointee.avail_in > 0 && !streamEnded {
                stream.pointee.next_out = output
                stream.pointee.avail_out = uInt(outputBufferSize)
                let status = inflate(stream, Z_NO_FLUSH)
                let produced = outputBufferSize - Int(stream.pointee.avail_out)
                if produced > 0 && !sink(UnsafeRawBufferPointer(start: output, count: produced)) { return }
                switch status {
                case Z_OK, Z_BUF_ERROR:
                    if status == Z_BUF_ERROR && produced == 0 { return }
                case Z_STREAM_END:
                    streamEnded = true
                default:
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                    throw DecodeFailure(coding: coding, reason: "invalid compressed data (\(message))")
                }
            }
            if streamEnded {
                // The member ended inside this input: go round again with what follows it.
                let rest = Int(stream.pointee.avail_in)
                input = UnsafeRawBufferPointer(rebasing: input[(input.count - rest)...])
                continue
            }
            // Drain output zlib may still hold after the input was consumed.
            while !streamEnded {
                stream.pointee.next_out = output
                stream.pointee.avail_out = uInt(outputBufferSize)
                let status = inflate(stream, Z_NO_FLUSH)
                let produced = outputBufferSize - Int(stream.pointee.avail_out)
                if produced > 0 && !sink(UnsafeRawBufferPointer(start: output, count: produced)) { return }
                if status == Z_STREAM_END { streamEnded = true }
                if produced == 0 || status != Z_OK { break }
            }
            return
        }
    }

    func finish(sink: DecodedSink) throws(DecodeFailure) {
        if !initialized && sniffed.isEmpty { return }  // empty body: nothing to decode
        if !initialized {
            throw DecodeFailure(coding: coding, reason: "compressed stream ended after \(sniffed.count) byte")
        }
        if !streamEnded {
            throw DecodeFailure(coding: coding, reason: "compressed stream ended early (truncated body)")
        }
    }
}

/// Brotli (RFC 7932) through libbrotlidec.
final class BrotliDecoder: ContentDecoder {
    let coding = "br"
    private let state: OpaquePointer
    private let output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputBufferSize)
    private var sawInput = false
    private var finished = false
    private(set) var trailingBytes = 0

    init() {
        state = BrotliDecoderCreateInstance(nil, nil, nil)
    }

    deinit {
        BrotliDecoderDestroyInstance(state)
        output.deallocate()
    }

    func decode(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure) {
        guard !input.isEmpty, let base = input.baseAddress else { return }
        sawInput = true
        if finished { trailingBytes += input.count; return }
        var availableIn = input.count
        var nextIn: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        while true {
            var availableOut = outputBufferSize
            var nextOut: UnsafeMutablePointer<UInt8>? = output
            let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
            let produced = outputBufferSize - availableOut
            if produced > 0 && !sink(UnsafeRawBufferPointer(start: output, count: produced)) { return }
            switch result {
            case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
            case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return
            case BROTLI_DECODER_RESULT_SUCCESS:
                finished = true
                trailingBytes += availableIn
                return
            default:
                let code = BrotliDecoderGetErrorCode(state)
                let text = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                throw DecodeFailure(coding: coding, reason: "invalid compressed data (\(text))")
            }
        }
    }

    func finish(sink: DecodedSink) throws(DecodeFailure) {
        if sawInput && !finished {
            throw DecodeFailure(coding: coding, reason: "compressed stream ended early (truncated body)")
        }
    }
}

/// Zstandard (RFC 8878) through libzstd, window limited to 8 MiB as RFC 9659 asks of HTTP recipients, which
/// also keeps memory bounded.
final class ZstdDecoder: ContentDecoder {
    let coding = "zstd"
    private let stream: OpaquePointer
    private let output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputBufferSize)
    private var sawInput = false
    private var frameComplete = true
    /// zstd decodes concatenated frames as one stream, so nothing after a frame is left over.
    let trailingBytes = 0

    init() {
        stream = ZSTD_createDStream()
        ZSTD_initDStream(stream)
        ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, 23)
    }

    deinit {
        ZSTD_freeDStream(stream)
        output.deallocate()
    }

    func decode(_ input: UnsafeRawBufferPointer, sink: DecodedSink) throws(DecodeFailure) {
        guard !input.isEmpty, let base = input.baseAddress else { return }
        sawInput = true
        var inBuffer = ZSTD_inBuffer(src: base, size: input.count, pos: 0)
        while true {
            var outBuffer = ZSTD_outBuffer(dst: output, size: outputBufferSize, pos: 0)
            let result = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
            if ZSTD_isError(result) != 0 {
                throw DecodeFailure(coding: coding, reason: "invalid compressed data (\(String(cString: ZSTD_getErrorName(result))))")
            }
            if outBuffer.pos > 0 && !sink(UnsafeRawBufferPointer(start: output, count: outBuffer.pos)) { return }
            frameComplete = result == 0
            // Done when all input is consumed and the output buffer was not filled (nothing left inside zstd).
            if inBuffer.pos == inBuffer.size && outBuffer.pos < outBuffer.size { return }
        }
    }

    func finish(sink: DecodedSink) throws(DecodeFailure) {
        if sawInput && !frameComplete {
            throw DecodeFailure(coding: coding, reason: "compressed stream ended early (truncated body)")
        }
    }
}
