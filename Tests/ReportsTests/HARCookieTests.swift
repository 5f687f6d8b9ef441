import Foundation
import HTTPModel
@testable import Reports
import Testing

/// HAR `cookies` from Cookie and Set-Cookie headers.
@Suite struct HARCookieTests {
    @Test func requestCookiesAreSplitIntoPairs() {
        let headers = HTTPHeaders([("Cookie", "session=abc123; theme=\"dark\""), ("Cookie", "lang=en")])
        #expect(HARCookie.fromRequest(headers) == [HARCookie(name: "session", value: "abc123"), HARCookie(name: "theme", value: "dark"),
                                                   HARCookie(name: "lang", value: "en")])
    }

    @Test func setCookieAttributesAreKept() {
        let headers = HTTPHeaders([("Set-Cookie", "id=a3fWa; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/; Domain=example.com; Secure; HttpOnly"),
                                   ("Set-Cookie", "plain=1")])
        let cookies = HARCookie.fromResponse(headers)
        #expect(cookies.count == 2)
        #expect(cookies[0] == HARCookie(name: "id", value: "a3fWa", path: "/", domain: "example.com",
                                        expires: "2026-10-21T07:28:00.000Z", httpOnly: true, secure: true))
        #expect(cookies[1] == HARCookie(name: "plain", value: "1"))
    }

    @Test func harEntriesCarryTheCookies() throws {
        var exchange = exampleExchange()
        exchange.request?.headers = HTTPHeaders([("Host", "example.com"), ("Cookie", "a=1")])
        exchange.response?.headers = HTTPHeaders([("Set-Cookie", "b=2; Path=/")])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try HARWriter(path: path, creatorVersion: "test")
        writer.add(exchange)
        try writer.finish()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let entry = try #require(((object["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let requestCookies = try #require((entry["request"] as? [String: Any])?["cookies"] as? [[String: Any]])
        #expect(requestCookies.first?["name"] as? String == "a" && requestCookies.first?["value"] as? String == "1")
        let responseCookies = try #require((entry["response"] as? [String: Any])?["cookies"] as? [[String: Any]])
        #expect(responseCookies.first?["path"] as? String == "/")
    }
}
