/// Takes one message's body as transferred (already de-chunked), removes its content codings as bytes arrive,
/// and keeps only what the limits allow: running SHA-256 and size of the decoded body, its first bytes for
/// display, and, while decoding is in progress, the same for the raw bytes so a failed decode can fall back to
/// them.
final class BodyAccumulator {
    private let limits: HTTPDecoderLimits
    private let contentType: String?
    /// Codings in the order they are removed (the reverse of the order the header lists them).
    private let codings: [String]
    private var decoders: [ContentDecoder]
    private var decoding: Bool

    private var transferSize = 0
    private lazy var rawHash = SHA256()
    private var rawKept: [UInt8] = []
    /// Created with the first decoded byte: most messages (GET requests, 304s) have no body, and an EVP context
    /// costs allocations to create, finish and free.
    private var decodedHasher: SHA256?
    private var decodedHash: SHA256 {
        if let decodedHasher { return decodedHasher }
        let hasher = SHA256()
        decodedHasher = hasher
        return hasher
    }
    /// SHA-256 of no bytes, computed once.
    private static let emptyDigest = SHA256().finishHexDigest()
    private var decodedDigest: String { decodedHasher?.finishHexDigest() ?? Self.emptyDigest }
    private var decodedSize = 0
    private var decodedKept: [UInt8] = []
    private var stageFailure: DecodeFailure?
    private(set) var warnings: [String] = []
    private(set) var sawGap = false

    /// `contentEncoding`: the Content-Encoding tokens as listed in the header (`identity` ignored).
    init(contentEncoding: [String], contentType: String?, limits: HTTPDecoderLimits) {
        self.limits = limits
        self.contentType = contentType
        let listed = contentEncoding.filter { $0 != "identity" }
        codings = listed.reversed()
        if let unsupported = codings.first(where: { !ContentDecoders.supported.contains($0) }) {
            warnings.append("unsupported content coding \"\(unsupported)\"; body kept as received")
            decoders = []
            decoding = false
        } else {
            decoders = codings.compactMap(ContentDecoders.make)
            decoding = !decoders.isEmpty
        }
    }

    private var keepsRawSeparately: Bool { !codings.isEmpty }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        transferSize += bytes.count
        if keepsRawSeparately {
            rawHash.update(bytes)
            keep(bytes, in: &rawKept)
        }
        if decoding {
            push(bytes, stage: 0)
            if let failure = stageFailure { stopDecoding(failure.description + "; body kept as received") }
        } else if !keepsRawSeparately {
            emitDecoded(bytes)
        }
    }

    /// Bytes of the body that were never captured.
    func gap(length: Int) {
        sawGap = true
        if decoding { stopDecoding("content decoding stopped at a gap of \(length) bytes; body kept as received") }
    }

    /// The body is over. `truncated`: it ended before its declared length (the caller says why in a warning).
    func finish() -> HTTPBody {
        if decoding && !sawGap {
            for (index, decoder) in decoders.enumerated() {
                do throws(DecodeFailure) {
                    try decoder.finish { output in push(output, stage: index + 1) }
                } catch {
                    stageFailure = error
                }
                if stageFailure != nil { break }
            }
            if let failure = stageFailure { stopDecoding(failure.description + "; body kept as received") }
        }
        if decoding {
            return HTTPBody(size: decodedSize, sha256: decodedDigest, encoding: codings,
                            transferSize: transferSize, kept: decodedKept,
                            keptIsPartial: decodedKept.count < decodedSize, contentType: contentType)
        }
        if keepsRawSeparately {
            return HTTPBody(size: transferSize, sha256: rawHash.finishHexDigest(), encoding: [], transferSize: transferSize,
                            kept: rawKept, keptIsPartial: rawKept.count < transferSize, contentType: contentType)
        }
        return HTTPBody(size: decodedSize, sha256: decodedDigest, encoding: [], transferSize: transferSize,
                        kept: decodedKept, keptIsPartial: decodedKept.count < decodedSize, contentType: contentType)
    }

    private func stopDecoding(_ warning: String) {
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
            try decoders[stage].decode(bytes) { output in push(output, stage: stage + 1) }
        } catch {
            stageFailure = error
        }
    }

    private func emitDecoded(_ bytes: UnsafeRawBufferPointer) {
        decodedSize += bytes.count
        if keepsRawSeparately && decodedSize > limits.maxDecodedBodyBytes {
            stageFailure = DecodeFailure(codings.joined(separator: ", "),
                                         "decoded body exceeds the \(limits.maxDecodedBodyBytes)-byte limit")
            return
        }
        decodedHash.update(bytes)
        keep(bytes, in: &decodedKept)
    }

    private func keep(_ bytes: UnsafeRawBufferPointer, in kept: inout [UInt8]) {
        let room = limits.bodyKeepBytes - kept.count
        if room > 0 { kept.append(contentsOf: bytes.prefix(room)) }
    }
}

extension DecodeFailure {
    init(_ coding: String, _ reason: String) {
        self.init(coding: coding, reason: reason)
    }
}
