import HTTPModel

/// Takes one message's body as transferred (already de-chunked), removes its content codings as bytes arrive,
/// and keeps only what the limits allow: running SHA-256 and size of the decoded body, its first bytes for
/// display, and, while decoding is in progress, the same for the raw bytes so a failed decode can fall back to
/// them.
package final class BodyAccumulator {
    private let limits: HTTPDecoderLimits
    private let contentType: String?
    /// Codings in the order they are removed (the reverse of the order the header lists them).
    private let codings: [String]
    private var decoders: [ContentDecoder]
    private var decoding: Bool

    private var transferSize = 0
    /// SHA-256 of the bytes as received, needed only when decoding fails. While the whole body still fits in
    /// `rawKept` nothing is hashed (a decoded body never needs it); once it outgrows it, `rawKept` is hashed and
    /// the rest streams in.
    private var rawHash = SHA256Context()
    /// Bytes of the body as received that `rawHash` has taken.
    private var rawHashed = 0
    private var rawKept: [UInt8] = []
    /// SHA-256 of the decoded body, kept inline: hashing a body and keeping its digest allocate nothing.
    private var decodedHash = SHA256Context()
    /// SHA-256 of no bytes, computed once: most messages (GET requests, 304s) have no body.
    private static let emptyDigest: SHA256Digest = {
        var empty = SHA256Context()
        return empty.finishDigest()
    }()
    private var decodedDigest: SHA256Digest? {
        guard limits.hashBodies else { return nil }
        return decodedSize == 0 ? Self.emptyDigest : decodedHash.finishDigest()
    }

    /// What `finish()` gives for a body with no bytes and no content coding.
    package static func emptyBody(contentType: String?, limits: HTTPDecoderLimits) -> HTTPBody {
        HTTPBody(size: 0, digest: limits.hashBodies ? emptyDigest : nil, encoding: [], transferSize: 0, kept: [],
                 keptIsPartial: false, contentType: contentType)
    }
    private var decodedSize = 0
    private var decodedKept: [UInt8] = []
    /// Why a decoding stage stopped, once one has.
    private var stageFailure: HTTPWarning?
    package private(set) var warnings: [HTTPWarning] = []
    package private(set) var sawGap = false
    /// Bytes produced by every decoding stage together: nested codings (`gzip, gzip`) count each stage, so an
    /// inner stage that inflates into junk the outer one ignores still hits the limit.
    private var producedBytes = 0
    private let budget: DecodedBytesBudget?
    /// Whose body: named in every warning, as the exchange's list holds both sides'.
    private let role: MessageRole

    /// A body for a message with these fields: its content-encoding and content-type (HTTP/2 and HTTP/3 streams).
    package convenience init(role: MessageRole, fields: [(name: String, value: String)]?, limits: HTTPDecoderLimits,
                             budget: DecodedBytesBudget?) {
        let headers = HTTPHeaders(fields ?? [])
        self.init(role: role, contentEncoding: headers.tokens("content-encoding"), contentType: headers["content-type"],
                  limits: limits, budget: budget)
    }

    /// `contentEncoding`: the Content-Encoding tokens as listed in the header (`identity` ignored). `budget`: the
    /// decoded bytes left for the whole capture, shared by every body.
    package init(role: MessageRole, contentEncoding: [String], contentType: String?, limits: HTTPDecoderLimits,
                 budget: DecodedBytesBudget? = nil) {
        self.role = role
        self.limits = limits
        self.contentType = contentType
        self.budget = budget
        // In place: the caller's array is usually this body's own, so no copy is made.
        var listed = contentEncoding
        listed.removeAll { $0 == "identity" }
        listed.reverse()
        codings = listed
        if codings.count > limits.maxContentCodings {
            warnings.append(.tooManyContentCodings(role, listed: codings.count, limit: limits.maxContentCodings))
            decoders = []
            decoding = false
        } else if let budget, !codings.isEmpty, budget.isExhausted {
            warnings.append(.decodingBudgetUsedUp(role, limit: budget.limit))
            decoders = []
            decoding = false
        } else if let unsupported = codings.first(where: { !ContentDecoders.supported.contains($0) }) {
            warnings.append(.unsupportedContentCoding(role, unsupported))
            decoders = []
            decoding = false
        } else {
            decoders = codings.compactMap { ContentDecoders.make($0, pool: budget?.inflateBuffers) }
            decoding = !decoders.isEmpty
        }
    }

    private var keepsRawSeparately: Bool { !codings.isEmpty }

    package func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        transferSize += bytes.count
        if keepsRawSeparately {
            let before = transferSize - bytes.count
            keep(bytes, in: &rawKept)
            if transferSize > rawKept.count && limits.hashBodies {
                hashKeptRaw()
                // What of this piece rawKept did not take.
                let skip = max(0, rawKept.count - before)
                if skip < bytes.count { rawHash.update(UnsafeRawBufferPointer(rebasing: bytes[skip...])) }
                rawHashed = transferSize
            }
        }
        if decoding {
            push(bytes, stage: 0)
            if let failure = stageFailure { stopDecoding(failure) }
        } else if !keepsRawSeparately {
            emitDecoded(bytes)
        }
    }

    /// Bytes of the body that were never captured.
    package func gap(length: Int) {
        sawGap = true
        if decoding { stopDecoding(.contentDecodingStoppedAtGap(role, length: length)) }
    }

    /// The body is over. `truncated`: it ended before its declared length (the caller says why in a warning).
    package func finish() -> HTTPBody {
        if decoding && !sawGap {
            for (index, decoder) in decoders.enumerated() {
                do throws(DecodeFailure) {
                    try decoder.finish { output in accept(output, from: index) }
                } catch {
                    stageFailure = .contentDecodingFailed(role, coding: error.coding, reason: error.reason)
                }
                if stageFailure != nil { break }
            }
            if let failure = stageFailure { stopDecoding(failure) }
        }
        if decoding, let ignored = decoders.first(where: { $0.trailingBytes > 0 }) {
            warnings.append(.bytesAfterCodedStream(role, ignored.trailingBytes, coding: ignored.coding))
        }
        if decoding {
            return HTTPBody(size: decodedSize, digest: decodedDigest, encoding: codings,
                            transferSize: transferSize, kept: decodedKept,
                            keptIsPartial: decodedKept.count < decodedSize, contentType: contentType)
        }
        if keepsRawSeparately {
            var digest: SHA256Digest?
            if limits.hashBodies {
                hashKeptRaw()
                digest = rawHash.finishDigest()
            }
            return HTTPBody(size: transferSize, digest: digest, encoding: [], transferSize: transferSize,
                            kept: rawKept, keptIsPartial: rawKept.count < transferSize, contentType: contentType)
        }
        return HTTPBody(size: decodedSize, digest: decodedDigest, encoding: [], transferSize: transferSize,
                        kept: decodedKept, keptIsPartial: decodedKept.count < decodedSize, contentType: contentType)
    }

    /// Hashes the part of `rawKept` the raw hash has not taken yet.
    private func hashKeptRaw() {
        guard rawHashed < rawKept.count else { return }
        rawKept.withUnsafeBytes { rawHash.update(UnsafeRawBufferPointer(rebasing: $0[rawHashed...])) }
        rawHashed = rawKept.count
    }

    private func stopDecoding(_ warning: HTTPWarning) {
        decoding = false
        decoders = []
        decodedKept = []
        warnings.append(warning)
    }

    private func push(_ bytes: UnsafeRawBufferPointer, stage: Int) {
        guard stageFailure == nil else { return }
        if stage == decoders.count {
            emitDecoded(bytes)
            return
        }
        do throws(DecodeFailure) {
            try decoders[stage].decode(bytes) { output in accept(output, from: stage) }
        } catch {
            stageFailure = .contentDecodingFailed(role, coding: error.coding, reason: error.reason)
        }
    }

    /// Counts one stage's output against the limits, then passes it on; false stops the stage.
    private func accept(_ output: UnsafeRawBufferPointer, from stage: Int) -> Bool {
        guard stageFailure == nil else { return false }
        producedBytes += output.count
        if producedBytes > limits.maxDecodedBodyBytes {
            stageFailure = .decodedBodyOverLimit(role, codings: codings, limit: limits.maxDecodedBodyBytes)
            return false
        }
        if let budget, !budget.spend(output.count) {
            stageFailure = .decodingBudgetRanOut(role, codings: codings, limit: budget.limit)
            return false
        }
        push(output, stage: stage + 1)
        return stageFailure == nil
    }

    private func emitDecoded(_ bytes: UnsafeRawBufferPointer) {
        decodedSize += bytes.count
        if limits.hashBodies { decodedHash.update(bytes) }
        keep(bytes, in: &decodedKept)
    }

    private func keep(_ bytes: UnsafeRawBufferPointer, in kept: inout [UInt8]) {
        let room = limits.bodyKeepBytes - kept.count
        if room > 0 { kept.append(contentsOf: bytes.prefix(room)) }
    }
}

/// Decoded bytes the content decoders may still produce over a whole capture, shared by every body: one
/// decompression bomb is stopped by the per-body limit, this stops a capture holding thousands of them.
/// It also keeps the buffers finished bodies and connections give back, for the next ones of the same decoder
/// (one budget per HTTP decoder, so one thread at a time).
public final class DecodedBytesBudget {
    public let limit: Int
    public private(set) var spent = 0
    let inflateBuffers = InflateBufferPool()
    package let headBuffers = ByteArrayPool()

    public init(limit: Int) { self.limit = limit }

    var isExhausted: Bool { spent >= limit }

    /// Takes `count` bytes from the budget; false once it is used up.
    func spend(_ count: Int) -> Bool {
        spent += count
        return spent <= limit
    }
}

/// Byte arrays that closed connections' parsers gave back (their head buffers), for the next connections' parsers:
/// otherwise most connections allocate one for their first head, in each direction. They come back empty; a
/// buffer that grew past `keptCapacity` (a long head, a large segment) is freed instead.
package final class ByteArrayPool {
    package static let capacity = 64
    package static let keptCapacity = 8192
    private var free: [[UInt8]] = []

    package var freeCount: Int { free.count }

    package func take() -> [UInt8] { free.popLast() ?? [] }

    /// Takes `array`'s storage, leaving it empty.
    package func giveBack(_ array: inout [UInt8]) {
        var taken: [UInt8] = []
        swap(&taken, &array)
        guard free.count < Self.capacity, taken.capacity > 0, taken.capacity <= Self.keptCapacity else { return }
        taken.removeAll(keepingCapacity: true)
        free.append(taken)
    }
}
