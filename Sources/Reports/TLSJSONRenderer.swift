import PacketDecoding
import TLS

/// `--json` with a key log: one object per TLS connection, on the same NDJSON stream as the exchanges. It has a
/// `tls` member where exchanges have `request`/`response` (documented in docs/tls.md).
public enum TLSJSONRenderer {
    public static func line(for session: TLSSessionFacts) -> String {
        var json = JSONText()
        write(session, into: &json)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    public static func appendLine(for session: TLSSessionFacts, to output: inout PacketOutput) {
        var json = JSONText()
        write(session, into: &json)
        json.out.append(UInt8(ascii: "\n"))
        output.append(raw: json.out.bytes)
    }

    private static func write(_ session: TLSSessionFacts, into json: inout JSONText) {
        json.raw("{")
        json.key("ts"); json.seconds(session.time.secondsSinceEpoch)
        json.raw(","); json.key("client"); json.endpoint(session.client)
        json.raw(","); json.key("server"); json.endpoint(session.server)
        json.raw(","); json.key("tls"); json.raw("{")
        json.key("version"); optional(session.versionName, &json)
        json.raw(","); json.key("cipher_suite"); optional(session.cipherSuiteName, &json)
        json.raw(","); json.key("server_name"); optional(session.serverName, &json)
        json.raw(","); json.key("alpn"); optional(session.alpn, &json)
        json.raw(","); json.key("offered_alpn"); json.raw("[")
        for (index, name) in session.offeredALPN.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(name)
        }
        json.raw("]")
        json.raw(","); json.key("resumed"); json.bool(session.resumed)
        json.raw(","); json.key("hello_retry_request"); json.bool(session.helloRetryRequest)
        json.raw(","); json.key("early_data_offered"); json.bool(session.earlyDataOffered)
        json.raw(","); json.key("decrypted"); json.bool(session.decryption == .decrypted)
        json.raw(","); json.key("problem")
        switch session.decryption {
        case .decrypted: json.null()
        case .noKeyLogged: json.string("no key logged for this session")
        case .unsupported(let reason): json.string(reason)
        }
        json.raw("}}")
    }

    private static func optional(_ value: String?, _ json: inout JSONText) {
        if let value { json.string(value) } else { json.null() }
    }
}
