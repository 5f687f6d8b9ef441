import Foundation
import HTTPModel
@testable import LiveView
import PacketDecoding
import Testing
import TestSupport

@Suite struct RecordStoreTests {
    @Test func bodiesAreKeptUpToThePerBodyAndSessionLimits() throws {
        var limits = LiveViewLimits()
        limits.bodyBytes = 100
        limits.sessionBodyBytes = 250
        let store = RecordStore(limits: limits)
        let small = store.add(makeExchange(responseBody: [UInt8](repeating: 1, count: 80)))
        #expect(small.responseBody == KeptBody(size: 80, keptBytes: 80, loss: nil))
        let big = store.add(makeExchange(responseBody: [UInt8](repeating: 2, count: 300)))
        #expect(big.responseBody == KeptBody(size: 300, keptBytes: 100, loss: .overBodyLimit(100)))
        #expect(big.exchange.response?.body.kept.count == 100)
        #expect(big.exchange.response?.body.keptIsPartial == true)
        // 180 of 250 used: another 80 fits, the next does not, and says so.
        #expect(store.add(makeExchange(responseBody: [UInt8](repeating: 3, count: 60))).responseBody.whole)
        let over = store.add(makeExchange(responseBody: [UInt8](repeating: 4, count: 80)))
        #expect(over.responseBody == KeptBody(size: 80, keptBytes: 0, loss: .sessionLimitReached(250)))
        #expect(store.counts.keptBodyBytes == 240)
    }

    @Test func theOldestExchangesAreDroppedAtTheLimitAndPagingSaysSo() throws {
        var limits = LiveViewLimits()
        limits.exchanges = 5
        limits.pageSize = 2
        limits.sessionBodyBytes = 50
        let store = RecordStore(limits: limits)
        for index in 0..<8 { store.add(makeExchange(path: "/\(index)", responseBody: [UInt8](repeating: 0, count: 10))) }
        #expect(store.counts.held == 5)
        #expect(store.counts.dropped == 3)
        // Dropping frees the bodies' share of the session limit.
        #expect(store.counts.keptBodyBytes == 50)
        let first = store.page(since: 0)
        #expect(first.records.map(\.id) == [3, 4])
        #expect(first.next == 5)
        #expect(first.dropped == 3)
        #expect(store.page(since: first.next).records.map(\.id) == [5, 6])
        #expect(store.exchanges(since: 7).map(\.exchange.request?.uri) == ["/7"])
        #expect(store.page(since: 8).records.isEmpty)
        #expect(store.page(since: 8).next == 8)
        #expect(store.page(since: 1000).next == 8)
        #expect(store.exchange(id: 2) == nil)
        #expect(store.exchange(id: 4)?.exchange.request?.uri == "/4")
    }

    @Test func pagesOverHTTPFollowNext() throws {
        var limits = LiveViewLimits()
        limits.pageSize = 3
        let server = try TestServer(exchanges: (0..<7).map { makeExchange(path: "/\($0)") }, limits: limits)
        defer { server.stop() }
        var ids: [Int] = [], next = 0
        for _ in 0..<4 {
            let page = try server.json("/api/exchanges?since=\(next)")
            ids += (page["exchanges"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            next = page["next"] as? Int ?? -1
        }
        #expect(ids == Array(0..<7))
        #expect(next == 7)
    }

    @Test func throughputBucketsStayBounded() {
        var buckets = ThroughputBuckets(limit: 4)
        let start: Int64 = 1_700_000_000
        #expect(buckets.add(100, up: true, at: Timestamp(seconds: start, nanoseconds: 0)).isEmpty)
        #expect(buckets.add(50, up: false, at: Timestamp(seconds: start + 2, nanoseconds: 5)) == 0..<2)
        #expect(buckets.up == [100, 0, 0])
        #expect(buckets.down == [0, 0, 50])
        // Past four buckets, neighbours merge and a bucket is two seconds.
        buckets.add(7, up: true, at: Timestamp(seconds: start + 5, nanoseconds: 0))
        #expect(buckets.bucketSeconds == 2)
        #expect(buckets.up == [100, 0, 7])
        #expect(buckets.down == [0, 50, 0])
        buckets.add(1, up: true, at: Timestamp(seconds: start + 1000, nanoseconds: 0))
        #expect(buckets.up.count <= 4)
        #expect(buckets.up.reduce(0, +) == 108)
    }
}
