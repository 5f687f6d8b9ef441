import Foundation
import Testing
import TestSupport
import TLSWire

/// Every ClientHello and ServerHello in the TLS fixtures (and the public captures, when present), read by TLSWire
/// from the segment tshark found it in, against tshark's own dissection: server name, ALPN, cipher suites,
/// random, session id, versions.
@Suite struct HelloFactsTests {
    static let fields = [
        "tls.handshake.type", "tls.handshake.extensions_server_name", "tls.handshake.extensions_alpn_str",
        "tls.handshake.ciphersuite", "tls.handshake.random", "tls.handshake.session_id",
        "tls.handshake.extensions.supported_version", "tls.handshake.version", "tcp.payload",
    ]

    static func captures() throws -> [URL] {
        var folders = [TestEnvironment.fixtures.appendingPathComponent("tls"),
                       TestEnvironment.fixtures.appendingPathComponent("h2")]
        if let publicFixtures = TestEnvironment.publicFixtures { folders.append(publicFixtures) }
        return try folders.flatMap { folder in
            try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .filter { ["pcap", "pcapng"].contains($0.pathExtension) }
        }.sorted { $0.path < $1.path }
    }

    /// tshark's rows for frames that carry a ClientHello or a ServerHello: one value list per field.
    static func hellos(in capture: URL) throws -> [[String: [String]]] {
        var arguments = ["-r", capture.path, "-o", "tcp.desegment_tcp_streams:FALSE",
                         "-Y", "tls.handshake.type == 1 || tls.handshake.type == 2", "-T", "fields", "-E", "separator=|"]
        for field in fields { arguments += ["-e", field] }
        let result = try run("tshark", arguments)
        // A public capture cut short in its last packet makes tshark exit 2 after reading the rest.
        try #require(result.status == 0 || result.stderrText.contains("cut short in the middle of a packet"),
                     "tshark failed on \(capture.lastPathComponent): \(result.stderrText)")
        return result.stdoutText.split(separator: "\n").map { line in
            let values = line.split(separator: "|", omittingEmptySubsequences: false)
            var row: [String: [String]] = [:]
            for (field, value) in zip(fields, values) {
                row[field] = value.isEmpty ? [] : value.split(separator: ",").map(String.init)
            }
            return row
        }
    }

    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    static func number(_ text: String) -> UInt16 { UInt16(text.dropFirst(2), radix: 16)! }

    @Test func hellosMatchTshark() throws {
        guard TestEnvironment.hasProgram("tshark") else {
            Issue.record("tshark is not installed (Scripts/setup --test installs it): it is this test's oracle")
            return
        }
        var clientHellos = 0, serverHellos = 0
        for capture in try Self.captures() {
            for row in try Self.hellos(in: capture) {
                let name = capture.lastPathComponent
                let payload = Self.bytes(hex: row["tcp.payload"]?.first ?? "")
                let types = row["tls.handshake.type"] ?? []
                // The hello's record must be whole in this segment, and first in it, to be read from it alone.
                guard case .clientHello(let hello)? = types.contains("1") ? TLSClientHello.parse(payload) : nil else {
                    if types.contains("2"), let facts = Self.serverHello(payload) {
                        serverHellos += 1
                        #expect(facts.cipherSuite == Self.number(row["tls.handshake.ciphersuite"]![0]), "\(name)")
                        #expect(facts.random == Self.bytes(hex: row["tls.handshake.random"]![0]), "\(name)")
                        #expect(facts.sessionID == Self.bytes(hex: row["tls.handshake.session_id"]?.first ?? ""), "\(name)")
                        let version = row["tls.handshake.extensions.supported_version"]?.first
                            ?? row["tls.handshake.version"]![0]
                        #expect(facts.version == Self.number(version), "\(name)")
                        #expect(facts.alpn == row["tls.handshake.extensions_alpn_str"]?.first, "\(name)")
                    }
                    continue
                }
                clientHellos += 1
                #expect(hello.serverName == row["tls.handshake.extensions_server_name"]?.first, "\(name)")
                #expect(hello.alpn == row["tls.handshake.extensions_alpn_str"] ?? [], "\(name)")
                #expect(hello.cipherSuites == (row["tls.handshake.ciphersuite"] ?? []).map(Self.number), "\(name)")
                #expect(hello.random == Self.bytes(hex: row["tls.handshake.random"]?.first ?? ""), "\(name)")
                #expect(hello.sessionID == Self.bytes(hex: row["tls.handshake.session_id"]?.first ?? ""), "\(name)")
                #expect(hello.supportedVersions == (row["tls.handshake.extensions.supported_version"] ?? []).map(Self.number),
                        "\(name)")
                #expect(hello.legacyVersion == Self.number(row["tls.handshake.version"]![0]), "\(name)")
            }
        }
        // Every TLS fixture has both hellos; the count keeps this test from passing on nothing.
        let tlsFixtures = try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.fixtures.appendingPathComponent("tls").path)
            .filter { $0.hasSuffix(".pcap") }.count
        #expect(clientHellos >= tlsFixtures)
        #expect(serverHellos >= tlsFixtures)
        print("TLSWire against tshark: \(clientHellos) ClientHellos, \(serverHellos) ServerHellos")
    }

    /// The ServerHello at the front of a segment: record header, handshake framing, ServerHello body.
    static func serverHello(_ payload: [UInt8]) -> ServerHelloFacts? {
        payload.withUnsafeBytes { raw -> ServerHelloFacts? in
            var cursor = ByteCursor(raw)
            guard let header = TLSRecordHeader(&cursor), header.type == TLSRecordHeader.handshake,
                  let fragment = cursor.take(header.length) else { return nil }
            var found: ServerHelloFacts?
            var assembler = HandshakeAssembler(maxMessageLength: 1 << 16)
            assembler.append(fragment) { type, body in
                if type == HandshakeType.serverHello && found == nil { found = ServerHelloFacts(body: body) }
            }
            return found
        }
    }
}
