import HTTPModel
import PacketDecoding

/// `--json` with a key log: one object per QUIC connection, on the same NDJSON stream as the exchanges, as TLS
/// connections get theirs (TLSJSONRenderer). It has a `quic` member where exchanges have `request`/`response`
/// (documented in docs/http3.md): the connection's line as facts, and each side's transport parameters.
public enum QUICJSONRenderer {
    /// Whether `--json` prints `notice` as a record on standard output: a QUIC connection seen with a key log (as
    /// TLS connections get records only with one). Without a key log its line goes to standard error.
    public static func isRecord(_ notice: ConnectionNotice) -> Bool {
        guard case .quic(_, _, _, let keys) = notice.kind else { return false }
        // A version TapKit does not read gets its record with a key log or without: no key would change it.
        return keys != .noKeyLog
    }

    public static func appendLine(for notice: ConnectionNotice, to json: inout TextOutput) {
        guard case .quic = notice.kind else { return }
        write(notice, into: &json)
        json.append(UInt8(ascii: "\n"))
    }

    /// The object alone, without a newline (the live view adds its own members).
    public static func write(_ notice: ConnectionNotice, into json: inout TextOutput) {
        guard case .quic(let version, let serverName, let alpn, let keys) = notice.kind else { return }
        json.append("{")
        json.key("ts"); json.time(notice.time)
        json.append(","); json.key("client"); json.endpoint(notice.client)
        json.append(","); json.key("server"); json.endpoint(notice.server)
        json.append(","); json.key("quic"); json.append("{")
        json.key("version"); json.string(ExchangeText.quicVersion(version))
        json.append(","); json.key("server_name")
        if let serverName { json.string(serverName) } else { json.null() }
        json.append(","); json.key("alpn"); strings(alpn, &json)
        json.append(","); json.key("decrypted"); json.bool(keys == .decrypted)
        json.append(","); json.key("problem")
        switch keys {
        case .decrypted: json.null()
        case .notLogged: json.string("no key logged for this connection")
        case .noKeyLog: json.string("no key log")
        case .unknownVersion: json.string(ExchangeText.quicUnknownVersionProblem)
        }
        let resumption = notice.resumption
        json.append(","); json.key("resumption_offered"); optional(resumption?.offered, &json)
        json.append(","); json.key("resumed"); optional(resumption?.resumed, &json)
        json.append(","); json.key("early_data_offered"); optional(resumption?.earlyDataOffered, &json)
        json.append(","); json.key("early_data_accepted"); optional(resumption?.earlyDataAccepted, &json)
        json.append(","); json.key("connection_ids")
        if let ids = notice.connectionIDs {
            json.append("{"); json.key("client_initial_dcid"); json.string(QUICTransportParameter.hex(ids.clientInitialDestination))
            json.append(","); json.key("client_scid"); hex(ids.clientSource, &json)
            json.append(","); json.key("server_scid"); hex(ids.serverSource, &json)
            json.append("}")
        } else {
            json.null()
        }
        json.append(","); json.key("transport_parameters")
        if let parameters = notice.transportParameters {
            json.append("{"); json.key("client"); list(parameters.client, &json)
            json.append(","); json.key("server")
            if let server = parameters.server { list(server, &json) } else { json.null() }
            json.append("}")
        } else {
            json.null()
        }
        json.append("}}")
    }

    /// `[{"id": 1, "name": "max_idle_timeout", "value": 30000}, ...]`: integers as numbers, flags as true, bytes
    /// as hex strings, preferred_address and version_information as objects.
    private static func list(_ parameters: [QUICTransportParameter], _ json: inout TextOutput) {
        json.append("[")
        for (index, parameter) in parameters.enumerated() {
            if index > 0 { json.append(",") }
            json.append("{"); json.key("id"); json.append(decimal: parameter.id)
            json.append(","); json.key("name"); json.string(parameter.name)
            json.append(","); json.key("value")
            switch parameter.value {
            case .integer(let number): json.append(decimal: number)
            case .flag: json.bool(true)
            case .bytes(let bytes): json.string(QUICTransportParameter.hex(bytes))
            case .preferredAddress(let ipv4, let ipv4Port, let ipv6, let ipv6Port, let connectionID, let resetToken):
                json.append("{"); json.key("ipv4"); json.string(ipv4.map(String.init).joined(separator: "."))
                json.append(","); json.key("ipv4_port"); json.number(Int(ipv4Port))
                json.append(","); json.key("ipv6"); json.string(QUICTransportParameter.hex(ipv6))
                json.append(","); json.key("ipv6_port"); json.number(Int(ipv6Port))
                json.append(","); json.key("connection_id"); json.string(QUICTransportParameter.hex(connectionID))
                json.append(","); json.key("stateless_reset_token"); json.string(QUICTransportParameter.hex(resetToken))
                json.append("}")
            case .versionInformation(let chosen, let available):
                json.append("{"); json.key("chosen"); json.append(decimal: chosen)
                json.append(","); json.key("available"); json.append("[")
                for (position, version) in available.enumerated() {
                    if position > 0 { json.append(",") }
                    json.append(decimal: version)
                }
                json.append("]}")
            }
            json.append("}")
        }
        json.append("]")
    }

    /// true or false as the handshake message said, null when that message was not read.
    private static func optional(_ value: Bool?, _ json: inout TextOutput) {
        if let value { json.bool(value) } else { json.null() }
    }

    private static func hex(_ bytes: [UInt8]?, _ json: inout TextOutput) {
        if let bytes { json.string(QUICTransportParameter.hex(bytes)) } else { json.null() }
    }

    private static func strings(_ values: [String], _ json: inout TextOutput) {
        json.append("[")
        for (index, value) in values.enumerated() {
            if index > 0 { json.append(",") }
            json.string(value)
        }
        json.append("]")
    }
}
