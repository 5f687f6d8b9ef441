import FlowReassembly
@testable import BodyDecoding
@testable import HTTPDecoding
import HTTPModel
import TestSupport
import Testing

@Suite(.enabled(if: TestEnvironment.hasProgram("python3"), "needs python3 with brotli and zstandard to compress test bodies"))
struct ContentDecodingTests {
    static let body = sampleBody(300_000)

    /// (Content-Encoding value, Python coder)
    @Test(arguments: [("gzip", "gzip"), ("x-gzip", "gzip"), ("deflate", "zlib"), ("deflate", "raw-deflate"),
                      ("br", "br"), ("zstd", "zstd")])
    func decodesEachCodingInAnySplit(header: String, coder: String) throws {
        let compressed = try compress(Self.body, with: coder)
        var c = Conversation()
        c.client("GET /data HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: \(header)\r\nContent-Length: \(compressed.count)\r\n\r\n")
        c.server(compressed)
        for pieceSize in [Int.max, 1461, 1] {
            let exchanges = c.exchanges(pieceSize: pieceSize)
            try #require(exchanges.count == 1)
            let body = try #require(exchanges[0].response?.body)
            #expect(body.sha256 == SHA256.hexDigest(of: Self.body), "\(header)/\(coder) piece \(pieceSize)")
            #expect(body.size == Self.body.count)
            #expect(body.encoding == [header])
            #expect(body.transferSize == compressed.count)
            #expect(exchanges[0].warnings.isEmpty)
        }
    }

    /// Views that show no hash (text, HAR, --stats) turn hashing off: sizes and decoding are unchanged, sha256 empty,
    /// for decoded bodies, bodies kept as received and bodies longer than what is kept.
    @Test func bodiesAreNotHashedWhenNothingShowsTheHash() throws {
        let compressed = try compress(Self.body, with: "gzip")
        var c = Conversation()
        c.client("POST /up HTTP/1.1\r\nContent-Length: \(Self.body.count)\r\n\r\n")
        c.client(Self.body)
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(compressed.count)\r\n\r\n")
        c.server(compressed)
        c.client("GET /raw HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!")
        var limits = HTTPDecoderLimits()
        limits.hashBodies = false
        let exchanges = c.exchanges(pieceSize: 1461, limits: limits)
        try #require(exchanges.count == 2)
        let request = try #require(exchanges[0].request?.body), response = try #require(exchanges[0].response?.body)
        #expect(request.size == Self.body.count && request.sha256 == "")
        #expect(response.size == Self.body.count && response.encoding == ["gzip"] && response.sha256 == "")
        let raw = try #require(exchanges[1].response?.body)
        #expect(raw.size == 9 && raw.encoding == [] && raw.sha256 == "")
        // The default still hashes every one of them.
        let hashed = c.exchanges(pieceSize: 1461)
        #expect(hashed[0].request?.body.sha256 == SHA256.hexDigest(of: Self.body))
        #expect(hashed[0].response?.body.sha256 == SHA256.hexDigest(of: Self.body))
        #expect(hashed[1].response?.body.sha256 == SHA256.hexDigest(of: Array("not gzip!".utf8)))
    }

    @Test func chunkedGzipWithTwoCodings() throws {
        let inner = try compress(Self.body, with: "gzip")
        let outer = try compress(inner, with: "br")
        var chunked: [UInt8] = []
        var offset = 0
        while offset < outer.count {
            let end = min(outer.count, offset + 4000)
            chunked += Array(String(end - offset, radix: 16).utf8) + [13, 10] + outer[offset..<end] + [13, 10]
            offset = end
        }
        chunked += Array("0\r\n\r\n".utf8)
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: gzip, br\r\nTransfer-Encoding: chunked\r\n\r\n")
        c.server(chunked)
        let body = try #require(c.exchanges(pieceSize: 999).first?.response?.body)
        #expect(body.encoding == ["br", "gzip"])
        #expect(body.sha256 == SHA256.hexDigest(of: Self.body))
        // `identity` anywhere in the list is no coding at all.
        var withIdentity = Conversation()
        withIdentity.client("GET / HTTP/1.1\r\n\r\n")
        withIdentity.server("HTTP/1.1 200 OK\r\nContent-Encoding: identity, gzip\r\nContent-Encoding: identity, br, identity\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n")
        withIdentity.server(chunked)
        let same = try #require(withIdentity.exchanges(pieceSize: 999).first?.response?.body)
        #expect(same.encoding == ["br", "gzip"])
        #expect(same.sha256 == SHA256.hexDigest(of: Self.body))
    }

    @Test func failedDecodeKeepsRawBytesAndSaysWhy() throws {
        let garbage = Array("this is not gzip at all".utf8)
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(garbage.count)\r\n\r\n")
        c.server(garbage)
        let exchange = try #require(c.exchanges().first)
        let body = try #require(exchange.response?.body)
        #expect(body.encoding == [])
        #expect(body.sha256 == SHA256.hexDigest(of: garbage))
        #expect(body.kept == garbage)
        #expect(exchange.warnings.contains { if case .contentDecodingFailed(.response, "gzip", _) = $0 { true } else { false } },
                "\(exchange.warnings)")
        #expect(exchange.complete)
    }

    /// The hash of the bytes as received is taken lazily (from the kept bytes while the body fits in them): a
    /// body that fails late, small or large, in any split and with any keep limit, still gets the exact hash.
    @Test(arguments: [0, 1000, 64 * 1024]) func failedLargeDecodeHashesEveryRawByte(keep: Int) throws {
        var corrupt = try compress(Self.body, with: "gzip")
        corrupt[corrupt.count - 6] ^= 0x01  // a wrong CRC: found only at the very end
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(corrupt.count)\r\n\r\n")
        c.server(corrupt)
        var limits = HTTPDecoderLimits()
        limits.bodyKeepBytes = keep
        for pieceSize in [Int.max, 1461, 7] {
            let exchange = try #require(c.exchanges(pieceSize: pieceSize, limits: limits).first)
            let body = try #require(exchange.response?.body)
            #expect(body.encoding == [])
            #expect(body.size == corrupt.count)
            #expect(body.sha256 == SHA256.hexDigest(of: corrupt), "keep \(keep), pieces of \(pieceSize)")
            #expect(body.kept == Array(corrupt.prefix(keep)))
            #expect(exchange.warnings.contains { if case .contentDecodingFailed(.response, "gzip", _) = $0 { true } else { false } },
                    "\(exchange.warnings)")
        }
    }

    @Test func truncatedCompressedStreamIsReported() throws {
        let compressed = try compress(Self.body, with: "zstd")
        let cut = Array(compressed.prefix(compressed.count / 2))
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: zstd\r\nContent-Length: \(cut.count)\r\n\r\n")
        c.server(cut)
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.warnings.contains { if case .contentDecodingFailed(.response, "zstd", let reason) = $0 {
            reason.contains("ended early") } else { false } }, "\(exchange.warnings)")
    }

    @Test func unknownCodingIsKeptAsReceived() throws {
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\nContent-Length: 3\r\n\r\nabc")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.response?.body.sha256 == sha256Hex("abc"))
        #expect(exchange.warnings == [.unsupportedContentCoding(.response, "compress")])
    }

    /// A request body that says gzip and is not (Zeek's `http-encoding-gzip-uncompressed`): the warning names the
    /// request's body, as the exchange's one list holds both sides' warnings.
    @Test func codingWarningsNameTheBody() throws {
        let json = #"{"name":"plain, not gzip"}"#
        var c = Conversation()
        c.client("POST /upload HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\nContent-Length: 3\r\n\r\nabc")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.request?.body.sha256 == sha256Hex(json))
        let texts = exchange.warnings.map(\.description)
        #expect(texts.contains { $0.hasPrefix("request body: gzip decoding failed: ") }, "\(texts)")
        #expect(texts.contains("response body: unsupported content coding \"compress\"; body kept as received"), "\(texts)")
    }

    @Test func keptBytesAreBoundedButHashCoversAll() throws {
        var limits = HTTPDecoderLimits()
        limits.bodyKeepBytes = 100
        let compressed = try compress(Self.body, with: "br")
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: \(compressed.count)\r\n\r\n")
        c.server(compressed)
        let body = try #require(c.exchanges(limits: limits).first?.response?.body)
        #expect(body.kept == Array(Self.body.prefix(100)))
        #expect(body.keptIsPartial)
        #expect(body.sha256 == SHA256.hexDigest(of: Self.body))
    }
}
