import FlowReassembly
import Foundation
@testable import HTTPDecoding
import HTTPModel
import Testing

/// Regression tests for what fuzzing and hand-made hostile captures found (issue 9): each used to crash, hang
/// or grow memory without bound.
@Suite struct HostileInputTests {
    static func response(_ head: String, body: [UInt8]) -> [UInt8] { Array(head.utf8) + body }

    @Test func negativeChunkSizeIsAWarningNotACrash() throws {
        for (size, warning) in [("-1", HTTPWarning.negativeChunkSize("-1")), ("+5", .invalidChunkSizeLine("+5")),
                                ("-0", .negativeChunkSize("-0"))] {
            var c = Conversation()
            c.client("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            c.server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nhello\r\n0\r\n\r\n")
            let exchange = try #require(c.exchanges().first)
            #expect(exchange.warnings.contains(warning), "\(size): \(exchange.warnings)")
            #expect(!exchange.complete)
        }
    }

    /// The smallest gzip member: empty content.
    static let emptyGzipMember: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    @Test func manyConcatenatedGzipMembersDecodeWithoutRecursion() throws {
        // 200,000 members: one stack frame each used to overflow the stack.
        var body: [UInt8] = []
        body.reserveCapacity(200_000 * Self.emptyGzipMember.count + 40)
        for _ in 0..<200_000 { body += Self.emptyGzipMember }
        body += try compress(Array("tail".utf8), with: "gzip")
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server(Self.response("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n",
                               body: body))
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.response?.body.kept == Array("tail".utf8), "\(exchange.warnings)")
        #expect(exchange.warnings.isEmpty, "\(exchange.warnings)")
    }

    @Test func nestedCodingsCountEveryStageAgainstTheLimit() throws {
        // The inner stage inflates into megabytes of junk after a tiny gzip stream; the outer one ignores it, so
        // counting only the final stage let it through.
        let inner = try compress([], with: "gzip") + [UInt8](repeating: 0, count: 4 << 20)
        let body = try compress(inner, with: "gzip")
        var limits = HTTPDecoderLimits()
        limits.maxDecodedBodyBytes = 1 << 20
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server(Self.response("HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip\r\nContent-Length: \(body.count)\r\n\r\n",
                               body: body))
        let exchange = try #require(c.exchanges(limits: limits).first)
        #expect(exchange.warnings.contains(.decodedBodyOverLimit(.response, codings: ["gzip", "gzip"], limit: 1 << 20)),
                "\(exchange.warnings)")
    }

    @Test func trailingBytesAfterACompressedStreamAreWarned() throws {
        for coding in ["gzip", "br"] {
            let body = try compress(Array("hello".utf8), with: coding) + Array("JUNKJUNK".utf8)
            var c = Conversation()
            c.client("GET / HTTP/1.1\r\n\r\n")
            c.server(Self.response("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: \(body.count)\r\n\r\n",
                                   body: body))
            let exchange = try #require(c.exchanges().first)
            #expect(exchange.response?.body.kept == Array("hello".utf8))
            #expect(exchange.warnings.contains(.bytesAfterCodedStream(.response, 8, coding: coding)), "\(coding): \(exchange.warnings)")
        }
    }

    @Test func tooManyCodingsAreKeptAsReceived() throws {
        let codings = Array(repeating: "gzip", count: 5000).joined(separator: ", ")
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Encoding: \(codings)\r\nContent-Length: 2\r\n\r\nhi")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.warnings.contains(.tooManyContentCodings(.response, listed: 5000, limit: 4)), "\(exchange.warnings)")
        #expect(exchange.response?.body.kept == Array("hi".utf8))
    }

    @Test func theCaptureWideDecodingBudgetStopsLaterBombs() throws {
        let bomb = try compress([UInt8](repeating: 0, count: 300_000), with: "gzip")
        var limits = HTTPDecoderLimits()
        limits.maxDecodedBytesPerCapture = 500_000
        var c = Conversation()
        for _ in 0..<3 {
            c.client("GET / HTTP/1.1\r\n\r\n")
            c.server(Self.response("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)\r\n\r\n",
                                   body: bomb))
        }
        let exchanges = c.exchanges(limits: limits)
        #expect(exchanges.count == 3)
        #expect(exchanges[0].warnings.isEmpty)
        // The second body runs the budget out; the third finds it used up.
        #expect(exchanges[1].warnings == [.decodingBudgetRanOut(.response, codings: ["gzip"], limit: 500_000)])
        #expect(exchanges[2].warnings == [.decodingBudgetUsedUp(.response, limit: 500_000)])
        #expect(exchanges[2].response?.body.size == bomb.count)  // kept as received
    }

    @Test func aFloodOfInterimResponsesIsBounded() throws {
        var c = Conversation()
        c.client("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        c.server(String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 10_000) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.response?.status == 200)
        #expect(exchange.response?.interim.count == HTTPDecoderLimits().maxInterimResponses)
        #expect(exchange.warnings.contains(.interimResponsesDropped(total: 10_000, kept: HTTPDecoderLimits().maxInterimResponses)),
                "\(exchange.warnings)")
    }

    @Test func aFloodOfBadHeadsRunsOutOfResyncBudgetAndWarningsStayBounded() throws {
        var limits = HTTPDecoderLimits()
        limits.maxResyncScanBytes = 64 * 1024
        var c = Conversation()
        c.client("GET /first HTTP/1.1\r\n\r\n")
        // Each bad head starts its own resync, so every one used to restart the resync budget.
        c.client(String(repeating: "\u{1}BAD /bad HTTP/1.1\r\nHost: x\r\n\r\n", count: 20_000))
        c.client("GET /after HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let exchanges = c.exchanges(limits: limits)
        #expect(exchanges.count == 1, "\(exchanges.map { $0.request?.uri ?? "-" })")
        for exchange in exchanges {
            #expect(exchange.warnings.count <= 2 * limits.maxWarningsPerMessage, "\(exchange.warnings.count)")
        }
    }

    @Test func warningsPerMessageAreBounded() throws {
        var c = Conversation()
        c.client("GET / HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 OK\r\n\r\n")
        for _ in 0..<5000 {
            c.steps.append(.serverGap(3))
            c.server("abc")
        }
        let exchange = try #require(c.exchanges().first)
        #expect(exchange.warnings.count <= 2 * HTTPDecoderLimits().maxWarningsPerMessage)
        #expect(exchange.warnings.contains(.furtherWarningsNotShown))
        #expect(exchange.warnings.first == .gapInBody(.response, length: 3))
    }
}
