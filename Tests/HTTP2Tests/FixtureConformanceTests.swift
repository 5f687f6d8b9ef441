import Foundation
import Testing
import TestSupport

/// Every committed HTTP/2, gRPC and WebSocket capture decoded by `capture --http --json`, compared with what
/// the fixture's own server and client logged while it was made (Scripts/fixtures/make-h2.sh), and with tshark.
@Suite("HTTP/2 fixtures against the peers' logs", .enabled(if: haveCapture, "capture binary not built; run swift build"))
struct FixtureConformanceTests {
    private func request(_ exchange: [String: Any]) -> [String: Any] { exchange["request"] as? [String: Any] ?? [:] }
    private func response(_ exchange: [String: Any]) -> [String: Any] { exchange["response"] as? [String: Any] ?? [:] }
    private func body(_ message: [String: Any]) -> [String: Any] { message["body"] as? [String: Any] ?? [:] }
    private func http2(_ exchange: [String: Any]) -> [String: Any] { exchange["http2"] as? [String: Any] ?? [:] }

    /// Exchanges keyed by (connection order, stream): the server numbers connections in accept order too.
    private func checkAgainstServer(_ fixture: String) throws {
        let (exchanges, _, _) = try jsonRecords(fixture)
        let logs = try FixtureLogs.load(fixture)
        #expect(exchanges.count == logs.server.count, "\(fixture): \(exchanges.count) exchanges, server logged \(logs.server.count)")
        // Connection order by client port appearance; within a connection, match by stream id.
        var connectionOrder: [String] = []
        for exchange in exchanges {
            let client = exchange["client"] as? String ?? ""
            if !connectionOrder.contains(client) { connectionOrder.append(client) }
        }
        for logged in logs.server {
            let connection = (logged["connection"] as? Int).map { $0 - 1 }
            let stream = logged["stream"] as? Int
            let match = exchanges.first { exchange in
                let client = exchange["client"] as? String ?? ""
                let sameConnection = connection.map { connectionOrder.indices.contains($0) && connectionOrder[$0] == client } ?? true
                return sameConnection && http2(exchange)["stream"] as? Int == stream
            }
            let exchange = try #require(match, "\(fixture): no exchange for \(logged)")
            #expect(request(exchange)["method"] as? String == logged["method"] as? String)
            #expect(request(exchange)["uri"] as? String == logged["path"] as? String)
            #expect(response(exchange)["status"] as? Int == logged["status"] as? Int, "\(fixture) stream \(stream ?? -1)")
            #expect(body(request(exchange))["sha256"] as? String == logged["request_sha256"] as? String,
                    "\(fixture) stream \(stream ?? -1): request body")
            #expect(body(response(exchange))["sha256"] as? String == logged["response_sha256"] as? String,
                    "\(fixture) stream \(stream ?? -1): response body")
            #expect(body(response(exchange))["size"] as? Int == logged["response_size"] as? Int)
            let outcome = logged["outcome"] as? String ?? ""
            if outcome.hasPrefix("reset by server") {
                #expect(http2(exchange)["outcome"] as? String == "reset")
                #expect(http2(exchange)["by"] as? String == "server")
                #expect(http2(exchange)["error"] as? String == outcome.split(separator: " ").last.map(String.init))
                #expect(exchange["complete"] as? Bool == false)
            } else {
                #expect(http2(exchange)["outcome"] as? String == "complete", "\(fixture) stream \(stream ?? -1)")
                #expect(exchange["complete"] as? Bool == true, "\(fixture) stream \(stream ?? -1): \(exchange["warnings"] ?? "")")
            }
            if logged["pushed"] as? Bool == true { #expect(http2(exchange)["pushed_on"] as? Int != nil) }
            for trailer in logged["trailers"] as? [[String]] ?? [] {
                let headers = response(exchange)["headers"] as? [[String]] ?? []
                #expect(headers.contains(trailer), "\(fixture) stream \(stream ?? -1): trailer \(trailer) missing")
            }
        }
    }

    @Test("h2c prior knowledge (curl): method, path, status and decoded bodies equal the server's log")
    func priorKnowledge() throws { try checkAgainstServer("h2c-prior-knowledge.pcap") }

    @Test("h2 frame features: padding, concurrent streams, trailers, table size change, CONTINUATION, reset, push")
    func features() throws { try checkAgainstServer("h2-features.pcap") }

    @Test("h2c via Upgrade: the HTTP/1.1 upgrade request is stream 1's request, the 101 an interim response")
    func upgrade() throws {
        try checkAgainstServer("h2c-upgrade.pcap")
        let (exchanges, _, _) = try jsonRecords("h2c-upgrade.pcap")
        for exchange in exchanges {
            #expect(request(exchange)["version"] as? String == "HTTP/1.1")
            #expect(http2(exchange)["stream"] as? Int == 1)
        }
    }

    @Test("every HTTP/2 fixture: the client saw the same decoded bodies (curl and the python client's own logs)")
    func clientLogs() throws {
        for fixture in ["h2c-prior-knowledge.pcap", "h2c-upgrade.pcap", "h2-features.pcap"] {
            let (exchanges, _, _) = try jsonRecords(fixture)
            for logged in try FixtureLogs.load(fixture).client {
                let path = logged["path"] as? String
                let candidates = exchanges.filter { request($0)["uri"] as? String == path }
                #expect(!candidates.isEmpty, "\(fixture): no exchange for \(path ?? "?")")
                // The python client logs the body as received (before content decoding), curl after it.
                let received = logged["received_sha256"] as? String
                if let stream = logged["stream"] as? Int, (logged["outcome"] as? String) == "complete",
                   let exchange = candidates.first(where: { http2($0)["stream"] as? Int == stream }),
                   (body(response(exchange))["encoding"] as? [String] ?? []).isEmpty {
                    #expect(body(response(exchange))["sha256"] as? String == received, "\(fixture) \(path ?? "")")
                } else if logged["stream"] == nil {
                    #expect(candidates.contains { body(response($0))["sha256"] as? String == received }, "\(fixture) \(path ?? "")")
                }
            }
        }
    }

    @Test("gRPC: service, method, status and message sizes equal the server's log")
    func grpc() throws {
        let (exchanges, _, _) = try jsonRecords("grpc.pcap")
        let logs = try FixtureLogs.load("grpc.pcap")
        #expect(exchanges.count == logs.server.count)
        for logged in logs.server {
            let path = try #require(logged["method"] as? String)
            let exchange = try #require(exchanges.first { request($0)["uri"] as? String == path }, "no exchange for \(path)")
            let grpc = try #require(exchange["grpc"] as? [String: Any])
            #expect("/\(grpc["service"] as? String ?? "")/\(grpc["method"] as? String ?? "")" == path)
            #expect(grpc["status"] as? Int == logged["grpc_status"] as? Int, "\(path)")
            let message = logged["grpc_message"] as? String ?? ""
            #expect((grpc["message"] as? String ?? "") == message, "\(path)")
            for (side, key) in [("request_messages", "requests"), ("response_messages", "responses")] {
                let counted = try #require(grpc[side] as? [String: Any])
                let expected = (logged[key] as? [[String: Any]] ?? []).map { $0["size"] as? Int ?? -1 }
                #expect(counted["count"] as? Int == expected.count, "\(path) \(side)")
                #expect((counted["listed"] as? [[String: Any]] ?? []).map { $0["size"] as? Int ?? -2 } == expected, "\(path) \(side)")
            }
        }
    }

    @Test("WebSocket: every message (direction, type, size, sha256) and the close equal the client's log")
    func webSocket() throws {
        let (exchanges, messages, _) = try jsonRecords("websocket.pcap")
        let logs = try FixtureLogs.load("websocket.pcap")
        #expect(exchanges.count == 2)
        #expect(exchanges.allSatisfy { response($0)["status"] as? Int == 101 && $0["upgrade_decoded"] as? Bool == true })
        let data = messages.filter { ["text", "binary"].contains($0["kind"] as? String ?? "") }
        let logged = logs.client.filter { $0["from"] != nil }
        #expect(data.count == logged.count)
        for (decoded, expected) in zip(data, logged) {
            #expect(decoded["from"] as? String == expected["from"] as? String)
            #expect(decoded["kind"] as? String == expected["type"] as? String)
            #expect(decoded["size"] as? Int == expected["size"] as? Int)
            #expect(decoded["sha256"] as? String == expected["sha256"] as? String)
            if let text = expected["text"] as? String { #expect(decoded["text"] as? String == text) }
        }
        // The first connection negotiated permessage-deflate, the second did not.
        #expect(data.prefix(8).allSatisfy { $0["compressed"] as? Bool == true })
        #expect(data.suffix(8).allSatisfy { $0["compressed"] as? Bool == false })
        #expect(data.contains { ($0["frames"] as? Int ?? 1) > 1 }, "the fragmented message came in several frames")
        let closes = messages.filter { $0["kind"] as? String == "close" }
        #expect(closes.count == 4)
        #expect(closes.allSatisfy { $0["close_code"] as? Int == 4001 && $0["close_reason"] as? String == "client done" })
    }

    @Test("tshark agrees on every stream's :method, :path and :status", .enabled(if: haveTshark, "tshark not installed"))
    func tsharkHeaderFields() throws {
        for (fixture, port) in [("h2c-prior-knowledge.pcap", 80), ("h2-features.pcap", 80), ("grpc.pcap", 50051)] {
            let theirs = try tsharkHeaders(fixture, port: port)
            #expect(!theirs.isEmpty, "tshark decoded no HTTP/2 headers in \(fixture)")
            let (exchanges, _, _) = try jsonRecords(fixture)
            for exchange in exchanges {
                let stream = http2(exchange)["stream"] as? Int ?? -1
                let path = request(exchange)["uri"] as? String ?? ""
                #expect(theirs.contains { $0.streams.contains(stream) && $0.name == ":path" && $0.value == path },
                        "\(fixture) stream \(stream): tshark has no :path \(path)")
                let status = response(exchange)["status"] as? Int ?? -1
                #expect(theirs.contains { $0.streams.contains(stream) && $0.name == ":status" && $0.value == "\(status)" },
                        "\(fixture) stream \(stream): tshark has no :status \(status)")
            }
        }
    }

    @Test("tshark agrees on the WebSocket frame count and the close codes", .enabled(if: haveTshark, "tshark not installed"))
    func tsharkWebSocket() throws {
        let result = try run("tshark", ["-r", fixturePath("websocket.pcap"), "-Y", "websocket", "-T", "fields",
                                        "-E", "occurrence=a", "-E", "aggregator=|", "-e", "websocket.opcode",
                                        "-e", "websocket.payload.close.status_code"])
        let opcodes = result.stdoutText.split(separator: "\n").flatMap { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).first.map { $0.split(separator: "|").compactMap { Int($0) } } ?? []
        }
        let (_, messages, _) = try jsonRecords("websocket.pcap")
        #expect(opcodes.count == messages.reduce(0) { $0 + ($1["frames"] as? Int ?? 1) }, "tshark frames: \(opcodes)")
        #expect(opcodes.filter { $0 == 8 }.count == messages.filter { $0["kind"] as? String == "close" }.count)
        #expect(result.stdoutText.components(separatedBy: "4001").count - 1 == 4)
    }

    @Test("HAR: every HTTP/2 stream is an entry with httpVersion HTTP/2.0")
    func har() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tapkit-h2-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try capture(["-r", fixturePath("h2-features.pcap"), "--http", "--har", path])
        #expect(result.status == 0)
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        #expect(entries.count == 10)
        #expect(entries.allSatisfy { ($0["response"] as? [String: Any])?["httpVersion"] as? String == "HTTP/2.0" })
        #expect(entries.allSatisfy { (($0["request"] as? [String: Any])?["url"] as? String ?? "").hasPrefix("http://10.218.0.1/") })
    }

    @Test("one-line view: stream numbers, push, reset and gRPC status are shown")
    func textView() throws {
        let text = try capture(["-r", fixturePath("h2-features.pcap"), "--http", "--utc"]).stdoutText
        #expect(text.contains("GET 10.218.0.1/reset → 200"))
        #expect(text.contains("! reset by server: CANCEL (0x8)"))
        #expect(text.contains("h2 #2 pushed on #17"))
        let grpc = try capture(["-r", fixturePath("grpc.pcap"), "--http", "--utc"]).stdoutText
        #expect(grpc.contains("gRPC tapkit.fixture.Inventory/Fail NOT_FOUND \"no such sku: 999\""))
        let ws = try capture(["-r", fixturePath("websocket.pcap"), "--http", "--utc"]).stdoutText
        #expect(ws.contains("WS close 4001 \"client done\""))
    }
}
