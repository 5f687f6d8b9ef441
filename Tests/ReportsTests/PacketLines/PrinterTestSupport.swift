@testable import PacketDecoding
@testable import Reports

/// Decoded values built by hand, so each printer is tested on exactly the fields it consumes, without tcpdump.
enum Printed {
    static let a = IPAddress.v4(0x0a00_0001)  // 10.0.0.1
    static let b = IPAddress.v4(0x0a00_0002)  // 10.0.0.2

    static func ipv4(protocolNumber: UInt8, length: Int) -> IPv4Header {
        IPv4Header(source: a, destination: b, headerLength: 20, totalLength: 20 + length, typeOfService: 0,
                   identification: 1, dontFragment: true, moreFragments: false, fragmentOffset: 0,
                   timeToLive: 64, protocolNumber: protocolNumber)
    }

    static func packet(network: NetworkLayer, transport: TransportLayer, wireLength: Int,
                       error: DecodingError? = nil) -> DecodedPacket {
        DecodedPacket(timestamp: Timestamp(seconds: 0, nanoseconds: 5_000), capturedLength: wireLength + 14,
                      originalLength: wireLength + 14, linkType: .ethernet,
                      link: LinkHeader(kind: .ethernet, length: 14, etherType: 0x0800), network: network,
                      transport: transport, error: error)
    }

    /// The line `renderer` prints for `packet` (no timestamp), without the newline.
    static func line(_ packet: DecodedPacket, renderer: inout PacketLineRenderer) -> String {
        var output = TextOutput(fileDescriptor: -1)
        renderer.options.showTimestamp = false
        renderer.render(packet, frame: UnsafeRawBufferPointer(start: nil, count: 0), to: &output)
        return String(decoding: output.bytes.dropLast(), as: UTF8.self)
    }

    static func line(_ packet: DecodedPacket) -> String {
        var renderer = PacketLineRenderer()
        return line(packet, renderer: &renderer)
    }

    /// What one printer function appends.
    static func text(_ body: (inout TextOutput) -> Void) -> String {
        var output = TextOutput(fileDescriptor: -1)
        body(&output)
        return String(decoding: output.bytes, as: UTF8.self)
    }
}
