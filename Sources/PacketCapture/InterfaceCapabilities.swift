internal import CPcap

/// What an interface offers for `-L` and `-J`, and libpcap's names for link types, as tcpdump prints them.
public struct NamedValue: Sendable, Hashable {
    public var name: String
    public var description: String
}

extension CaptureHandle {
    /// `-L`: the link-layer header types the interface can deliver (needs the interface opened, so root or
    /// the capture capabilities).
    public static func dataLinkTypes(interface: String) throws(CaptureError) -> [NamedValue] {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let pcap = pcap_create(interface, &errorBuffer) else {
            throw .liveFailed(interface: interface, message: string(errorBuffer))
        }
        defer { pcap_close(pcap) }
        let status = pcap_activate(pcap)
        if status < 0 {
            let message = String(cString: pcap_geterr(pcap))
            if status == PCAP_ERROR_PERM_DENIED { throw .permissionDenied(interface: interface, message: message) }
            if status == PCAP_ERROR_NO_SUCH_DEVICE { throw .noSuchDevice(interface: interface, message: message) }
            throw .liveFailed(interface: interface, message: message)
        }
        var list: UnsafeMutablePointer<Int32>?
        let count = pcap_list_datalinks(pcap, &list)
        guard count >= 0, let list else { throw .liveFailed(interface: interface, message: String(cString: pcap_geterr(pcap))) }
        defer { pcap_free_datalinks(list) }
        return (0..<Int(count)).map { index in
            let value = list[index]
            return NamedValue(name: linkTypeName(value) ?? "DLT \(value)", description: linkTypeDescription(value) ?? "")
        }
    }

    /// `-J`: the timestamp sources the interface offers (empty when it cannot be set).
    public static func timestampTypes(interface: String) throws(CaptureError) -> [NamedValue] {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let pcap = pcap_create(interface, &errorBuffer) else {
            throw .liveFailed(interface: interface, message: string(errorBuffer))
        }
        defer { pcap_close(pcap) }
        var list: UnsafeMutablePointer<Int32>?
        let count = pcap_list_tstamp_types(pcap, &list)
        guard count >= 0 else { throw .liveFailed(interface: interface, message: String(cString: pcap_geterr(pcap))) }
        guard let list else { return [] }
        defer { pcap_free_tstamp_types(list) }
        return (0..<Int(count)).map { index in
            let value = list[index]
            return NamedValue(name: pcap_tstamp_type_val_to_name(value).map { String(cString: $0) } ?? "\(value)",
                              description: pcap_tstamp_type_val_to_description(value).map { String(cString: $0) } ?? "")
        }
    }

    /// libpcap's name for a link type (`PPP_SERIAL`, `EN10MB`), or nil when libpcap has none.
    public static func linkTypeName(_ value: Int32) -> String? {
        pcap_datalink_val_to_name(value).map { String(cString: $0) }
    }

    /// libpcap's description of a link type (`PPP over serial`), or nil.
    public static func linkTypeDescription(_ value: Int32) -> String? {
        pcap_datalink_val_to_description(value).map { String(cString: $0) }
    }
}

extension CaptureHandle {
    /// libpcap's own version line (`libpcap version 1.10.3 (with TPACKET_V3)`), for `--version`.
    public static var libraryVersion: String { String(cString: pcap_lib_version()) }
}
