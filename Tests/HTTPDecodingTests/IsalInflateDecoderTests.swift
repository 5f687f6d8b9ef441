@testable import BodyDecoding
@testable import HTTPDecoding
import HTTPModel
import TestSupport
import Testing

/// ISA-L decodes gzip and deflate bodies; zlib is the reference. Every case is fed to both decoders in several
/// piece sizes and must give the same output, the same trailing-byte count and the same error text.
@Suite(.enabled(if: TestEnvironment.hasProgram("python3"), "needs python3 to compress test bodies"))
struct IsalInflateDecoderTests {
    struct Outcome: Equatable, CustomStringConvertible {
        var output: [UInt8] = []
        var failure: String?
        var trailing = 0
        var description: String { "\(output.count) bytes out, trailing \(trailing), failure \(failure ?? "none")" }
    }

    static func run(_ decoder: ContentDecoder, _ input: [UInt8], pieceSize: Int, stopAfter: Int = .max) -> Outcome {
        var outcome = Outcome()
        var stopped = false
        let sink: DecodedSink = { piece in
            outcome.output += piece
            stopped = outcome.output.count >= stopAfter
            return !stopped
        }
        do throws(DecodeFailure) {
            var offset = 0
            while offset < input.count && !stopped {  // as BodyAccumulator, which stops feeding a stopped decoder
                let end = min(input.count, offset + pieceSize)
                var failure: DecodeFailure?
                input[offset..<end].withUnsafeBytes { bytes in
                    do throws(DecodeFailure) { try decoder.decode(bytes, sink: sink) } catch { failure = error }
                }
                if let failure { throw failure }
                offset = end
            }
            try decoder.finish(sink: sink)
        } catch {
            outcome.failure = error.description
        }
        outcome.trailing = decoder.trailingBytes
        return outcome
    }

    static func expectSame(_ coding: String, _ input: [UInt8], _ label: String) {
        let format: ZlibDecoder.Format = coding == "deflate" ? .sniffZlibOrRaw : .gzipOrZlib
        for pieceSize in [Int.max, 1448, 7, 3, 1] {
            let isal = run(IsalInflateDecoder(coding: coding, format: format), input, pieceSize: pieceSize)
            let zlib = run(ZlibDecoder(coding: coding, format: format), input, pieceSize: pieceSize)
            #expect(isal == zlib, "\(label), pieces of \(pieceSize): ISA-L \(isal) against zlib \(zlib)")
        }
    }

    static let body = sampleBody(120_000)

    @Test func wellFormedBodiesInEveryWrapper() throws {
        Self.expectSame("gzip", try compress(Self.body, with: "gzip"), "gzip")
        Self.expectSame("gzip", try compress(Self.body, with: "zlib"), "zlib labelled gzip")
        Self.expectSame("deflate", try compress(Self.body, with: "zlib"), "zlib deflate")
        Self.expectSame("deflate", try compress(Self.body, with: "raw-deflate"), "raw deflate")
        Self.expectSame("gzip", try compress([], with: "gzip"), "gzip of nothing")
        Self.expectSame("gzip", [], "empty body")
    }

    @Test func membersAndTrailingBytes() throws {
        let one = try compress(Array(Self.body.prefix(5000)), with: "gzip")
        let two = try compress(Array(Self.body.suffix(7000)), with: "gzip")
        Self.expectSame("gzip", one + two, "two members")
        Self.expectSame("gzip", one + Array("junk after the stream".utf8), "trailing junk")
        Self.expectSame("gzip", one + [0x1f, 0x00, 0x01], "a second member with a bad header")
        Self.expectSame("deflate", try compress(Self.body, with: "zlib") + [1, 2, 3], "zlib with trailing bytes")
        Self.expectSame("deflate", try compress(Self.body, with: "raw-deflate") + [1, 2, 3], "raw deflate with trailing bytes")
        Self.expectSame("gzip", one + [0x1f, 0x8b, 8, 0, 1, 2], "a cut-short second member")
    }

    @Test func brokenBodiesFailWithZlibsWords() throws {
        let gzip = try compress(Self.body, with: "gzip")
        Self.expectSame("gzip", Array("this is not gzip at all".utf8), "not compressed")
        Self.expectSame("gzip", Array(gzip.prefix(gzip.count / 2)), "truncated")
        Self.expectSame("gzip", Array(gzip.prefix(2)), "two bytes")
        Self.expectSame("deflate", [0x78], "one byte")
        var corrupt = gzip
        corrupt[gzip.count / 3] ^= 0xff
        Self.expectSame("gzip", corrupt, "a flipped byte in the data")
        var badCRC = gzip
        badCRC[gzip.count - 6] ^= 0x01
        Self.expectSame("gzip", badCRC, "a wrong CRC")
        var badFlags = gzip
        badFlags[3] = 0xe0
        Self.expectSame("gzip", badFlags, "reserved header flags")
        var badMethod = gzip
        badMethod[2] = 7
        Self.expectSame("gzip", badMethod, "an unknown method")
    }

    /// Decoders that share a pool take over the ISA-L state, output buffer and replay storage of the bodies before
    /// them, whatever those left there (cut short, corrupt, handed to zlib, stopped part-way, whole): each decodes
    /// exactly as a decoder with buffers of its own.
    @Test func pooledBuffersCarryNothingFromOneBodyToTheNext() throws {
        let gzip = try compress(Self.body, with: "gzip")
        var corrupt = gzip
        corrupt[gzip.count / 3] ^= 0xff
        let bodies: [(coding: String, format: ZlibDecoder.Format, input: [UInt8], stopAfter: Int)] = [
            ("gzip", .gzipOrZlib, Array(gzip.prefix(gzip.count / 2)), .max),
            ("gzip", .gzipOrZlib, corrupt, .max),
            ("deflate", .sniffZlibOrRaw, try compress(Array(Self.body.suffix(7000)), with: "raw-deflate"), .max),
            ("gzip", .gzipOrZlib, gzip, 40_000),
            ("deflate", .sniffZlibOrRaw, try compress(Self.body, with: "zlib"), .max),
            ("gzip", .gzipOrZlib, gzip, .max),
        ]
        let pool = InflateBufferPool()
        for round in 0..<2 {
            for (index, body) in bodies.enumerated() {
                for pieceSize in [Int.max, 1448] {
                    let pooled = Self.run(IsalInflateDecoder(coding: body.coding, format: body.format, pool: pool),
                                          body.input, pieceSize: pieceSize, stopAfter: body.stopAfter)
                    let own = Self.run(IsalInflateDecoder(coding: body.coding, format: body.format), body.input,
                                       pieceSize: pieceSize, stopAfter: body.stopAfter)
                    #expect(pooled == own, "round \(round), body \(index), pieces of \(pieceSize)")
                }
            }
        }
        #expect(pool.freeCount == 1, "one decoder at a time: its buffers went back and were taken again")
    }

    /// A limit stops a decoder part-way: the body is then kept as received, so only where it stops may differ.
    @Test func stopsWhenTheSinkSaysSo() throws {
        let gzip = try compress(Self.body, with: "gzip")
        for pieceSize in [Int.max, 1448, 1] {
            let isal = Self.run(IsalInflateDecoder(coding: "gzip", format: .gzipOrZlib), gzip, pieceSize: pieceSize,
                                stopAfter: 40_000)
            #expect(isal.output.count >= 40_000 && isal.output.count < Self.body.count)
            #expect(isal.output.elementsEqual(Self.body.prefix(isal.output.count)))
        }
    }
}
