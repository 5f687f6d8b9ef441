import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-udp.c: DNS, DHCP and NTP by port, and for other ports `a.p > b.q: UDP, length N`.
    mutating func renderUDP(_ datagram: UDPDatagram, withAddresses: Bool, overIPv6: Bool,
                            to output: inout TextOutput) {
        appendEndpoints(datagram.source, datagram.destination, withAddresses: withAddresses, to: &output)
        // tcpdump checks UDP over IPv4 from -vv on (the checksum is optional there), over IPv6 from -v.
        if options.verbosity > (overIPv6 ? 0 : 1) { appendBracketedChecksum("udp", to: &output) }
        // print-udp.c's port order for the printers capture has: DNS, then BOOTP/DHCP, then NTP.
        let length = max(datagram.length - 8, 0)
        if !options.quiet {
            let ports = (datagram.source.port, datagram.destination.port)
            if Self.isDNSPort(ports.0) || Self.isDNSPort(ports.1) {
                appendDNS(DNSMessage(bytes: datagram.payload, length: length), to: &output)
                return
            }
            if BOOTPMessage.isBOOTPPort(ports.0) || BOOTPMessage.isBOOTPPort(ports.1) {
                appendBOOTP(BOOTPMessage(bytes: datagram.payload), length: length, to: &output)
                return
            }
            if ports.0 == NTPMessage.port || ports.1 == NTPMessage.port {
                appendNTP(NTPMessage(bytes: datagram.payload), length: length, to: &output)
                return
            }
        }
        output.append("UDP, length ")
        output.append(decimal: length)
    }
}
