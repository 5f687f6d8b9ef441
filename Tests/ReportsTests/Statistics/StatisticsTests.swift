import FlowReassembly
import Foundation
import HTTPModel
import PacketDecoding
@testable import Reports
import Testing

private let client = Endpoint(address: .v4(0x0a00_0002), port: 51000)
private let server = Endpoint(address: .v4(0x0a00_0001), port: 80)
private func at(_ ms: Int) -> Timestamp { Timestamp(seconds: 1_000 + Int64(ms / 1000), nanoseconds: Int32(ms % 1000) * 1_000_000) }

@Suite struct ConversationTableTests {
    @Test func countsBothDirectionsUnderTheFirstSender() {
        var table = ConversationTable()
        #expect(table.countTCP(from: client, to: server, flags: .syn, sequence: 100, frameLength: 74, at: at(0)) == 0)
        #expect(table.countTCP(from: server, to: client, flags: [.syn, .ack], sequence: 900, frameLength: 74, at: at(1)) == 0)
        #expect(table.countTCP(from: client, to: server, flags: .ack, sequence: 101, frameLength: 66, at: at(5)) == 0)
        let c = table.tcp[0]
        #expect(c.a == client && c.b == server)
        #expect((c.framesAToB, c.bytesAToB, c.framesBToA, c.bytesBToA) == (2, 140, 1, 74))
        #expect(abs(c.duration - 0.005) < 1e-9)
    }

    @Test func aNewSYNOnAUsedTupleIsANewConversationButARetransmittedOneIsNot() {
        var table = ConversationTable()
        table.countTCP(from: client, to: server, flags: .syn, sequence: 100, frameLength: 74, at: at(0))
        #expect(table.countTCP(from: client, to: server, flags: .syn, sequence: 100, frameLength: 74, at: at(1000)) == 0)
        #expect(table.countTCP(from: client, to: server, flags: .syn, sequence: 5_000, frameLength: 74, at: at(2000)) == 1)
        #expect(table.countTCP(from: server, to: client, flags: .ack, sequence: 1, frameLength: 66, at: at(2001)) == 1)
        #expect(table.tcp.count == 2 && table.tcp[0].frames == 2 && table.tcp[1].frames == 2)
    }

    @Test func udpAndTheLimitAreCounted() {
        var limits = StatisticsLimits()
        limits.maxConversations = 1
        var table = ConversationTable(limits: limits)
        #expect(table.countUDP(from: client, to: server, frameLength: 60, at: at(0)) == 0)
        #expect(table.countUDP(from: server, to: client, frameLength: 60, at: at(0)) == 0)
        #expect(table.countTCP(from: client, to: server, flags: .syn, sequence: 1, frameLength: 60, at: at(0)) == nil)
        #expect(table.packetsNotTabled == 1)
    }

    @Test func endpointsAreDerivedFromConversations() {
        var table = ConversationTable()
        table.countTCP(from: client, to: server, flags: .syn, sequence: 1, frameLength: 74, at: at(0))
        table.countTCP(from: server, to: client, flags: [.syn, .ack], sequence: 1, frameLength: 70, at: at(0))
        let endpoints = table.tcp.endpoints()
        #expect(endpoints.count == 2)
        #expect((endpoints[0].txFrames, endpoints[0].txBytes, endpoints[0].rxBytes) == (1, 74, 70))
        #expect(endpoints[1].port == 80 && endpoints[1].bytes == 144)
    }
}

@Suite struct HTTPStatisticsTests {
    func exchange(_ method: String, status: Int, latencyMs: Int, host: String, size: Int, version: String = "HTTP/1.1") -> HTTPExchange {
        let body = HTTPBody(size: size, digest: nil, encoding: [], transferSize: size, kept: [], keptIsPartial: false, contentType: nil)
        let request = HTTPRequest(method: method, uri: "/x", version: version, headers: HTTPHeaders([("Host", host + ":8080")]),
                                  body: HTTPBody(size: 0, digest: nil, encoding: [], transferSize: 0, kept: [], keptIsPartial: false, contentType: nil),
                                  headSize: 40, start: at(0), end: at(1))
        let response = HTTPResponse(status: status, reason: "", version: version, headers: HTTPHeaders(), body: body,
                                    headSize: 40, interim: status == 200 ? [HTTPInterimResponse(status: 100, reason: "Continue", headers: HTTPHeaders(), time: at(1))] : [],
                                    start: at(1 + latencyMs), end: at(2 + latencyMs))
        return HTTPExchange(connection: ConnectionID(1), client: client, server: server, request: request, response: response,
                            complete: true, warnings: [], upgrade: nil)
    }

    @Test func groupsCountsAndPercentiles() {
        var stats = HTTPStatistics()
        for ms in 1...100 { stats.add(exchange("GET", status: ms <= 90 ? 200 : 404, latencyMs: ms, host: "a.test", size: ms)) }
        stats.add(exchange("POST", status: 503, latencyMs: 500, host: "b.test", size: 7))
        #expect(stats.all.requests == 101 && stats.all.responses == 101)
        #expect(stats.hosts.map(\.name) == ["a.test", "b.test"])
        #expect(stats.methods.map(\.name) == ["GET", "POST"])
        #expect(stats.all.statusClasses[2] == 90 && stats.all.statusClasses[4] == 10 && stats.all.statusClasses[5] == 1)
        // Interim 100s count as responses of their own, as in tshark's http tree.
        #expect(stats.http1StatusCodes == [100: 90, 200: 90, 404: 10, 503: 1])
        let p = stats.hosts[0].latency.percentiles([50, 90, 99])
        #expect(p.map { $0.map { ($0 * 1000).rounded() } } == [50, 90, 99])
        #expect(stats.all.latency.maximum.map { ($0 * 1000).rounded() } == 500)
        #expect(stats.largest.map(\.bodyBytes) == [100, 99, 98, 97, 96, 95, 94, 93, 92, 91])
    }

    @Test func http2IsLeftOutOfTheTsharkCounts() {
        var stats = HTTPStatistics()
        var h2 = exchange("GET", status: 204, latencyMs: 3, host: "c.test", size: 0, version: "HTTP/2.0")
        h2.http2 = HTTP2StreamFacts(streamID: 1, outcome: .complete)
        stats.add(h2)
        #expect(stats.all.requests == 1 && stats.http2Exchanges == 1)
        #expect(stats.http1StatusCodes.isEmpty && stats.http1RequestMethods.isEmpty)
    }

    @Test func hostsPastTheLimitShareOneRow() {
        var limits = StatisticsLimits()
        limits.maxHTTPHosts = 2
        var stats = HTTPStatistics(limits: limits)
        for host in ["a", "b", "c", "d"] { stats.add(exchange("GET", status: 200, latencyMs: 1, host: host, size: 1)) }
        #expect(stats.hosts.map(\.name) == ["a", "b", "(other hosts)"])
        #expect(stats.hosts[2].requests == 2 && stats.hostsOverLimit == 2)
    }
}

@Suite struct FollowTests {
    @Test func targetsParse() throws {
        #expect(try FollowTarget(parsing: "3") == .index(3))
        #expect(try FollowTarget(parsing: "10.0.0.2:51000-10.0.0.1:80") == .ends(client, server))
        #expect(try FollowTarget(parsing: "10.0.0.2:51000,10.0.0.1:80") == .ends(client, server))
        let v6 = try FollowTarget(parsing: "[fd00::2]:55748-[fd00::1]:80")
        #expect(v6 == .ends(Endpoint(address: .v6(high: 0xfd00_0000_0000_0000, low: 2), port: 55748),
                            Endpoint(address: .v6(high: 0xfd00_0000_0000_0000, low: 1), port: 80)))
        for bad in ["-1", "x", "10.0.0.1:80", "10.0.0.1:80-[fd00::1]:80", "10.0.0.1:99999-10.0.0.2:1"] {
            #expect(throws: FollowTarget.ParseError.self) { try FollowTarget(parsing: bad) }
        }
    }

    /// Writes into a pipe and returns what arrived.
    func written(_ format: FollowFormat, _ body: (inout FollowStreamWriter) -> Void) throws -> String {
        let pipe = Pipe()
        var writer = FollowStreamWriter(format: format, node0: client, node1: server,
                                        output: TextOutput(fileDescriptor: pipe.fileHandleForWriting.fileDescriptor))
        writer.writeHeader(filter: FollowStreamWriter.filter(index: 0))
        writer.connectionOpened(ConnectionID(1), client: client, server: server, at: at(0))
        body(&writer)
        writer.writeFooter()
        try pipe.fileHandleForWriting.close()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test func asciiMarksNodesGapsAndUnprintables() throws {
        let text = try written(.ascii) { writer in
            Array("GET /\r\n\u{1}".utf8).withUnsafeBytes { writer.streamData(ConnectionID(1), .clientToServer, $0, at: at(0)) }
            writer.streamGap(ConnectionID(1), .serverToClient, length: 1448, at: at(1))
        }
        #expect(text == """

            ===================================================================
            Follow: tcp,ascii
            Filter: tcp.stream eq 0
            Node 0: 10.0.0.2:51000
            Node 1: 10.0.0.1:80
            8
            GET /\r
            .
            \t37
            [1448 bytes missing in capture file].
            ===================================================================

            """)
    }

    @Test func hexOffsetsCountEachDirectionAndTrimAsTshark() throws {
        let text = try written(.hex) { writer in
            Array("0123456789abcdefXYZ".utf8).withUnsafeBytes { writer.streamData(ConnectionID(1), .clientToServer, $0, at: at(0)) }
            Array("HTTP/1.1".utf8).withUnsafeBytes { writer.streamData(ConnectionID(1), .serverToClient, $0, at: at(1)) }
            Array("ab".utf8).withUnsafeBytes { writer.streamData(ConnectionID(1), .clientToServer, $0, at: at(2)) }
        }
        let body = text.split(separator: "\n").dropFirst(5).dropLast().map(String.init)
        #expect(body == [
            "00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  01234567 89abcdef",
            "00000010  58 59 5a                                          XYZ",
            "\t00000000  48 54 54 50 2f 31 2e 31                           HTTP/1.1",
            "00000013  61 62                                             ab",
        ])
    }
}
