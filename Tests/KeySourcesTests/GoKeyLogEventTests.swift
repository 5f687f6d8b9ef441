import KeySources
import Testing

/// Trace lines of the writeKeyLog uprobe, as this kernel printed them for a Go 1.19 client, into key log lines.
struct GoKeyLogEventTests {
    static func array(_ bytes: [UInt8]) -> String { "{" + bytes.map { "0x" + String($0, radix: 16) }.joined(separator: ",") + "}" }

    static func fields(label: String, labelLength: Int? = nil, random: [UInt8], secret: [UInt8], secretLength: Int) -> String {
        let labelBytes = Array(label.utf8) + Array(repeating: 0x41, count: GoKeyLogEvent.maxLabel - label.utf8.count)
        return " (0x58d640) label=\(array(labelBytes)) label_len=\(labelLength ?? label.utf8.count) random=\(array(random))"
            + " random_len=\(random.count) secret=\(array(secret)) secret_len=\(secretLength)"
    }

    @Test func tls13SecretCutToItsLength() throws {
        let random = (0..<32).map { UInt8($0) }
        let secret = (0..<48).map { UInt8(255 - $0) }
        let text = Self.fields(label: "CLIENT_HANDSHAKE_TRAFFIC_SECRET", random: random, secret: secret, secretLength: 32)
        let line = try GoKeyLogEvent.keyLogLine(fromFields: text[...])
        #expect(line == "CLIENT_HANDSHAKE_TRAFFIC_SECRET 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f "
                + "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0")
    }

    @Test func tls12MasterSecretIsWhole() throws {
        let text = Self.fields(label: "CLIENT_RANDOM", random: Array(repeating: 1, count: 32),
                               secret: Array(repeating: 2, count: 48), secretLength: 48)
        let line = try GoKeyLogEvent.keyLogLine(fromFields: text[...])
        #expect(line == "CLIENT_RANDOM " + String(repeating: "01", count: 32) + " " + String(repeating: "02", count: 48))
    }

    @Test func badEventsAreNamed() {
        let random = Array(repeating: UInt8(1), count: 32), secret = Array(repeating: UInt8(2), count: 48)
        #expect(throws: GoKeyLogEvent.ParseError.unknownLabel("EXPORTER_SEC")) {
            try GoKeyLogEvent.keyLogLine(fromFields: Self.fields(label: "EXPORTER_SECRET", labelLength: 12, random: random,
                                                                 secret: secret, secretLength: 32)[...])
        }
        #expect(throws: GoKeyLogEvent.ParseError.badLength(field: "secret_len", value: "64")) {
            try GoKeyLogEvent.keyLogLine(fromFields: Self.fields(label: "CLIENT_RANDOM", random: random, secret: secret,
                                                                 secretLength: 64)[...])
        }
        #expect(throws: GoKeyLogEvent.ParseError.badArray("secret")) {
            try GoKeyLogEvent.keyLogLine(fromFields: (Self.fields(label: "CLIENT_RANDOM", random: random, secret: [],
                                                                  secretLength: 48))[...])
        }
        #expect(throws: GoKeyLogEvent.ParseError.missingField("label_len")) {
            try GoKeyLogEvent.keyLogLine(fromFields: " (0x58d640) label=(fault)"[...])
        }
    }
}
