import FlowReassembly
import HTTPModel
import PacketDecoding
import Reports
import Testing
@testable import TLS

@Suite struct KeylessConnectionsNoticeTests {
    static func session(_ id: UInt64, port: UInt16, _ decryption: TLSSessionFacts.Decryption) -> TLSSessionFacts {
        TLSSessionFacts(connection: ConnectionID(id), client: Endpoint(address: .v4(0x0A00_0002), port: 40000 + port),
                        server: Endpoint(address: .v4(0x0A00_0001), port: port), time: Timestamp(seconds: 1, nanoseconds: 0),
                        version: 0x0304, cipherSuite: 0x1301, serverName: nil, offeredALPN: [], alpn: nil, resumed: false,
                        helloRetryRequest: false, earlyDataOffered: false, decryption: decryption)
    }

    @Test("only connections without a key count; each server once; the words say what to do")
    func countsConnectionsWithoutKeys() {
        var notice = KeylessConnectionsNotice()
        notice.note(Self.session(1, port: 443, .decrypted))
        #expect(notice.isEmpty)
        notice.note(Self.session(2, port: 443, .noKeyLogged))
        notice.note(Self.session(3, port: 443, .noKeyLogged))
        notice.note(Self.session(4, port: 8443, .noKeyLogged))
        notice.note(Self.session(5, port: 443, .unsupported("TLS 1.0 is not supported")))
        #expect(notice.connections == 3)
        #expect(notice.servers.map(\.port) == [443, 8443])
        #expect(notice.description.hasPrefix("3 TLS connections (to 10.0.0.1:443, 10.0.0.1:8443) had no key in the key log"))
        #expect(notice.description.contains("tls.Config.KeyLogWriter"))
    }

    @Test("a key logged too late for the bound is counted apart: the words say to raise the bound, not to blame the program")
    func lateKeysAreNotBlamedOnTheProgram() {
        var notice = KeylessConnectionsNotice()
        notice.note(Self.session(1, port: 443, .noKeyWithin(seconds: 2)))
        notice.note(Self.session(2, port: 443, .noKeyWithin(seconds: 2)))
        notice.note(TLSConnectionWarning.keyLoggedTooLate(clientRandom: "ab", bound: 2), connection: ConnectionID(1))
        #expect(notice.connections == 1)
        #expect(notice.lateConnections == 1)
        #expect(notice.lines.count == 2)
        #expect(notice.lines[1].contains("too late for the bound of 2 s"))
        #expect(notice.lines[1].contains("--keylog-wait"))
        #expect(!notice.lines[1].contains("SSLKEYLOGFILE"))
        notice.note(TLSConnectionWarning.keyLoggedTooLate(clientRandom: "cd", bound: 2), connection: ConnectionID(2))
        #expect(notice.lines.count == 1 && notice.connections == 0)
    }
}
