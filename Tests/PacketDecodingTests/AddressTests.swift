#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import PacketDecoding

@Suite struct AddressFormattingTests {
    @Test(arguments: [
        (IPAddress.v4(0xC0A8_0142), "192.168.1.66"),
        (IPAddress.v6(high: 0x2001_0db8_0000_0000, low: 0x0000_0000_0000_0001), "2001:db8::1"),
        (IPAddress.v6(high: 0, low: 1), "::1"),
        (IPAddress.v6(high: 0xfe80_0000_0000_0000, low: 0x0211_22ff_fe33_4455), "fe80::211:22ff:fe33:4455"),
        (IPAddress.v6(high: 0x2001_0db8_0000_0001, low: 0x0000_0000_0001_0001), "2001:db8:0:1::1:1"),
    ])
    func formats(address: IPAddress, text: String) {
        #expect(address.description == text)
    }

    /// The one address formatter against the C library's inet_ntop (the rules tcpdump's addrtostr follows): every
    /// placement of zero runs, IPv4-mapped and IPv4-compatible forms, and random addresses.
    @Test func ipv6TextEqualsInetNtop() {
        var generator = SystemRandomNumberGenerator()
        var cases: [(UInt64, UInt64)] = [(0, 0), (0, 1), (0, 0xffff_0000_0000), (0, 0xffff_0a00_0001), (0, 0x0a00_0001),
                                         (0, 0x0001_0000), (0xffff_ffff_ffff_ffff, 0xffff_ffff_ffff_ffff)]
        for mask in 0..<256 {  // each of the 8 groups zero or not
            var high: UInt64 = 0, low: UInt64 = 0
            for group in 0..<8 where mask & (1 << group) != 0 {
                let value = UInt64.random(in: 1...0xffff, using: &generator)
                if group < 4 { high |= value << UInt64(48 - 16 * group) } else { low |= value << UInt64(48 - 16 * (group - 4)) }
            }
            cases.append((high, low))
        }
        for _ in 0..<200 { cases.append((UInt64.random(in: 0...UInt64.max), UInt64.random(in: 0...UInt64.max))) }
        for (high, low) in cases {
            var raw = in6_addr()
            withUnsafeMutableBytes(of: &raw) { bytes in
                bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            var text = [CChar](repeating: 0, count: 64)
            #expect(inet_ntop(AF_INET6, &raw, &text, 64) != nil)
            let expected = String(cString: text)
            #expect(IPAddress.v6(high: high, low: low).description == expected)
            var output = [UInt8]()
            IPAddress.v6(high: high, low: low).withText { output.append(contentsOf: $0) }
            #expect(String(decoding: output, as: UTF8.self) == expected)
        }
    }

    @Test func endpointBracketsIPv6() {
        #expect(Endpoint(address: .v6(high: 0, low: 1), port: 80).description == "[::1]:80")
        #expect(Endpoint(address: .v4(0x7f00_0001), port: 8080).description == "127.0.0.1:8080")
    }
}
