import Foundation
@testable import LiveView
import Testing
import TestSupport

/// Every request is checked before anything is served: real HTTP requests to a server on a loopback port.
@Suite struct RequestSecurityTests {
    @Test func tokenHostAndOriginAreRequired() throws {
        let server = try TestServer(exchanges: [makeExchange()])
        defer { server.stop() }
        let client = server.client, port = server.port
        // The right token, by header, query or cookie: served.
        #expect(try client.request("/api/exchanges", token: testToken).status == 200)
        #expect(try client.request("/api/exchanges?token=\(testToken)", token: nil).status == 200)
        #expect(try client.request("/api/info", token: nil, extra: [("Cookie", "a=b; tapkit=\(testToken)")]).status == 200)
        #expect(try client.request("/api/info", token: testToken, extra: [("Origin", "http://127.0.0.1:\(port)")]).status == 200)
        #expect(try client.request("/api/info", token: testToken, host: "localhost:\(port)").status == 200)
        // No token, a wrong one, one a character short: 403, and nothing of the capture in the answer.
        for token in [nil, "ffffffffffffffffffffffffffffffff", String(testToken.dropLast())] {
            let response = try client.request("/api/exchanges", token: token)
            #expect(response.status == 403)
            #expect(!response.text.contains("shop.test"))
        }
        #expect(try client.request("/", token: nil).status == 403)
        #expect(try client.request("/api/live", token: nil, extra: [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                                                    ("Sec-WebSocket-Version", "13")]).status == 403)
        // Another site's page (cross-site request), even with the token.
        for origin in ["http://evil.example", "null", "http://127.0.0.1:\(port + 1)", "https://127.0.0.1:\(port)"] {
            #expect(try client.request("/api/info", token: testToken, extra: [("Origin", origin)]).status == 403, "\(origin)")
        }
        // A name that resolves here (DNS rebinding), another port, no port, an IPv6 literal without brackets (its
        // last colon is not a port separator), a bracket left open, no Host, two Hosts.
        for host in ["evil.example:\(port)", "127.0.0.1:\(port + 1)", "127.0.0.1", "localhost.evil.example:\(port)",
                     "::1:\(port)", "[::1:\(port)", "[::1]x\(port)"] {
            #expect(try client.request("/api/info", token: testToken, host: host).status == 403, "\(host)")
        }
        let noHost = try RawHTTP.parse(client.exchange(Array("GET /api/info HTTP/1.1\r\nX-TapKit-Token: \(testToken)\r\nConnection: close\r\n\r\n".utf8)))
        #expect(noHost.status == 403)
        let twoHosts = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nHost: evil.example:\(port)\r\n"
            + "X-TapKit-Token: \(testToken)\r\nConnection: close\r\n\r\n"
        #expect(try RawHTTP.parse(client.exchange(Array(twoHosts.utf8))).status == 403)
    }

    @Test func everyAnswerCarriesTheSecurityHeaders() throws {
        let server = try TestServer()
        defer { server.stop() }
        for (target, token) in [("/", testToken), ("/api/info", testToken), ("/api/info", nil), ("/nothing", testToken)] {
            let response = try server.client.request(target, token: token)
            #expect(response.header("X-Content-Type-Options") == "nosniff")
            #expect(response.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            // The body views' frames are srcdoc documents: no frame is ever loaded from a URL, blob: included.
            #expect(response.header("Content-Security-Policy")?.contains("frame-src 'none'") == true)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Referrer-Policy") == "no-referrer")
        }
        let page = try server.client.request("/?token=\(testToken)", token: nil)
        #expect(page.status == 200)
        #expect(page.header("Set-Cookie") == "tapkit=\(testToken); HttpOnly; SameSite=Strict; Path=/")
    }

    /// A body holding markup comes back only as data: escaped inside JSON strings, or as an octet-stream download
    /// with nosniff, never as a type the browser would render.
    @Test func capturedMarkupIsOnlyData() throws {
        let script = Array("<script>alert(document.cookie)</script>\"</x>".utf8)
        let server = try TestServer(exchanges: [makeExchange(path: "/<script>alert(1)</script>", responseBody: script,
                                                             responseType: "text/html")])
        defer { server.stop() }
        let list = try server.client.request("/api/exchanges?since=0", token: testToken)
        #expect(list.header("Content-Type") == "application/json; charset=utf-8")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.body)) as? [String: Any])
        let first = try #require((object["exchanges"] as? [[String: Any]])?.first)
        #expect((first["request"] as? [String: Any])?["uri"] as? String == "/<script>alert(1)</script>")
        let body = try server.client.request("/api/exchanges/0/response-body", token: testToken)
        #expect(body.status == 200)
        #expect(body.body == script)
        #expect(body.header("Content-Type") == "application/octet-stream")
        #expect(body.header("Content-Disposition")?.hasPrefix("attachment") == true)
        #expect(body.header("X-Content-Type-Options") == "nosniff")
    }

    /// Bad requests get a 4xx and the server goes on serving.
    @Test func hostileRequestsAreRefusedAndTheServerStaysUp() throws {
        var limits = LiveViewLimits()
        limits.requestBodyBytes = 1024
        let server = try TestServer(limits: limits)
        defer { server.stop() }
        let client = server.client
        let big = try client.request("/api/conditioner", method: "POST", token: testToken, body: [UInt8](repeating: 0x41, count: 4096))
        #expect(big.status == 413)
        let garbage = try client.exchange(Array("\u{01}\u{02} nonsense\r\n\r\n".utf8))
        #expect(garbage.isEmpty || (try? RawHTTP.parse(garbage).status) == 400)
        let longHeader = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nX-Long: "
            + String(repeating: "a", count: 64 << 10) + "\r\n\r\n"
        let refused = try client.exchange(Array(longHeader.utf8))
        #expect(refused.isEmpty || (try? RawHTTP.parse(refused).status).map { (400..<500).contains($0) } == true)
        for target in ["/api/exchanges?since=-1", "/api/exchanges?since=abc", "/api/exchanges/99/response-body",
                       "/api/exchanges/x/other", "/page/../../etc/passwd", "/api/live"] {
            let status = try client.request(target, token: testToken).status
            #expect((400..<500).contains(status), "\(target): \(status)")
        }
        #expect(try client.request("/api/info", method: "DELETE", token: testToken).status == 405)
        #expect(try client.request("/api/info", token: testToken).status == 200)
    }

    @Test func connectionsAreBounded() throws {
        var limits = LiveViewLimits()
        limits.clientConnections = 2
        let server = try TestServer(limits: limits)
        defer { server.stop() }
        // Two idle connections hold the two places; a third is closed without an answer.
        let held = try (0..<2).map { _ in try OpenSocket(port: server.port) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try server.client.exchange(Array("GET /api/info HTTP/1.1\r\nHost: x\r\n\r\n".utf8)).isEmpty)
        for socket in held { socket.close() }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try server.client.request("/api/info", token: testToken).status == 200)
    }

    @Test func bindingsParse() {
        #expect(LiveViewBinding(parsing: "") == LiveViewBinding())
        #expect(LiveViewBinding(parsing: "9000") == LiveViewBinding(port: 9000, portIsDefault: false))
        #expect(LiveViewBinding(parsing: "[::1]:9000") == LiveViewBinding(address: "::1", port: 9000, portIsDefault: false))
        #expect(LiveViewBinding(parsing: "0.0.0.0:80")?.address == "0.0.0.0")
        #expect(LiveViewBinding(parsing: "::1") == LiveViewBinding(address: "::1"))
        #expect(LiveViewBinding(parsing: ":9000") == LiveViewBinding(port: 9000, portIsDefault: false))
        #expect(LiveViewBinding(parsing: "[::]") == LiveViewBinding(address: "::"))
        for bad in ["tcp", "port", "example.com:80", "1.2.3.4:99999", "1.2.3.4:", "[::1", "[::1]9000", "[::1]:", "[x]:80"] {
            #expect(LiveViewBinding(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func tokensAreRandomAndLong() {
        let tokens = (0..<100).map { _ in LiveViewToken().description }
        #expect(Set(tokens).count == 100)
        #expect(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }
}

/// A connection that stays open and says nothing.
final class OpenSocket {
    let fd: Int32
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 { throw RawHTTP.Failure(description: "connect: \(errno)") }
    }
    func close() { Glibc.close(fd) }
}
