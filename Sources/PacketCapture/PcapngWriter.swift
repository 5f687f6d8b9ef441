import Glibc

/// What `-w` writes packets through: a classic pcap file (libpcap's dumper, as tcpdump writes) or pcapng (for a
/// name ending in `.pcapng`, which can also carry the TLS key log).
public protocol PacketFileWriter: AnyObject {
    var path: String { get }
    func write(_ packet: CapturedPacket)
    /// Bytes in the file so far (what tcpdump's -C compares with its limit).
    var bytesWritten: Int64 { get }
    func flush() throws(CaptureError)
    /// Key log lines (NSS format) for the packets that follow; a classic pcap has nowhere to put them.
    func writeSecrets(_ nssKeyLog: [UInt8])
}

extension PacketWriter: PacketFileWriter {
    public func writeSecrets(_ nssKeyLog: [UInt8]) {}
}

extension CaptureHandle {
    /// A writer for `path` whose link type and snap length follow this handle: pcapng when `pcapng`, else pcap.
    public func makeWriter(path: String, pcapng: Bool) throws(CaptureError) -> any PacketFileWriter {
        guard pcapng, path != "-" else { return try makeWriter(path: path) }
        return try PcapngWriter(path: path, linkType: linkType.rawValue, snapLength: snapshotLength)
    }
}

/// Streams pcapng (https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html): a Section Header Block, one
/// Interface Description Block with nanosecond timestamps, an Enhanced Packet Block per packet, and a Decryption
/// Secrets Block (TLS key log) whenever new keys are known, before the packets that follow. Blocks are written
/// whole, so a capture that is killed leaves a file that every reader opens up to its last complete block.
public final class PcapngWriter {
    public let path: String
    private let file: UnsafeMutablePointer<FILE>
    private var failure: Int32 = 0
    public private(set) var bytesWritten: Int64 = 0
    /// One block's fixed fields, reused for every packet (no allocation per packet).
    private var scratch = [UInt8](repeating: 0, count: 32)

    public init(path: String, linkType: Int32, snapLength: Int) throws(CaptureError) {
        guard let file = fopen(path, "wb") else {
            throw .writeFailed(path: path, message: String(cString: strerror(errno)))
        }
        self.path = path
        self.file = file
        // Section Header Block: byte-order magic, version 1.0, section length unknown (-1).
        var section: [UInt8] = []
        Self.append32(0x1A2B_3C4D, &section); Self.append16(1, &section); Self.append16(0, &section)
        section += [UInt8](repeating: 0xFF, count: 8)
        writeBlock(0x0A0D_0D0A, section)
        // Interface Description Block: link type, snap length, if_tsresol 9 (nanoseconds), end of options.
        var interface: [UInt8] = []
        Self.append16(UInt16(truncatingIfNeeded: Self.fileLinkType(linkType)), &interface); Self.append16(0, &interface)
        Self.append32(UInt32(clamping: snapLength), &interface)
        Self.append16(9, &interface); Self.append16(1, &interface); interface += [9, 0, 0, 0]
        Self.append16(0, &interface); Self.append16(0, &interface)
        writeBlock(0x0000_0001, interface)
    }

    deinit { fclose(file) }

    /// LINKTYPE_ values where libpcap's DLT_ value differs (pcap-common.c's table, for the types Linux and capture
    /// files give); the same number otherwise.
    static func fileLinkType(_ dlt: Int32) -> Int32 {
        switch dlt {
        case 11: 100  // ATM RFC 1483
        case 12, 14: 101  // raw IP (DLT_RAW is 12 on Linux, 14 on OpenBSD)
        case 15: 102  // SLIP BSD/OS
        case 16: 103  // PPP BSD/OS
        case 19: 106  // ATM CLIP
        default: dlt
        }
    }

    public func write(_ packet: CapturedPacket) {
        let captured = packet.bytes.count
        let padding = (4 - captured % 4) % 4
        let total = UInt32(32 + captured + padding)
        // Nanoseconds since 1970 as pcapng's 64-bit count (times before 1970 wrap, as in other writers).
        let time = UInt64(bitPattern: packet.timestamp.seconds &* 1_000_000_000 &+ Int64(packet.timestamp.nanoseconds))
        scratch.withUnsafeMutableBytes { fields in
            fields.storeBytes(of: UInt32(6).littleEndian, toByteOffset: 0, as: UInt32.self)
            fields.storeBytes(of: total.littleEndian, toByteOffset: 4, as: UInt32.self)
            fields.storeBytes(of: UInt32(0), toByteOffset: 8, as: UInt32.self)  // interface 0
            fields.storeBytes(of: UInt32(truncatingIfNeeded: time >> 32).littleEndian, toByteOffset: 12, as: UInt32.self)
            fields.storeBytes(of: UInt32(truncatingIfNeeded: time).littleEndian, toByteOffset: 16, as: UInt32.self)
            fields.storeBytes(of: UInt32(captured).littleEndian, toByteOffset: 20, as: UInt32.self)
            fields.storeBytes(of: UInt32(clamping: packet.originalLength).littleEndian, toByteOffset: 24, as: UInt32.self)
            fields.storeBytes(of: UInt32(0), toByteOffset: 28, as: UInt32.self)  // padding source (zeros)
        }
        scratch.withUnsafeBytes { fields in
            put(fields.baseAddress!, 28)
            if let base = packet.bytes.baseAddress { put(base, captured) }
            put(fields.baseAddress! + 28, padding)
            var trailer = total.littleEndian
            withUnsafeBytes(of: &trailer) { put($0.baseAddress!, 4) }
        }
        bytesWritten += Int64(total)
    }

    public func writeSecrets(_ nssKeyLog: [UInt8]) {
        guard !nssKeyLog.isEmpty else { return }
        var body: [UInt8] = []
        Self.append32(0x544C_534B, &body)  // "TLSK": a TLS key log
        Self.append32(UInt32(nssKeyLog.count), &body)
        body += nssKeyLog
        body += [UInt8](repeating: 0, count: (4 - nssKeyLog.count % 4) % 4)
        writeBlock(0x0000_000A, body)
        // Keys are rare and what makes the packets before them readable: on disk at once, with those packets.
        if fflush(file) != 0 && failure == 0 { failure = errno }
    }

    public func flush() throws(CaptureError) {
        if fflush(file) != 0 && failure == 0 { failure = errno }
        if failure != 0 { throw .writeFailed(path: path, message: String(cString: strerror(failure))) }
    }

    private func writeBlock(_ type: UInt32, _ body: [UInt8]) {
        var block: [UInt8] = []
        let total = UInt32(12 + body.count)
        Self.append32(type, &block); Self.append32(total, &block)
        block += body
        Self.append32(total, &block)
        block.withUnsafeBytes { put($0.baseAddress!, $0.count) }
        bytesWritten += Int64(total)
    }

    private func put(_ bytes: UnsafeRawPointer, _ count: Int) {
        guard count > 0 else { return }
        if fwrite(bytes, 1, count, file) != count && failure == 0 { failure = errno }
    }

    static func append32(_ value: UInt32, _ out: inout [UInt8]) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    static func append16(_ value: UInt16, _ out: inout [UInt8]) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8)]
    }
}

extension PcapngWriter: PacketFileWriter {}
