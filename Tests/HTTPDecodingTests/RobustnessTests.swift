import FlowReassembly
@testable import HTTPDecoding
import HTTPModel
import Testing

/// Hostile and broken input: the decoder must never crash or hang, whatever the bytes, splits and gaps.
@Suite struct RobustnessTests {
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    }

    static let fragments: [String] = [
        "GET / HTTP/1.1\r\n", "Host: a\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n",
        "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n", "0\r\n\r\n", "ffffffffffffffff\r\n", "Content-Length: -1\r\n",
        "Content-Length: 99999999999999999999999\r\n", "HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 101 Switching\r\n",
        "Upgrade: websocket\r\nConnection: upgrade\r\n", "Content-Encoding: gzip\r\n", "Content-Encoding: br, zstd\r\n",
        "CONNECT x:443 HTTP/1.1\r\n", "HEAD /h HTTP/1.0\r\n", " folded\r\n", ":\r\n", "\u{16}\u{03}\u{01}\u{00}\u{05}",
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "\n", "\r", "x",
    ]

    @Test(arguments: 0..<40)
    func randomConversationsNeverCrash(seed: Int) {
        var random = Random(state: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1)
        var c = Conversation()
        for _ in 0..<(20 + random.below(60)) {
            switch random.below(10) {
            case 0: c.steps.append(.clientGap(1 + random.below(5000)))
            case 1: c.steps.append(.serverGap(1 + random.below(5000)))
            case 2: c.client((0..<random.below(300)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            case 3: c.server((0..<random.below(300)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            case 4, 5, 6: c.client(Self.fragments[random.below(Self.fragments.count)])
            default: c.server(Self.fragments[random.below(Self.fragments.count)])
            }
        }
        var limits = HTTPDecoderLimits()
        limits.maxHeadBytes = 512
        limits.bodyKeepBytes = 64
        let whole = c.run(limits: limits)
        let bytewise = c.run(pieceSize: 1, limits: limits)
        #expect(whole == bytewise, "seed \(seed): splitting changed the result")
    }

    @Test func everyPrefixOfARealConversationIsHandled() {
        let full = ParserTests.keepAlivePipelined()
        var bytes: [(Bool, [UInt8])] = []
        for step in full.steps {
            if case .client(let b) = step { bytes.append((true, b)) }
            if case .server(let b) = step { bytes.append((false, b)) }
        }
        let total = bytes.reduce(0) { $0 + $1.1.count }
        for cut in stride(from: 0, through: total, by: 7) {
            var c = Conversation()
            var left = cut
            for (isClient, chunk) in bytes where left > 0 {
                let part = Array(chunk.prefix(left))
                left -= part.count
                if isClient { c.client(part) } else { c.server(part) }
            }
            c.steps.append(.clientEnd(.captureEnded))
            c.steps.append(.serverEnd(.captureEnded))
            let exchanges = c.exchanges()
            // Whatever was cut, every complete exchange is one of the real ones.
            for exchange in exchanges where exchange.complete {
                #expect(["/a", "/b?x=1", "/c"].contains(exchange.request?.uri ?? ""))
            }
        }
    }
}
