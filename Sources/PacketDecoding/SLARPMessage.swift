/// A Cisco SLARP message (type 0x8035 on a Cisco HDLC link), as tcpdump's print-chdlc.c reads it: a 4-byte code,
/// then an address and mask (0 request, 1 reply) or a keepalive's two sequence numbers and reliability (2); 14 bytes
/// in all, and a keepalive may add the link's uptime in milliseconds (18 bytes).
public struct SLARPMessage: Sendable, Hashable {
    /// The fixed part; a shorter message (or one the capture cut shorter) is printed as cut.
    public static let fixedLength = 14
    /// The fixed part and a keepalive's uptime: longer messages carry trailing bytes.
    public static let lengthWithUptime = 18

    /// The message's length on the wire.
    public var length: Int
    /// Nil when the capture or the message itself ends before the fixed part does.
    public var code: UInt32?
    /// Request and reply: the address and mask; keepalive: my and your sequence numbers.
    public var first: UInt32 = 0
    public var second: UInt32 = 0
    public var reliability: UInt16 = 0
    /// A keepalive of `lengthWithUptime` bytes or more: the uptime, when captured.
    public var uptimeMilliseconds: UInt32?
    /// A keepalive long enough to hold the uptime, but the capture ends first.
    public var uptimeCut = false

    /// `payload` holds the captured bytes after the Cisco HDLC header; `length` is the message's length on the wire.
    public init(payload: UnsafeRawBufferPointer, length: Int) {
        self.length = length
        guard length >= Self.fixedLength, payload.count >= Self.fixedLength else { return }
        code = payload.u32(0)
        first = payload.u32(4)
        second = payload.u32(8)
        reliability = payload.u16(12)
        guard code == 2, length >= Self.lengthWithUptime else { return }
        if payload.count >= Self.lengthWithUptime {
            uptimeMilliseconds = payload.u32(14)
        } else {
            uptimeCut = true
        }
    }
}
