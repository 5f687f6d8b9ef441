import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// Sends IPv4 and IPv6 packets, whole, as the engine copied them from the queue (raw sockets with the header
/// included), marked so the engine's own rules let them pass the second time. Why: a packet this host sends stays
/// charged to its TCP socket while the kernel holds it in the queue, and TCP's small-queue limit (TSQ) then lets a
/// connection have only a couple of packets below it: a 20 ms hold capped an upload at 2 Mbit/s. netem releases the
/// packet from its socket when it queues it; the engine does the same by taking a copy, dropping the original
/// (which frees it) and sending the copy at its time.
final class RawPacketSender {
    private let ipv4: Int32
    private let ipv6: Int32

    init(mark: UInt32) throws {
        ipv4 = socket(AF_INET, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_RAW))
        guard ipv4 >= 0 else { throw SystemCallError(call: "socket(AF_INET, SOCK_RAW, IPPROTO_RAW)", errno: errno) }
        ipv6 = socket(AF_INET6, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_RAW))
        guard ipv6 >= 0 else {
            let error = errno
            close(ipv4)
            throw SystemCallError(call: "socket(AF_INET6, SOCK_RAW, IPPROTO_RAW)", errno: error)
        }
        var value = mark
        for fd in [ipv4, ipv6] {
            guard setsockopt(fd, SOL_SOCKET, 36 /* SO_MARK */, &value, socklen_t(MemoryLayout<UInt32>.size)) == 0 else {
                let error = errno
                close(ipv4)
                close(ipv6)
                throw SystemCallError(call: "setsockopt(SO_MARK)", errno: error)
            }
        }
    }

    deinit {
        close(ipv4)
        close(ipv6)
    }

    /// Sends one IP packet to the destination in its header; false when it is not one or the kernel refused it
    /// (the packet is then lost, as on a link).
    @discardableResult
    func send(_ packet: [UInt8]) -> Bool {
        guard let first = packet.first else { return false }
        switch first >> 4 {
        case 4 where packet.count >= 20:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: packet[16..<20]) }
            return send(packet, on: ipv4, to: &address)
        case 6 where packet.count >= 40:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: packet[24..<40]) }
            return send(packet, on: ipv6, to: &address)
        default:
            return false
        }
    }

    /// `sendto` with an IPv4 or IPv6 socket address; true when the whole packet went out.
    private func send<Address>(_ packet: [UInt8], on socket: Int32, to address: inout Address) -> Bool {
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(socket, packet, packet.count, 0, $0, socklen_t(MemoryLayout<Address>.size))
            }
        } == packet.count
    }
}
