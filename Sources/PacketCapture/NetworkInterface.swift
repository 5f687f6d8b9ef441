internal import CPcap
#if canImport(Glibc)
import Glibc
#endif

/// An interface libpcap can capture on, as `capture -D` lists it.
public struct NetworkInterface: Sendable, Hashable {
    /// Kernel interface index (0 for pseudo-interfaces such as `any`).
    public var index: Int
    public var name: String
    public var description: String?
    /// IPv4 and IPv6 addresses in text form.
    public var addresses: [String]
    public var isUp: Bool
    public var isRunning: Bool
    public var isLoopback: Bool

    /// Every interface libpcap finds, in its order.
    public static func all() throws(CaptureError) -> [NetworkInterface] {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        var list: UnsafeMutablePointer<pcap_if_t>?
        guard pcap_findalldevs(&list, &errorBuffer) == 0 else {
            throw .liveFailed(interface: "(listing)", message: string(errorBuffer))
        }
        defer { pcap_freealldevs(list) }
        var result: [NetworkInterface] = []
        var node = list
        while let current = node {
            let device = current.pointee
            let name = String(cString: device.name)
            var addresses: [String] = []
            var address = device.addresses
            while let entry = address {
                if let text = Self.text(of: entry.pointee.addr) { addresses.append(text) }
                address = entry.pointee.next
            }
            result.append(NetworkInterface(
                index: Int(if_nametoindex(name)), name: name,
                description: device.description.map { String(cString: $0) },
                addresses: addresses,
                isUp: device.flags & UInt32(PCAP_IF_UP) != 0,
                isRunning: device.flags & UInt32(PCAP_IF_RUNNING) != 0,
                isLoopback: device.flags & UInt32(PCAP_IF_LOOPBACK) != 0))
            node = device.next
        }
        return result
    }

    private static func text(of address: UnsafeMutablePointer<sockaddr>?) -> String? {
        guard let address else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var raw = v4.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)).map { _ in string(buffer) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var raw = v6.pointee.sin6_addr
                return inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)).map { _ in string(buffer) }
            }
        default:
            return nil
        }
    }
}
