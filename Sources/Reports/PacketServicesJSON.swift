import PacketDecoding

/// `--json`: a `dhcp` object on UDP packets to or from ports 67/68 and an `ntp` object on port 123 (schema in
/// docs/capture.md), in print-udp.c's port order after DNS. Fields the capture cut are left out and
/// `"cut": true` says so.
extension PacketJSONRenderer {
    func appendUDPService(_ datagram: UDPDatagram, to output: inout TextOutput) {
        let ports = (datagram.source.port, datagram.destination.port)
        if BOOTPMessage.isBOOTPPort(ports.0) || BOOTPMessage.isBOOTPPort(ports.1) {
            appendDHCP(BOOTPMessage(bytes: datagram.payload), to: &output)
        } else if ports.0 == NTPMessage.port || ports.1 == NTPMessage.port {
            appendNTP(NTPMessage(bytes: datagram.payload), to: &output)
        }
    }

    private func appendDHCP(_ message: BOOTPMessage, to output: inout TextOutput) {
        output.append(",\"dhcp\":{")
        guard let operation = message.operation, let transaction = message.transactionID,
              let client = message.clientAddress, let your = message.yourAddress, let server = message.serverAddress,
              let relay = message.relayAddress else {
            output.append("\"cut\":true}")
            return
        }
        output.append("\"op\":")
        switch operation {
        case BOOTPMessage.request: output.append("\"request\"")
        case BOOTPMessage.reply: output.append("\"reply\"")
        default: output.append(decimal: operation)
        }
        output.append(",\"xid\":")
        output.append(decimal: transaction)
        if let type = message.dhcpMessageType {
            output.append(",\"message_type\":")
            if Int(type) < BOOTPMessage.messageTypeNames.count && type > 0 {
                output.append("\"")
                output.append(BOOTPMessage.messageTypeNames[Int(type)])
                output.append("\"")
            } else {
                output.append(decimal: type)
            }
        }
        if let mac = message.clientEthernetAddress {
            output.append(",\"client_mac\":\"")
            output.append(mac)
            output.append("\"")
        }
        for (name, address) in [("client_ip", client), ("your_ip", your), ("server_ip", server), ("relay_ip", relay)]
            as [(StaticString, IPAddress)] where address != .v4(0) {
            output.append(",\"")
            output.append(name)
            output.append("\":\"")
            output.append(address)
            output.append("\"")
        }
        if message.bytes.count < BOOTPMessage.cookieOffset { output.append(",\"cut\":true") }
        output.append("}")
    }

    private func appendNTP(_ message: NTPMessage, to output: inout TextOutput) {
        output.append(",\"ntp\":{")
        guard let version = message.version, let mode = message.mode, let leap = message.leapIndicator else {
            output.append("\"cut\":true}")
            return
        }
        output.append("\"version\":")
        output.append(decimal: version)
        output.append(",\"mode\":\"")
        output.append(NTPMessage.modeNames[Int(mode)].lowercased())
        output.append("\",\"leap\":")
        output.append(decimal: leap)
        if mode != 6, let stratum = message.stratum {
            output.append(",\"stratum\":")
            output.append(decimal: stratum)
        }
        output.append("}")
    }
}
