import FlowReassembly
import HTTPModel
import PacketDecoding
@testable import HTTPDecoding
import Testing

/// CONNECT and Upgrade tunnels are shown as tunnels: bytes each way, TLS inside labelled (issue 9).
@Suite struct TunnelTests {
    static func clientHello(_ host: String) -> [UInt8] {
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
        let name = Array(host.utf8)
        let list: [UInt8] = [0x00] + be16(name.count) + name
        let sni: [UInt8] = [0x00, 0x00] + be16(list.count + 2) + be16(list.count) + list
        var hello: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 7, count: 32) + [0] + [0x00, 0x02, 0x13, 0x01] + [1, 0]
        hello += be16(sni.count) + sni
        let handshake: [UInt8] = [1, 0] + be16(hello.count) + hello
        return [0x16, 0x03, 0x01] + be16(handshake.count) + handshake
    }

    /// CONNECT, the ClientHello sent before the proxy's answer arrives (held, then handed to the tunnel), the 200,
    /// then 6 bytes of records each way.
    static func acceptedConnect() -> (Conversation, hello: [UInt8]) {
        let hello = clientHello("secure.example.com")
        var c = Conversation()
        c.client(Array("CONNECT secure.example.com:443 HTTP/1.1\r\nHost: secure.example.com:443\r\n\r\n".utf8) + hello)
        c.server(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8) + [0x16, 0x03, 0x03, 0x00, 0x01, 0x02])
        c.client([0x17, 0x03, 0x03, 0x00, 0x01, 0xff])
        return (c, hello)
    }

    @Test(arguments: [1, 7, 10_000])
    func anAcceptedConnectIsATunnelWithTLSInside(pieceSize: Int) throws {
        let (c, hello) = Self.acceptedConnect()
        let events = c.run(pieceSize: pieceSize)
        let exchange = try #require(events.compactMap(\.exchange).first)
        #expect(exchange.request?.method == "CONNECT")
        #expect(exchange.upgrade == "tunnel")
        let notices = events.compactMap { if case .notice(let n) = $0 { n } else { nil } }
        #expect(notices.map(\.kind) == [.tls(serverName: "secure.example.com", alpn: [])])
        let warnings = events.compactMap { if case .warning(_, let m, _) = $0 { m.description } else { nil } }
        #expect(warnings == ["CONNECT tunnel closed: \(hello.count + 6) bytes client→server, 6 bytes server→client, "
                             + "TLS inside to secure.example.com"], "\(warnings)")
    }

    /// What a plugged-in tunnel decoder is given, in order.
    final class RecordingTunnelDecoder: ConnectionHandler {
        var bytes: [StreamDirection: [UInt8]] = [:]
        var calls: [String] = []
        func consume(_ direction: StreamDirection, _ data: UnsafeRawBufferPointer, at time: Timestamp) -> Handover? {
            bytes[direction, default: []] += data
            return nil
        }
        func gap(_ direction: StreamDirection, length: Int, at time: Timestamp) -> Handover? {
            calls.append("gap \(length)")
            return nil
        }
        func end(_ direction: StreamDirection, reason: StreamEndReason, at time: Timestamp) -> Handover? {
            calls.append(direction == .clientToServer ? "client end" : "server end")
            return nil
        }
        func close(at time: Timestamp) { calls.append("close") }
    }

    /// With a decoder for tunnels plugged in (capture's TLS decryption with a key log), it gets every byte of the
    /// tunnel each way, the ends, then the close; the CONNECT exchange is marked decoded, the tunnel's summary
    /// stays, and the tunnel does not label the TLS itself (the decoder reports the session).
    @Test(arguments: [1, 7, 10_000])
    func aTunnelDecoderGetsTheTunnelsBytes(pieceSize: Int) throws {
        let (c, hello) = Self.acceptedConnect()
        nonisolated(unsafe) var made: [RecordingTunnelDecoder] = []
        let events = c.run(pieceSize: pieceSize, takeover: { _, trigger in
            guard case .tunnel(let exchange) = trigger, exchange.request?.method == "CONNECT" else { return nil }
            let decoder = RecordingTunnelDecoder()
            made.append(decoder)
            return decoder
        })
        let decoder = try #require(made.first)
        #expect(made.count == 1)
        #expect(decoder.bytes[.clientToServer] == hello + [0x17, 0x03, 0x03, 0x00, 0x01, 0xff])
        #expect(decoder.bytes[.serverToClient] == [0x16, 0x03, 0x03, 0x00, 0x01, 0x02])
        #expect(decoder.calls == ["client end", "server end", "close"])
        let exchange = try #require(events.compactMap(\.exchange).first)
        #expect(exchange.upgrade == "tunnel" && exchange.upgradeDecoded)
        #expect(!events.contains { if case .notice = $0 { true } else { false } }, "the decoder reports TLS, not the tunnel")
        let warnings = events.compactMap { if case .warning(_, let m, _) = $0 { m.description } else { nil } }
        #expect(warnings == ["CONNECT tunnel closed: \(hello.count + 6) bytes client→server, 6 bytes server→client, "
                             + "TLS inside to secure.example.com"], "\(warnings)")
    }

    /// After a refused CONNECT the client may send what it meant to tunnel anyway: before the answer arrived
    /// (optimistic clients) or after it. Those bytes are not HTTP: one note says so, no exchange is made of them.
    @Test(arguments: [false, true], [1, 7, 10_000])
    func bytesSentAfterARefusedConnectAreOpaque(beforeTheAnswer: Bool, pieceSize: Int) throws {
        let hello = Self.clientHello("denied.example.com")
        let connect = Array("CONNECT denied.example.com:443 HTTP/1.1\r\nHost: denied.example.com:443\r\n\r\n".utf8)
        let refusal = "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 5\r\n\r\nno!\r\n"
        var c = Conversation()
        if beforeTheAnswer {
            c.client(connect + hello)
            c.server(refusal)
        } else {
            c.client(connect)
            c.server(refusal)
            c.client(hello)
        }
        c.client([0x15, 0x03, 0x03, 0x00, 0x02, 0x01, 0x00])  // and an alert, for good measure
        let events = c.run(pieceSize: pieceSize)
        let exchanges = events.compactMap(\.exchange)
        #expect(exchanges.count == 1, "\(exchanges)")
        let exchange = try #require(exchanges.first)
        #expect(exchange.request?.method == "CONNECT")
        #expect(exchange.response?.status == 407)
        #expect(exchange.upgrade == nil)
        #expect(exchange.complete)
        #expect(exchange.warnings.isEmpty, "\(exchange.warnings)")
        // The ClientHello went nowhere: the connection is not labelled TLS.
        #expect(events.allSatisfy { if case .notice = $0 { false } else { true } })
        let warnings = events.compactMap { if case .warning(_, let m, _) = $0 { m.description } else { nil } }
        #expect(warnings == ["after its CONNECT was refused (407 Proxy Authentication Required), the client sent "
                             + "\(hello.count + 7) bytes that are not HTTP (a TLS ClientHello for denied.example.com, "
                             + "the tunnel it asked for); shown as opaque bytes, not decoded"], "\(warnings)")
    }

    /// What follows a refusal and reads as HTTP is HTTP: a retried CONNECT with credentials, then its tunnel.
    @Test(arguments: [1, 7, 10_000])
    func aRetriedConnectAfterARefusalIsATunnel(pieceSize: Int) throws {
        var c = Conversation()
        c.client("CONNECT inner.example:80 HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        c.client("CONNECT inner.example:80 HTTP/1.1\r\nProxy-Authorization: Basic eDp5\r\n\r\nGET /in HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let events = c.run(pieceSize: pieceSize)
        let exchanges = events.compactMap(\.exchange)
        #expect(exchanges.map { $0.response?.status ?? 0 } == [407, 200])
        #expect(exchanges.map { $0.upgrade ?? "-" } == ["-", "tunnel"])
        let warnings = events.compactMap { if case .warning(_, let m, _) = $0 { m.description } else { nil } }
        #expect(warnings == ["CONNECT tunnel closed: 20 bytes client→server, 38 bytes server→client"], "\(warnings)")
    }

    /// A printable line that is not a request line (another protocol's greeting) is not HTTP either.
    @Test func aTextLineThatIsNotARequestAfterARefusalIsOpaque() throws {
        var c = Conversation()
        c.client("CONNECT mail.example:25 HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        c.client("EHLO client.example\r\n")
        let events = c.run()
        #expect(events.compactMap(\.exchange).count == 1)
        let warnings = events.compactMap { if case .warning(_, let m, _) = $0 { m.description } else { nil } }
        #expect(warnings == ["after its CONNECT was refused (403 Forbidden), the client sent 21 bytes that are not "
                             + "HTTP; shown as opaque bytes, not decoded"], "\(warnings)")
    }

    @Test func aRefusedConnectStaysHTTP() throws {
        var c = Conversation()
        c.client("CONNECT x:443 HTTP/1.1\r\n\r\nGET /after HTTP/1.1\r\n\r\n")
        c.server("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        let exchanges = c.exchanges()
        #expect(exchanges.map { $0.request?.uri ?? "-" } == ["x:443", "/after"])
        #expect(exchanges.allSatisfy { $0.upgrade == nil })
    }
}
