import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// The netfilter queue over a raw netlink socket (`NETLINK_NETFILTER`, subsystem `NFNL_SUBSYS_QUEUE`), written
/// from the kernel's uapi header `linux/netfilter/nfnetlink_queue.h` rather than through libnetfilter_queue, so
/// no C enters this module. The kernel holds each queued packet until a verdict names its id: the engine asks for
/// metadata only (`NFQNL_COPY_META`), so nothing of a packet is copied to user space, and answers ACCEPT at the
/// packet's release time or DROP.
///
/// One socket serves several queue numbers (bound one by one); every packet arrives with the number it came from.
final class NetfilterQueueSocket {
    typealias QueuedPacket = NetfilterQueueMessages.QueuedPacket

    enum Verdict: UInt32 { case drop = 0, accept = 1 }

    private static let subsystemQueue: UInt16 = 3
    private static let messageVerdict: UInt16 = 1
    private static let messageConfig: UInt16 = 2
    private static let requestFlag: UInt16 = 0x1
    private static let ackFlag: UInt16 = 0x4

    let fd: Int32
    private var sequence: UInt32 = 1
    /// Received messages land here; one recv may carry many packets.
    private var receiveBuffer = [UInt8](repeating: 0, count: 256 * 1024)
    /// Verdicts are gathered here and sent together by `flushVerdicts`.
    private var verdictBuffer: [UInt8] = []

    init() throws {
        fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 12 /* NETLINK_NETFILTER */)
        guard fd >= 0 else { throw SystemCallError(call: "socket(AF_NETLINK, NETLINK_NETFILTER)", errno: errno) }
        var address = [UInt8](repeating: 0, count: 12) // struct sockaddr_nl: family, pad, pid 0 (kernel assigns), groups 0
        address[0] = UInt8(AF_NETLINK & 0xff)
        let bound = address.withUnsafeBytes { raw in
            Glibc.bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw SystemCallError(call: "bind(netlink)", errno: error)
        }
        // Room for bursts: a full receive buffer makes the kernel drop what it cannot deliver (ENOBUFS).
        var size: Int32 = 8 * 1024 * 1024
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var on: Int32 = 1
        _ = setsockopt(fd, 270 /* SOL_NETLINK */, 5 /* NETLINK_NO_ENOBUFS */, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Binds `queue`: packets sent to it arrive here, metadata only, at most `maximumLength` held at a time (the
    /// kernel drops beyond that, as a full netem queue does). GSO packets arrive whole (`NFQA_CFG_F_GSO`): the
    /// verdict needs no payload, so segmenting them would only cost time.
    /// With `copyPackets`, each packet's bytes come too (NFQNL_COPY_PACKET) and GSO packets are segmented first,
    /// so every copy is one packet the engine can send again itself.
    func bind(queue: UInt16, maximumLength: UInt32, copyPackets: Bool = false) throws {
        try configure(queue: queue, attributes: [(1, [1, 0, 0, 0])]) // NFQA_CFG_CMD: NFQNL_CFG_CMD_BIND, pf AF_UNSPEC
        var parameters = Self.bigEndian32(copyPackets ? 0xffff : 0)
        parameters.append(copyPackets ? 2 : 1) // NFQA_CFG_PARAMS: NFQNL_COPY_PACKET or NFQNL_COPY_META
        try configure(queue: queue, attributes: [
            (2, parameters),
            (3, Self.bigEndian32(maximumLength)), // NFQA_CFG_QUEUE_MAXLEN
            (4, Self.bigEndian32(4)), (5, Self.bigEndian32(copyPackets ? 0 : 4)), // NFQA_CFG_MASK, FLAGS: NFQA_CFG_F_GSO
        ])
    }

    private func configure(queue: UInt16, attributes: [(UInt16, [UInt8])]) throws {
        var message: [UInt8] = []
        appendMessage(to: &message, type: Self.messageConfig, flags: Self.requestFlag | Self.ackFlag, queue: queue,
                      attributes: attributes)
        try send(message)
        try awaitAcknowledgement(queue: queue)
    }

    /// Reads the kernel's answer to a config request; a packet arriving meanwhile cannot (nothing is bound yet
    /// when the first request goes, and a later bind's answer comes before the queue is used).
    private func awaitAcknowledgement(queue: UInt16) throws {
        while true {
            let count = receiveBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "recv(netlink ack, queue \(queue))", errno: errno)
            }
            let answer = receiveBuffer.withUnsafeBytes { NetfilterQueueMessages.acknowledgement(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            guard let answer else { continue }
            if answer == 0 { return }
            throw SystemCallError(call: "netfilter queue \(queue) configuration", errno: -answer)
        }
    }

    /// Waits up to `timeout` nanoseconds for packets and appends each to `packets`; returns false when the wait
    /// timed out. The wait is `select`'s: a high-resolution timer to the microsecond (a socket receive timeout
    /// counts in jiffies, up to 4 ms late; poll in whole milliseconds).
    func receive(timeout nanoseconds: UInt64, into packets: inout [QueuedPacket]) throws -> Bool {
        let microseconds = nanoseconds / 1000
        var limit = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        var readable = fd_set()
        withUnsafeMutableBytes(of: &readable) { raw in
            raw.bindMemory(to: UInt.self)[Int(fd) / UInt.bitWidth] |= 1 << (UInt(fd) % UInt(UInt.bitWidth))
        }
        let ready = select(fd + 1, &readable, nil, nil, &limit)
        if ready < 0 {
            if errno == EINTR { return false }
            throw SystemCallError(call: "select(netfilter queue)", errno: errno)
        }
        if ready == 0 { return false }
        while true {
            let count = receiveBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return true }
                if errno == ENOBUFS { continue }
                throw SystemCallError(call: "recv(netfilter queue)", errno: errno)
            }
            parsePackets(count: count, into: &packets)
        }
    }

    private func parsePackets(count: Int, into packets: inout [QueuedPacket]) {
        receiveBuffer.withUnsafeBytes { NetfilterQueueMessages.parsePackets(UnsafeRawBufferPointer(rebasing: $0.prefix(count)), into: &packets) }
    }

    /// Queues a verdict for sending with the next `flushVerdicts`: one 32-byte message (nlmsghdr, nfgenmsg,
    /// NFQA_VERDICT_HDR) written in place, nothing allocated once the buffer has grown to a burst's size.
    func addVerdict(_ verdict: Verdict, for packet: QueuedPacket) {
        let start = verdictBuffer.count
        verdictBuffer.append(contentsOf: repeatElement(0, count: 32))
        let type = (Self.subsystemQueue << 8) | Self.messageVerdict
        store32(32, at: start, in: &verdictBuffer)
        verdictBuffer[start + 4] = UInt8(type & 0xff)
        verdictBuffer[start + 5] = UInt8(type >> 8)
        verdictBuffer[start + 6] = UInt8(Self.requestFlag)
        store32(sequence, at: start + 8, in: &verdictBuffer)
        sequence &+= 1
        verdictBuffer[start + 18] = UInt8(packet.queue >> 8)
        verdictBuffer[start + 19] = UInt8(packet.queue & 0xff)
        verdictBuffer[start + 20] = 12 // attribute length
        verdictBuffer[start + 22] = 2 // NFQA_VERDICT_HDR
        storeBigEndian32(verdict.rawValue, at: start + 24, in: &verdictBuffer)
        storeBigEndian32(packet.id, at: start + 28, in: &verdictBuffer)
    }

    /// Sends the verdicts gathered since the last flush in one system call.
    func flushVerdicts() throws {
        guard !verdictBuffer.isEmpty else { return }
        defer { verdictBuffer.removeAll(keepingCapacity: true) }
        try send(verdictBuffer)
    }

    private func send(_ bytes: [UInt8]) throws {
        var kernel = [UInt8](repeating: 0, count: 12)
        kernel[0] = UInt8(AF_NETLINK & 0xff)
        let sent = bytes.withUnsafeBytes { payload in
            kernel.withUnsafeBytes { address in
                sendto(fd, payload.baseAddress, payload.count, 0,
                       address.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
            }
        }
        guard sent == bytes.count else { throw SystemCallError(call: "sendto(netfilter queue)", errno: errno) }
    }

    private func appendMessage(to buffer: inout [UInt8], type: UInt16, flags: UInt16, queue: UInt16,
                               attributes: [(UInt16, [UInt8])]) {
        let start = buffer.count
        buffer += [UInt8](repeating: 0, count: 16) // nlmsghdr, filled in below
        buffer += [0 /* AF_UNSPEC */, 0 /* NFNETLINK_V0 */, UInt8(queue >> 8), UInt8(queue & 0xff)] // nfgenmsg
        for (kind, payload) in attributes {
            let length = 4 + payload.count
            buffer += [UInt8(length & 0xff), UInt8(length >> 8), UInt8(kind & 0xff), UInt8(kind >> 8)] + payload
            buffer += [UInt8](repeating: 0, count: (4 - length % 4) % 4)
        }
        let length = UInt32(buffer.count - start)
        let fullType = (Self.subsystemQueue << 8) | type
        store32(length, at: start, in: &buffer)
        buffer[start + 4] = UInt8(fullType & 0xff)
        buffer[start + 5] = UInt8(fullType >> 8)
        buffer[start + 6] = UInt8(flags & 0xff)
        buffer[start + 7] = UInt8(flags >> 8)
        store32(sequence, at: start + 8, in: &buffer)
        sequence &+= 1
    }

    private func store32(_ value: UInt32, at offset: Int, in buffer: inout [UInt8]) {
        for index in 0..<4 { buffer[offset + index] = UInt8((value >> (8 * UInt32(index))) & 0xff) }
    }
    private func storeBigEndian32(_ value: UInt32, at offset: Int, in buffer: inout [UInt8]) {
        for index in 0..<4 { buffer[offset + index] = UInt8((value >> (8 * UInt32(3 - index))) & 0xff) }
    }
    static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }
}
