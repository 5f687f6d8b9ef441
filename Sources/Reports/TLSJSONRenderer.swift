import HTTPModel
import PacketDecoding
import TLS

/// `--json` with a key log: one object per TLS connection, on the same NDJSON stream as the exchanges. It has a
/// `tls` member where exchanges have `request`/`response` (documented in docs/tls.md).
public enum TLSJSONRenderer {
    public static func appendLine(for session: TLSSessionFacts, to output: inout TextOutput) {
        write(session, into: &output)
        output.append(UInt8(ascii: "\n"))
    }

    /// The object alone, without a newline.
    public static func write(_ session: TLSSessionFacts, into json: inout TextOutput) {
        json.append("{")
        json.key("ts"); json.time(session.time)
        json.append(","); json.key("client"); json.endpoint(session.client)
        json.append(","); json.key("server"); json.endpoint(session.server)
        json.append(","); json.key("tls"); json.append("{")
        json.key("version"); optional(session.versionName, &json)
        json.append(","); json.key("cipher_suite"); optional(session.cipherSuiteName, &json)
        json.append(","); json.key("server_name"); optional(session.serverName, &json)
        json.append(","); json.key("alpn"); optional(session.alpn, &json)
        json.append(","); json.key("offered_alpn"); json.append("[")
        for (index, name) in session.offeredALPN.enumerated() {
            if index > 0 { json.append(",") }
            json.string(name)
        }
        json.append("]")
        json.append(","); json.key("resumed"); json.bool(session.resumed)
        json.append(","); json.key("hello_retry_request"); json.bool(session.helloRetryRequest)
        json.append(","); json.key("early_data_offered"); json.bool(session.earlyDataOffered)
        json.append(","); json.key("decrypted"); json.bool(session.decryption == .decrypted)
        json.append(","); json.key("problem")
        switch session.decryption {
        case .decrypted: json.null()
        case .noKeyLogged, .noKeyWithin: json.string(session.decryption.problem ?? "")
        case .unsupported(let reason): json.string(reason)
        }
        json.append("}}")
    }

    private static func optional(_ value: String?, _ json: inout TextOutput) {
        if let value { json.string(value) } else { json.null() }
    }
}

extension TLSSessionFacts.Decryption {
    /// Why a session is not decrypted, in the words every view uses (the text line and JSON's `problem`).
    public var problem: String? {
        switch self {
        case .decrypted: nil
        case .noKeyLogged: "no key logged for this session"
        case .noKeyWithin(let seconds):
            "no key logged within \(seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)") s"
        case .unsupported(let reason): reason
        }
    }
}
