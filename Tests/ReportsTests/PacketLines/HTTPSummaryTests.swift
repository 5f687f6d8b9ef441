@testable import PacketDecoding
@testable import Reports
import Testing

@Suite struct HTTPSummaryTests {
    func summary(_ text: String, wireLength: Int? = nil) -> String {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { raw in
            Printed.text { PacketLineRenderer().appendHTTPSummary(HTTPFirstLine(payload: raw, length: wireLength ?? bytes.count), to: &$0) }
        }
    }

    @Test func requestLineIsPrinted() {
        #expect(summary("GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n") == ": HTTP: GET /index.html HTTP/1.1")
    }

    @Test func statusLineIsPrinted() {
        #expect(summary("HTTP/1.1 200 OK\r\n\r\n") == ": HTTP: HTTP/1.1 200 OK")
    }

    @Test func bodyBytesAreJustHTTP() {
        #expect(summary("{\"a\":1}") == ": HTTP")
    }

    @Test func firstLineCutBySnapLength() {
        #expect(summary("GET /index.html HT", wireLength: 200) == ": HTTP [|http]")
    }
}
