/// A BOOTP or DHCP message (RFC 951, RFC 2131) as captured: the fixed header and the DHCP options after the
/// magic cookie. Every read is bounds-checked and returns nil where the captured bytes end, so a printer can
/// mark the message cut (tcpdump's ` [|bootp]`). Borrows the packet's memory (not `Sendable`).
public struct BOOTPMessage {
    public let bytes: UnsafeRawBufferPointer

    /// The server's and the client's UDP ports.
    public static let serverPort: UInt16 = 67
    public static let clientPort: UInt16 = 68
    public static let request: UInt8 = 1
    public static let reply: UInt8 = 2
    /// Where the options' magic cookie (99.130.83.99) starts: after the 236-byte fixed header.
    public static let cookieOffset = 236
    public static let magicCookie: UInt32 = 0x6382_5363

    public init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public static func isBOOTPPort(_ port: UInt16) -> Bool { port == serverPort || port == clientPort }

    public func u8(at offset: Int) -> UInt8? { offset + 1 <= bytes.count ? bytes.u8(offset) : nil }
    public func u16(at offset: Int) -> UInt16? { offset + 2 <= bytes.count ? bytes.u16(offset) : nil }
    public func u32(at offset: Int) -> UInt32? { offset + 4 <= bytes.count ? bytes.u32(offset) : nil }
    /// The six bytes at `offset` as an Ethernet address.
    public func ethernetAddress(at offset: Int) -> MACAddress? {
        offset + 6 <= bytes.count ? MACAddress(rawValue: UInt64(bytes.u32(offset)) << 16 | UInt64(bytes.u16(offset + 4))) : nil
    }

    public var operation: UInt8? { u8(at: 0) }
    public var hardwareType: UInt8? { u8(at: 1) }
    public var hardwareLength: UInt8? { u8(at: 2) }
    public var transactionID: UInt32? { u32(at: 4) }
    /// `ciaddr`, `yiaddr`, `siaddr`, `giaddr`: the client's, "your" (the address offered), the next server's and
    /// the relay's IPv4 address.
    public var clientAddress: IPAddress? { u32(at: 12).map { .v4($0) } }
    public var yourAddress: IPAddress? { u32(at: 16).map { .v4($0) } }
    public var serverAddress: IPAddress? { u32(at: 20).map { .v4($0) } }
    public var relayAddress: IPAddress? { u32(at: 24).map { .v4($0) } }

    /// The client's hardware address when it is an Ethernet address (type 1, length 6), as tcpdump shows it.
    /// nil when it is another kind or was not captured.
    public var clientEthernetAddress: MACAddress? {
        guard hardwareType == 1, hardwareLength == 6 else { return nil }
        return ethernetAddress(at: 28)
    }

    /// The DHCP message type (option 53: 1 DISCOVER … 8 INFORM), or nil for plain BOOTP, a missing option or
    /// options the capture cut before it.
    public var dhcpMessageType: UInt8? {
        var found: UInt8?
        forEachOption { code, value in
            if code == 53, value.count == 1 { found = value[0]; return false }
            return true
        }
        return found
    }

    /// Calls `body` with each option's code and captured value, in order, until it returns false, the end option
    /// (255), or the captured bytes end. Pad options (0) are skipped. Nothing when there is no magic cookie.
    public func forEachOption(_ body: (UInt8, UnsafeRawBufferPointer) -> Bool) {
        guard u32(at: Self.cookieOffset) == Self.magicCookie else { return }
        var at = Self.cookieOffset + 4
        while at < bytes.count {
            let code = bytes.u8(at)
            if code == 255 { return }
            if code == 0 { at += 1; continue }
            guard at + 2 <= bytes.count else { return }
            let end = at + 2 + Int(bytes.u8(at + 1))
            guard end <= bytes.count else { return }
            guard body(code, bytes.slice(at + 2, end)) else { return }
            at = end
        }
    }

    /// RFC 2132 section 9.6's names of the DHCP message types (option 53), index = type.
    public static let messageTypeNames: [String] = [
        "", "DISCOVER", "OFFER", "REQUEST", "DECLINE", "ACK", "NAK", "RELEASE", "INFORM",
    ]
}
