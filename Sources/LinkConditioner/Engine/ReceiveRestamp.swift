import Foundation

/// Why the user-space engine's downlink showed in applications but not in `ping`: the kernel takes a packet's
/// receive time stamp (`skb->tstamp`, what `SO_TIMESTAMP` reports and ping's default RTT is computed from) when
/// the packet reaches the interface, before tc, the ifb and netfilter; the engine then holds it in the netfilter
/// queue, so the stamp says it arrived before its delay (ping from the conditioned side: 100.5 ms under Slow Net,
/// `ping -U`, UDP and TCP 200). netem on the ifb does not have this: as it releases a packet redirected from an
/// ingress it clears the stamp ("pretend the delay is from the network", sch_netem.c), and the ifb's
/// re-injection stamps it again, after the delay. A netfilter queue's verdict cannot touch the stamp, and nothing
/// else between prerouting and the socket can.
///
/// So the ingress redirect's classifier is this program instead of `u32 match u32 0 0` (the same match: every
/// packet of the filter's protocol, then the mirred action): it marks the stamp as a delivery time
/// (`bpf_skb_set_tstamp(skb, now, BPF_SKB_TSTAMP_DELIVERY_MONO)`), which the kernel (5.18 and later) replaces
/// with the real time when it delivers the packet to a local socket (`skb_clear_delivery_time` in
/// `ip_local_deliver_finish` and `ip6_input_finish`), after the queue: the stamp is taken after the hold, as
/// netem's is. Forwarded packets keep it as a departure time of "now at arrival", which is already past when they
/// leave, so no qdisc holds them for it. Where the kernel refuses it (older than 5.18: no such helper), the plan
/// keeps u32 (`LiveKernelSupport.receiveRestampAvailable`), and ping then misses the downlink delay as before.
public enum ReceiveRestamp {
    /// The program, eBPF instructions as the kernel reads them (opcode, dst | src << 4, offset, immediate).
    /// ```
    /// r6 = r1                      ; the skb
    /// call bpf_ktime_get_ns        ; 5
    /// r1 = r6; r2 = r0; w3 = 1     ; (skb, now, BPF_SKB_TSTAMP_DELIVERY_MONO)
    /// call bpf_skb_set_tstamp      ; 192
    /// w0 = -1                      ; a match, classid of the filter (the mirred action follows)
    /// exit
    /// ```
    static let instructions: [(opcode: UInt8, registers: UInt8, offset: Int16, immediate: Int32)] = [
        (0xbf, 0x16, 0, 0), (0x85, 0x00, 0, 5), (0xbf, 0x61, 0, 0), (0xbf, 0x02, 0, 0),
        (0xb4, 0x03, 0, 1), (0x85, 0x00, 0, 192), (0xb4, 0x00, 0, -1), (0x95, 0x00, 0, 0),
    ]

    /// The ELF section tc loads the program from (`bpf obj FILE sec tc`).
    public static let section = "tc"

    /// The program as a relocatable ELF object for tc's loader (libbpf): a `tc` section with the code and a
    /// global function symbol, a `license` section ("GPL": the time stamp helper is GPL-only), a symbol table and
    /// its string table, which also names the sections. Made here rather than shipped, so no binary is committed.
    public static func object() -> [UInt8] {
        var code: [UInt8] = []
        for instruction in instructions {
            code.append(instruction.opcode)
            code.append(instruction.registers)
            code += bytes(UInt16(bitPattern: instruction.offset))
            code += bytes(UInt32(bitPattern: instruction.immediate))
        }
        let license = Array("GPL\0".utf8)
        let names = ["", ".strtab", section, "license", ".symtab", "restamp", "_license"]
        var strings: [UInt8] = []
        var nameOffset: [String: UInt32] = [:]
        for name in names {
            nameOffset[name] = UInt32(strings.count)
            strings += Array(name.utf8) + [0]
        }
        // Symbols: the null one, the program (FUNC, GLOBAL, in section 2), the license (OBJECT, GLOBAL, section 3).
        func symbol(_ name: String, info: UInt8, section: UInt16, size: UInt64) -> [UInt8] {
            bytes(nameOffset[name]!) + [info, 0] + bytes(section) + bytes(UInt64(0)) + bytes(size)
        }
        let symbols = [UInt8](repeating: 0, count: 24) + symbol("restamp", info: 0x12, section: 2, size: UInt64(code.count))
            + symbol("_license", info: 0x11, section: 3, size: UInt64(license.count))
        // Layout: header, code, license, (align 8) symbols, strings, (align 8) section headers.
        let codeOffset = 64
        let licenseOffset = codeOffset + code.count
        let symbolsOffset = (licenseOffset + license.count + 7) / 8 * 8
        let stringsOffset = symbolsOffset + symbols.count
        let headersOffset = (stringsOffset + strings.count + 7) / 8 * 8
        func sectionHeader(_ name: String, type: UInt32, flags: UInt64, offset: Int, size: Int, link: UInt32 = 0,
                           info: UInt32 = 0, align: UInt64, entrySize: UInt64 = 0) -> [UInt8] {
            bytes(nameOffset[name]!) + bytes(type) + bytes(flags) + bytes(UInt64(0)) + bytes(UInt64(offset)) + bytes(UInt64(size))
                + bytes(link) + bytes(info) + bytes(align) + bytes(entrySize)
        }
        let headers = [UInt8](repeating: 0, count: 64)
            + sectionHeader(".strtab", type: 3, flags: 0, offset: stringsOffset, size: strings.count, align: 1)
            + sectionHeader(section, type: 1, flags: 0x6 /* alloc, exec */, offset: codeOffset, size: code.count, align: 8)
            + sectionHeader("license", type: 1, flags: 0x3 /* write, alloc */, offset: licenseOffset, size: license.count, align: 1)
            + sectionHeader(".symtab", type: 2, flags: 0, offset: symbolsOffset, size: symbols.count, link: 1, info: 1, align: 8,
                            entrySize: 24)
        var elf: [UInt8] = [0x7f, 0x45, 0x4c, 0x46, 2 /* 64-bit */, 1 /* little-endian */, 1, 0] + [UInt8](repeating: 0, count: 8)
        elf += bytes(UInt16(1) /* relocatable */) + bytes(UInt16(247) /* EM_BPF */) + bytes(UInt32(1))
        elf += bytes(UInt64(0)) + bytes(UInt64(0)) + bytes(UInt64(headersOffset)) + bytes(UInt32(0))
        elf += bytes(UInt16(64)) + bytes(UInt16(0)) + bytes(UInt16(0)) + bytes(UInt16(64)) + bytes(UInt16(5)) + bytes(UInt16(1))
        elf += code + license
        elf += [UInt8](repeating: 0, count: symbolsOffset - elf.count)
        elf += symbols + strings
        elf += [UInt8](repeating: 0, count: headersOffset - elf.count)
        return elf + headers
    }

    private static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
