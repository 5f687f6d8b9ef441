import PacketDecoding

extension PacketLineRenderer {
    /// tcpdump's print-loopback.c: `Loopback, skipCount 0, Forward Data, forwarding address M, data (N octets)`;
    /// ` [|loopback]` where the capture ends first.
    mutating func renderLoopback(_ message: EthernetLoopbackMessage?, to output: inout TextOutput) {
        output.append("Loopback")
        guard let message else {
            output.append(" [|loopback]")
            output.printerRanOutOfBytes = true
            return
        }
        output.append(", skipCount ")
        output.append(decimal: message.skipCount)
        if message.skipCount % 8 != 0 { output.append(" (bogus)") }
        if let function = message.function {
            switch function {
            case 1: output.append(", Reply")
            case 2: output.append(", Forward Data")
            default:
                output.append(",  invalid (")
                output.append(decimal: function)
                output.append(")")
            }
        }
        if let receipt = message.receiptNumber {
            output.append(", receipt number ")
            output.append(decimal: receipt)
        }
        if let address = message.forwardingAddress {
            output.append(", forwarding address ")
            output.append(address)
        }
        if let length = message.dataLength {
            output.append(", data (")
            output.append(decimal: length)
            output.append(" octets)")
        }
        if message.invalid { output.append(" (invalid)") }
        if message.cut {
            output.append(" [|loopback]")
            output.printerRanOutOfBytes = true  // print-loopback.c's checks all long-jump (ND_LONGJMP_FROM_TCHECK)
        }
    }
}
