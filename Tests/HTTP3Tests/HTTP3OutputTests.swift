import Foundation
import HTTPModel
import Reports
import Testing

/// HTTP/3 exchanges (decoded from the aioquic fixture) in every output: the line view, NDJSON, HAR and --stats.
@Suite("HTTP/3 exchanges in every output")
struct HTTP3OutputTests {
    static func decoded() throws -> [HTTPExchange] { H3Fixture.exchanges(try H3Fixture("basic").run()) }

    @Test("line view: h3 #N, pushes labelled, resets as warnings")
    func lineView() throws {
        let exchanges = try Self.decoded()
        let renderer = HTTPTextRenderer(options: HTTPTextRenderer.Options())
        let get = try #require(exchanges.first { $0.http3?.streamID == 0 })
        #expect(renderer.render(get).contains("h3 #0"))
        let push = try #require(exchanges.first { $0.http3?.pushID == 0 })
        #expect(renderer.render(push).contains("h3 push 0 #15 on #64"))
        let reset = try #require(exchanges.first { $0.http3?.streamID == 60 })
        #expect(renderer.render(reset).contains("! reset by client: H3_REQUEST_CANCELLED (0x10c)"))
    }

    @Test("NDJSON: an http3 member with stream, push, outcome; HTTP/3 as the version")
    func json() throws {
        let exchanges = try Self.decoded()
        for exchange in exchanges {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(HTTPJSONRenderer.line(for: exchange).utf8)) as? [String: Any])
            let http3 = try #require(object["http3"] as? [String: Any])
            #expect(object["http2"] == nil)
            #expect(http3["header_table_unknown"] as? Bool == false)
            let facts = try #require(exchange.http3)
            #expect((http3["stream"] as? Int).map(UInt64.init) == facts.streamID)
            switch facts.outcome {
            case .complete: #expect(http3["outcome"] as? String == "complete")
            case .reset: #expect(http3["outcome"] as? String == "reset" && http3["error"] as? String == "H3_REQUEST_CANCELLED"
                                 && http3["error_code"] as? Int == 0x10c && http3["by"] as? String == "client")
            case .goaway(_, let id): #expect(http3["outcome"] as? String == "goaway" && (http3["goaway_id"] as? Int).map(UInt64.init) == id)
            case .unfinished: #expect(http3["outcome"] as? String == "unfinished")
            }
            if let pushID = facts.pushID {
                #expect((http3["push_id"] as? Int).map(UInt64.init) == pushID)
                #expect((http3["pushed_on"] as? Int).map(UInt64.init) == facts.promisedOn)
            } else {
                #expect(http3["push_id"] is NSNull)
            }
        }
    }

    @Test("HAR: httpVersion HTTP/3, https URL from :scheme and :authority, stream in the comment")
    func har() throws {
        let exchanges = try Self.decoded()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("w25h-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try HARWriter(path: path, creatorVersion: "test")
        exchanges.forEach(writer.add)
        try writer.finish()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let entries = try #require((object["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == exchanges.count)
        let hello = try #require(entries.first { ($0["request"] as? [String: Any])?["url"] as? String == "https://h3.test/hello" })
        #expect((hello["request"] as? [String: Any])?["httpVersion"] as? String == "HTTP/3")
        #expect((hello["response"] as? [String: Any])?["httpVersion"] as? String == "HTTP/3")
        #expect((hello["comment"] as? String)?.contains("HTTP/3 stream 0") == true)
    }

    @Test("--stats counts HTTP/3 exchanges apart from the HTTP/1.x tables")
    func stats() throws {
        var stats = HTTPStatistics()
        let exchanges = try Self.decoded()
        exchanges.forEach { stats.add($0) }
        #expect(stats.http3Exchanges == exchanges.count && stats.http2Exchanges == 0)
        #expect(stats.http1RequestMethods.isEmpty && stats.http1StatusCodes.isEmpty)
        #expect(stats.all.requests == exchanges.count)
    }
}
