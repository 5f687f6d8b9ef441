import FlowReassembly
import Foundation
import HTTPModel
import PacketDecoding
import Reports
import Testing

/// A QUIC connection's resumption and 0-RTT in its line (text, -v) and its `--json` record: `resumed` as the TLS
/// line says it, 0-RTT's fate, and "not seen" (null in JSON) for what the handshake messages read do not say.
@Suite struct QUICLineTests {
    static func notice(_ resumption: QUICResumption?) -> ConnectionNotice {
        ConnectionNotice(connection: ConnectionID(1 << 62), client: Endpoint(address: .v4(0x0a00_0002), port: 50_000),
                         server: Endpoint(address: .v4(0x0a00_0001), port: 443),
                         kind: .quic(version: 1, serverName: "quic.tapkit.test", alpn: ["h3"], keys: .decrypted),
                         time: Timestamp(seconds: 0, nanoseconds: 0), resumption: resumption)
    }

    static func lines(_ resumption: QUICResumption?, verbose: Bool = true) -> [String] {
        var options = HTTPTextRenderer.Options()
        options.verbose = verbose
        options.utc = true
        return HTTPTextRenderer(options: options).render(notice(resumption)).split(separator: "\n").map(String.init)
    }

    @Test("the line and -v's line, for each thing the handshake can say or not say", arguments: [
        (QUICResumption(offered: true, resumed: true, earlyDataOffered: true, earlyDataAccepted: true),
         "ALPN h3  resumed  0-RTT accepted  (decrypted)",
         "resumption: offered by the client, accepted by the server (resumed); 0-RTT: offered by the client, accepted by the server"),
        (QUICResumption(offered: true, resumed: true, earlyDataOffered: true, earlyDataAccepted: nil),
         "ALPN h3  resumed  0-RTT offered (acceptance not seen)  (decrypted)",
         "resumption: offered by the client, accepted by the server (resumed); 0-RTT: offered by the client, the server's answer not seen (its EncryptedExtensions was not decrypted)"),
        (QUICResumption(offered: true, resumed: false, earlyDataOffered: true, earlyDataAccepted: false),
         "ALPN h3  0-RTT rejected  (decrypted)",
         "resumption: offered by the client, not accepted by the server (full handshake); 0-RTT: offered by the client, rejected by the server"),
        (QUICResumption(offered: true, resumed: nil, earlyDataOffered: false, earlyDataAccepted: nil),
         "ALPN h3  (decrypted)",
         "resumption: offered by the client, the server's answer not seen (no ServerHello read); 0-RTT: not offered"),
        (QUICResumption(offered: false, resumed: false, earlyDataOffered: false, earlyDataAccepted: false),
         "ALPN h3  (decrypted)", "resumption: not offered; 0-RTT: not offered"),
        (QUICResumption(offered: nil, resumed: nil, earlyDataOffered: nil, earlyDataAccepted: nil),
         "ALPN h3  (decrypted)", "resumption: not seen (no ClientHello read); 0-RTT: not seen (no ClientHello read)"),
    ])
    func words(_ resumption: QUICResumption, line: String, details: String) {
        let lines = Self.lines(resumption)
        #expect(lines.first?.hasSuffix("QUIC v1 quic.tapkit.test  " + line) == true, "\(lines)")
        #expect(lines.last == "    " + details)
        #expect(Self.lines(resumption, verbose: false).count == 1)
    }

    @Test("connection IDs with -v and in --json: hex, an empty ID as (empty) or \"\", one not seen as such or null")
    func connectionIDs() throws {
        var notice = Self.notice(nil)
        notice.connectionIDs = QUICConnectionIDs(clientInitialDestination: [0x0a, 0xb0], clientSource: [], serverSource: nil)
        var options = HTTPTextRenderer.Options()
        options.verbose = true
        let lines = HTTPTextRenderer(options: options).render(notice).split(separator: "\n")
        #expect(lines.last == "    connection IDs: client's first destination 0ab0, client's source (empty), server's source not seen")
        var output = TextOutput(fileDescriptor: -1, flushThreshold: Int.max)
        QUICJSONRenderer.appendLine(for: notice, to: &output)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.bytes)) as? [String: Any])
        let ids = try #require((object["quic"] as? [String: Any])?["connection_ids"] as? [String: Any])
        #expect(ids["client_initial_dcid"] as? String == "0ab0")
        #expect(ids["client_scid"] as? String == "")
        #expect(ids["server_scid"] is NSNull)
    }

    @Test("the --json record: true, false, or null where the message was not read")
    func json() throws {
        var output = TextOutput(fileDescriptor: -1, flushThreshold: Int.max)
        QUICJSONRenderer.appendLine(for: Self.notice(QUICResumption(offered: true, resumed: true, earlyDataOffered: true,
                                                                    earlyDataAccepted: nil)), to: &output)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.bytes)) as? [String: Any])
        let quic = try #require(object["quic"] as? [String: Any])
        #expect(quic["resumption_offered"] as? Bool == true)
        #expect(quic["resumed"] as? Bool == true)
        #expect(quic["early_data_offered"] as? Bool == true)
        #expect(quic["early_data_accepted"] is NSNull)
    }

    /// Issue 36: a version TapKit does not read (decoded in QUICUnknownVersionTests).
    @Test("its line and --json record name the version and say nothing was decoded, with no server name invented")
    func unknownVersion() throws {
        let notice = ConnectionNotice(connection: ConnectionID(1 << 62), client: Endpoint(address: .v4(0x0a00_0002), port: 50_000),
                                      server: Endpoint(address: .v4(0x0a00_0001), port: 4433),
                                      kind: .quic(version: 0x5130_3530, serverName: nil, alpn: [], keys: .unknownVersion),
                                      time: Timestamp(seconds: 0, nanoseconds: 0))
        var options = HTTPTextRenderer.Options()
        options.utc = true
        options.color = false
        let line = HTTPTextRenderer(options: options).render(notice)
        #expect(line.hasSuffix("  QUIC version 0x51303530  (a QUIC version TapKit does not read: nothing decoded)\n"), "\(line)")
        #expect(!line.contains("no server name"))
        #expect(QUICJSONRenderer.isRecord(notice))
        var output = TextOutput(fileDescriptor: -1, flushThreshold: Int.max)
        QUICJSONRenderer.appendLine(for: notice, to: &output)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.bytes)) as? [String: Any])
        let quic = try #require(object["quic"] as? [String: Any])
        #expect(quic["version"] as? String == "version 0x51303530")
        #expect(quic["decrypted"] as? Bool == false)
        #expect(quic["server_name"] is NSNull)
        #expect(quic["problem"] as? String == "a QUIC version TapKit does not read: nothing decoded")
    }
}
