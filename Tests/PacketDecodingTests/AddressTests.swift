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

    @Test func endpointBracketsIPv6() {
        #expect(Endpoint(address: .v6(high: 0, low: 1), port: 80).description == "[::1]:80")
        #expect(Endpoint(address: .v4(0x7f00_0001), port: 8080).description == "127.0.0.1:8080")
    }
}
