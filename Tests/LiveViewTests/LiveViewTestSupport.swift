import FlowReassembly
import Foundation
import TestSupport
import HTTPModel
import LinkConditioner
@testable import LiveView
import PacketDecoding

let testToken = "0123456789abcdef0123456789abcdef"

/// An exchange with the given path and bodies, at `second` seconds into the capture.
func makeExchange(path: String = "/", second: Int64 = 1_700_000_000, requestBody: [UInt8] = [],
                  responseBody: [UInt8] = [], responseType: String = "application/json") -> HTTPExchange {
    let start = Timestamp(seconds: second, nanoseconds: 0)
    func body(_ bytes: [UInt8], _ type: String?) -> HTTPBody {
        HTTPBody(size: bytes.count, digest: nil, encoding: [], transferSize: bytes.count, kept: bytes, keptIsPartial: false,
                 contentType: type)
    }
    let request = HTTPRequest(method: requestBody.isEmpty ? "GET" : "POST", uri: path, version: "HTTP/1.1",
                              headers: HTTPHeaders([("Host", "shop.test")]), body: body(requestBody, nil),
                              headSize: 40, start: start, end: start)
    let response = HTTPResponse(status: 200, reason: "OK", version: "HTTP/1.1",
                                headers: HTTPHeaders([("Content-Type", responseType)]), body: body(responseBody, responseType),
                                headSize: 40, interim: [], start: start, end: start)
    return HTTPExchange(connection: ConnectionID(1), client: Endpoint(address: .v4(0x0a00_0002), port: 40000),
                        server: Endpoint(address: .v4(0x0a00_0001), port: 80), request: request, response: response,
                        complete: true, warnings: [], upgrade: nil)
}

/// A server on an ephemeral loopback port with `exchanges` in its store; stopped by `stop()`.
struct TestServer {
    let view: LiveView
    var client: RawHTTP { RawHTTP(port: view.server.port) }
    var port: Int { view.server.port }

    init(exchanges: [HTTPExchange] = [], limits: LiveViewLimits = LiveViewLimits(),
         conditioner: ConditionerPanel = ConditionerPanel(unavailable: "a test without a link"),
         address: String = "127.0.0.1") throws {
        view = try LiveView(binding: LiveViewBinding(address: address, port: 0, portIsDefault: false),
                            source: .file(path: "test.pcap"), limits: limits, conditioner: conditioner,
                            token: LiveViewToken(fixed: testToken))
        for exchange in exchanges { view.handle(.http(.exchange(exchange))) }
    }

    func stop() { _ = view.stop() }

    func json(_ target: String) throws -> [String: Any] {
        let response = try client.request(target, token: testToken)
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }
}
