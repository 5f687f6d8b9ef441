import FlowReassembly
import HTTPModel
import Testing
@testable import TLS

/// RFC 8448 section 3 ("Simple 1-RTT Handshake"): secrets and records as the RFC prints them.
enum RFC8448 {
    static let clientRandom = "cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7"
    static let clientHandshakeSecret = "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"
    static let serverHandshakeSecret = "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"
    static let clientApplicationSecret = "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5"
    static let serverApplicationSecret = "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643"

    static let clientHelloRecord = hex("""
        16030100c4010000c00303cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7000006130113031302010000910000000b0009000006736572766572ff01000100000a00140012001d0017001800190100010101020103010400230000003300260024001d002099381de560e4bd43d23d8e435a7dbafeb3c06e51c13cae4d5413691e529aaf2c002b0003020304000d0020001e040305030603020308040805080604010501060102010402050206020202002d00020101001c00024001
        """)
    static let serverHelloRecord = hex("""
        160303005a020000560303a6af06a4121860dc5e6e60249cd34c95930c8ac5cb1434dac155772ed3e2692800130100002e00330024001d0020c9828876112095fe66762bdbf7c672e156d6cc253b833df1dd69b1b04e751f0f002b00020304
        """)
    static let serverFlightRecord = hex("""
        17030302a2d1ff334a56f5bff6594a07cc87b580233f500f45e489e7f33af35edf7869fcf40aa40aa2b8ea73f848a7ca07612ef9f945cb960b4068905123ea78b111b429ba9191cd05d2a389280f526134aadc7fc78c4b729df828b5ecf7b13bd9aefb0e57f271585b8ea9bb355c7c79020716cfb9b1183ef3ab20e37d57a6b9d7477609aee6e122a4cf51427325250c7d0e509289444c9b3a648f1d71035d2ed65b0e3cdd0cbae8bf2d0b227812cbb360987255cc744110c453baa4fcd610928d809810e4b7ed1a8fd991f06aa6248204797e36a6a73b70a2559c09ead686945ba246ab66e5edd8044b4c6de3fcf2a89441ac66272fd8fb330ef8190579b3684596c960bd596eea520a56a8d650f563aad27409960dca63d3e688611ea5e22f4415cf9538d51a200c27034272968a264ed6540c84838d89f72c24461aad6d26f59ecaba9acbbb317b66d902f4f292a36ac1b639c637ce343117b659622245317b49eeda0c6258f100d7d961ffb138647e92ea330faeea6dfa31c7a84dc3bd7e1b7a6c7178af36879018e3f252107f243d243dc7339d5684c8b0378bf30244da8c87c843f5e56eb4c5e8280a2b48052cf93b16499a66db7cca71e4599426f7d461e66f99882bd89fc50800becca62d6c74116dbd2972fda1fa80f85df881edbe5a37668936b335583b599186dc5c6918a396fa48a181d6b6fa4f9d62d513afbb992f2b992f67f8afe67f76913fa388cb5630c8ca01e0c65d11c66a1e2ac4c85977b7c7a6999bbf10dc35ae69f5515614636c0b9b68c19ed2e31c0b3b66763038ebba42f3b38edc0399f3a9f23faa63978c317fc9fa66a73f60f0504de93b5b845e275592c12335ee340bbc4fddd502784016e4b3be7ef04dda49f4b440a30cb5d2af939828fd4ae3794e44f94df5a631ede42c1719bfdabf0253fe5175be898e750edc53370d2b
        """)
    static let clientFinishedRecord = hex("""
        170303003575ec4dc238cce60b298044a71e219c56cc77b0517fe9b93c7a4bfc44d87f38f80338ac98fc46deb384bd1caeacab6867d726c40546
        """)
    static let ticketRecord = hex("""
        17030300de3a6b8f90414a97d6959c3487680de5134a2b240e6cffac116e95d41d6af8f6b580dcf3d11d63c758db289a015940252f55713e061dc13e078891a38efbcf5753ad8ef170ad3c7353d16d9da773b9ca7f2b9fa1b6c0d4a3d03f75e09c30ba1e62972ac46f75f7b981be63439b2999ce13064615139891d5e4c5b406f16e3fc181a77ca475840025db2f0a77f81b5ab05b94c01346755f69232c86519d86cbeeac87aac347d143f9605d64f650db4d023e70e952ca49fe5137121c74bc2697687e248746d6df353005f3bce18696129c8153556b3b6c6779b37bf15985684f
        """)
    static let clientDataRecord = hex("""
        1703030043a23f7054b62c94d0affafe8228ba55cbefacea42f914aa66bcab3f2b9819a8a5b46b395bd54a9a20441e2b62974e1f5a6292a2977014bd1e3deae63aeebb21694915e4
        """)
    static let serverDataRecord = hex("""
        17030300432e937e11ef4ac740e538ad36005fc4a46932fc3225d05f82aa1b36e30efaf97d90e6dffc602dcb501a59a8fcc49c4bf2e5f0a21c0047c2abf332540dd032e167c2955d
        """)
    static let clientAlertRecord = hex("1703030013c9872760655666b74d7ff1153efd6db6d0b0e3")
    static let serverAlertRecord = hex("1703030013b58fd67166ebf599d24720cfbe7efa7a8864a9")
    /// Both sides send 0x00...0x31 as application data.
    static let applicationData = Array(UInt8(0)...UInt8(0x31))

    static func keyLog(serverHandshake: String = serverHandshakeSecret) -> String {
        """
        CLIENT_HANDSHAKE_TRAFFIC_SECRET \(clientRandom) \(clientHandshakeSecret)
        SERVER_HANDSHAKE_TRAFFIC_SECRET \(clientRandom) \(serverHandshake)
        CLIENT_TRAFFIC_SECRET_0 \(clientRandom) \(clientApplicationSecret)
        SERVER_TRAFFIC_SECRET_0 \(clientRandom) \(serverApplicationSecret)
        EXPORTER_SECRET \(clientRandom) \(clientApplicationSecret)

        """
    }

    static func play(_ harness: Harness, chunk: Int = .max) {
        harness.send(.clientToServer, clientHelloRecord, chunk: chunk)
        harness.send(.serverToClient, serverHelloRecord + serverFlightRecord, chunk: chunk)
        harness.send(.clientToServer, clientFinishedRecord + clientDataRecord, chunk: chunk)
        harness.send(.serverToClient, ticketRecord + serverDataRecord + serverAlertRecord, chunk: chunk)
        harness.send(.clientToServer, clientAlertRecord, chunk: chunk)
        harness.close()
    }
}

@Suite struct RFC8448Tests {
    @Test func trafficKeysMatchTheRFC() throws {
        let suite = try #require(CipherSuite.suite(0x1301))
        let secret = hex(RFC8448.serverHandshakeSecret)
        #expect(KeyDerivation.expandLabel(secret: secret, label: "key", length: 16, sha384: false)
                == hex("3fce516009c21727d0f2e4e86ee403bc"))
        #expect(KeyDerivation.expandLabel(secret: secret, label: "iv", length: 12, sha384: false)
                == hex("5d313eb2671276ee13000b30"))
        let application = hex(RFC8448.clientApplicationSecret)
        #expect(KeyDerivation.expandLabel(secret: application, label: "key", length: 16, sha384: false)
                == hex("17422dda596ed5d9acd890e3c63f5051"))
        #expect(RecordProtection.tls13(secret: application, suite: suite)?.iv == hex("5b78923dee08579033e523d9"))
    }

    @Test(arguments: [Int.max, 1, 7, 300])
    func wholeHandshakeDecrypts(chunk: Int) throws {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        #expect(warnings.isEmpty)
        RFC8448.play(harness, chunk: chunk)
        #expect(harness.inner.data[.clientToServer] == RFC8448.applicationData)
        #expect(harness.inner.data[.serverToClient] == RFC8448.applicationData)
        #expect(harness.inner.warnings.isEmpty, "\(harness.inner.warnings)")
        let facts = try #require(harness.facts.first)
        #expect(harness.facts.count == 1)
        #expect(facts.version == 0x0304)
        #expect(facts.cipherSuiteName == "TLS_AES_128_GCM_SHA256")
        #expect(facts.serverName == "server")
        #expect(facts.decryption == .decrypted)
        #expect(!facts.resumed)
        #expect(!facts.helloRetryRequest)
    }

    @Test func wrongServerKeyIsAWarningNotGarbage() throws {
        var warnings: [TLSKeyLog.Warning] = []
        let wrong = String(repeating: "ab", count: 32)
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(serverHandshake: wrong), warnings: &warnings))
        RFC8448.play(harness)
        // The server's handshake record fails; its application data (a different key) still decrypts.
        #expect(harness.inner.warningValues.contains { warning in
            guard case .authenticationFailed(.serverToClient, offset: 95, _) = warning.value as? TLSConnectionWarning else {
                return false
            }
            return true
        }, "\(harness.inner.warnings)")
        #expect(harness.inner.data[.clientToServer] == RFC8448.applicationData)
    }

    @Test func withoutKeysTheLineSaysSo() throws {
        let harness = Harness(keyLog: TLSKeyLog())
        RFC8448.play(harness)
        #expect(harness.inner.data.isEmpty)
        let facts = try #require(harness.facts.first)
        #expect(facts.decryption == .noKeyLogged)
        #expect(facts.version == 0x0304)
        #expect(facts.serverName == "server")
    }

    @Test func corruptedRecordIsSkippedWithItsOffset() throws {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        harness.send(.clientToServer, RFC8448.clientHelloRecord)
        harness.send(.serverToClient, RFC8448.serverHelloRecord + RFC8448.serverFlightRecord)
        var corrupted = RFC8448.serverDataRecord
        corrupted[20] ^= 0x01
        harness.send(.clientToServer, RFC8448.clientFinishedRecord + RFC8448.clientDataRecord)
        harness.send(.serverToClient, RFC8448.ticketRecord + corrupted)
        harness.close()
        #expect(harness.inner.data[.serverToClient] == nil)
        #expect(harness.inner.warnings.contains { $0.contains("server→client record at stream offset 1001") })
    }

    @Test func recordTooShortForItsCipherIsAMalformedRecordWarning() throws {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        harness.send(.clientToServer, RFC8448.clientHelloRecord)
        let before = RFC8448.serverHelloRecord + RFC8448.serverFlightRecord
        harness.send(.serverToClient, before)
        harness.send(.clientToServer, RFC8448.clientFinishedRecord + RFC8448.clientDataRecord)
        // Application data of 10 bytes: less than a TLS 1.3 tag and content type (17).
        harness.send(.serverToClient, RFC8448.ticketRecord + [0x17, 0x03, 0x03, 0x00, 0x0a] + [UInt8](repeating: 0x42, count: 10))
        harness.close()
        let expected = TLSConnectionWarning.malformedRecord(
            .serverToClient, offset: before.count + RFC8448.ticketRecord.count,
            reason: .tooShort(length: 10, needs: 17, scheme: "TLS 1.3"))
        #expect(harness.inner.warningValues.contains { $0.value as? TLSConnectionWarning == expected },
                "\(harness.inner.warnings)")
        #expect(expected.description.contains("10 bytes is too short for a TLS 1.3 record (needs at least 17)"))
    }

    @Test func recordsThatAreNotTLSStopTheDirection() {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        harness.send(.clientToServer, RFC8448.clientHelloRecord)
        harness.send(.serverToClient, [0x16, 0x03, 0x03, 0xFF, 0xFF] + Array(repeating: 0, count: 100))
        harness.send(.serverToClient, RFC8448.serverHelloRecord)
        harness.close()
        #expect(harness.inner.warnings.contains { $0.contains("not a TLS record") })
        #expect(harness.inner.data.isEmpty)
    }

    @Test func truncatedStreamDeliversNothingAndDoesNotCrash() {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        harness.send(.clientToServer, Array(RFC8448.clientHelloRecord.prefix(100)))
        harness.send(.serverToClient, Array(RFC8448.serverFlightRecord.prefix(40)))
        harness.close()
        #expect(harness.inner.data.isEmpty)
        #expect(harness.facts.count == 1)
    }

    @Test func cleartextPassesThroughUnchanged() {
        let harness = Harness(keyLog: TLSKeyLog())
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        harness.send(.clientToServer, request, chunk: 5)
        harness.close()
        #expect(harness.inner.data[.clientToServer] == request)
        #expect(harness.facts.isEmpty)
    }
}

@Suite struct KeyLogTests {
    @Test func badLinesAreWarnedWithTheirNumbers() {
        var warnings: [TLSKeyLog.Warning] = []
        let random = RFC8448.clientRandom
        let text = """
            # a comment
            CLIENT_RANDOM \(random) \(String(repeating: "11", count: 48))
            CLIENT_RANDOM \(random.prefix(10)) 00
            SERVER_TRAFFIC_SECRET_0 \(random) nothex
            SOMETHING_ELSE \(random) 00
            CLIENT_RANDOM \(random)
            RSA 0011 0022
            CLIENT_RANDOM \(random) 0011
            EXPORTER_SECRET \(random) 00\r
            CLIENT_TRAFFIC_SECRET_0 \(random) 2222
            """
        let log = TLSKeyLog(text: text, warnings: &warnings)
        #expect(warnings.map(\.line) == [3, 4, 5, 6, 7, 8])
        #expect(warnings[0].description.hasPrefix("key log line 3: client random must be 64 hex digits"))
        let secrets = log.secrets(for: ClientRandom(hex(random))!)
        #expect(secrets?.masterSecret == Array(repeating: 0x11, count: 48))
        #expect(secrets?.clientTrafficSecret0 == [0x22, 0x22])
    }

    @Test func followedFileIsReadAgainWhenItGrows() throws {
        let path = FileManagerPath.temporary("tkt-keylog")
        try "".write(toFile: path, atomically: true, encoding: .utf8)
        defer { FileManagerPath.remove(path) }
        var warnings: [TLSKeyLog.Warning] = []
        let source = try TLSKeySource(path: path, follow: true, initialWarnings: &warnings)
        source.recheckInterval = .zero
        let random = try #require(ClientRandom(hex(RFC8448.clientRandom)))
        #expect(source.secrets(for: random) == nil)
        // Half a line first (a writer caught mid-write), then the rest.
        try FileManagerPath.append("CLIENT_RANDOM \(RFC8448.clientRandom) ", to: path)
        #expect(source.secrets(for: random) == nil)
        try FileManagerPath.append(String(repeating: "11", count: 48) + "\n", to: path)
        #expect(source.secrets(for: random)?.masterSecret == Array(repeating: 0x11, count: 48))
    }
}

@Suite struct RecordLayerTests {
    /// A bad record header that arrives after buffered bytes (not at a segment start) stops the direction cleanly.
    @Test func badHeaderInsideBufferedBytesStopsCleanly() {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        harness.send(.clientToServer, RFC8448.clientHelloRecord)
        var stream = RFC8448.serverHelloRecord
        stream += [0x99, 0x03, 0x03, 0x00, 0x10] + Array(repeating: 0, count: 16)
        harness.send(.serverToClient, Array(stream.prefix(3)))
        harness.send(.serverToClient, Array(stream.dropFirst(3)))
        harness.send(.serverToClient, RFC8448.serverFlightRecord)
        harness.close()
        #expect(harness.inner.warnings.contains { $0.contains("stream offset 95: not a TLS record") }, "\(harness.inner.warnings)")
        #expect(harness.inner.data.isEmpty)
    }

    /// 0-RTT: a client record that arrives before the ServerHello waits for it (bounded), then decrypts.
    @Test func clientRecordsBeforeServerHelloWaitForIt() {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        // The client's Finished and data arrive (out of real order) before the ServerHello: held, then decrypted.
        harness.send(.clientToServer, RFC8448.clientHelloRecord + RFC8448.clientFinishedRecord + RFC8448.clientDataRecord)
        harness.send(.serverToClient, RFC8448.serverHelloRecord + RFC8448.serverFlightRecord)
        harness.close()
        #expect(harness.inner.data[.clientToServer] == RFC8448.applicationData)
    }

    /// Empty records held before the ServerHello used to cost nothing against the hold limit (only fragment bytes
    /// counted), so a client flooding them grew the held list without bound, and each new record summed the list
    /// again (quadratic). Now each held record counts with its header: the limit is hit, with its warning.
    @Test func aFloodOfEmptyRecordsBeforeTheServerHelloIsBounded() {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        harness.send(.clientToServer, RFC8448.clientHelloRecord)
        let empty: [UInt8] = [23, 3, 3, 0, 0]
        let flood = Array([[UInt8]](repeating: empty, count: 200_000).joined())
        let started = ContinuousClock.now
        harness.send(.clientToServer, flood, chunk: 1448)
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(harness.inner.warnings.contains { $0.contains("waiting for the ServerHello passed 65536 bytes") },
                "\(harness.inner.warnings.prefix(3))")
        harness.send(.serverToClient, RFC8448.serverHelloRecord + RFC8448.serverFlightRecord)
        harness.close()
    }
}
