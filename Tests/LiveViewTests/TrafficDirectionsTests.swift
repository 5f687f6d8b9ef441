import Foundation
import Testing
import TestSupport
@testable import LiveView
import PacketDecoding

/// The timeline's directions: the SYN's sender is the client, whatever the ports say.
@Suite struct TrafficDirectionsTests {
    static let client: [UInt8] = [10, 0, 0, 2], server: [UInt8] = [10, 0, 0, 1]
    enum Flag: UInt8 { case syn = 0x02, synAck = 0x12, ack = 0x10 }

    /// A raw IPv4 TCP packet (link type RAW) of `payload` bytes.
    static func packet(from source: [UInt8], _ sourcePort: UInt16, to destination: [UInt8], _ destinationPort: UInt16,
                       _ flag: Flag, payload: Int = 0) -> [UInt8] {
        let total = 40 + payload
        var bytes: [UInt8] = [0x45, 0, UInt8(total >> 8), UInt8(total & 0xff), 0, 1, 0x40, 0, 64, 6, 0, 0]
        bytes += source + destination
        bytes += [UInt8(sourcePort >> 8), UInt8(sourcePort & 0xff), UInt8(destinationPort >> 8), UInt8(destinationPort & 0xff)]
        bytes += [0, 0, 0, 1, 0, 0, 0, 1, 0x50, flag.rawValue, 0xff, 0xff, 0, 0, 0, 0]
        return bytes + [UInt8](repeating: 0x61, count: payload)
    }

    static func traffic(_ packets: [[UInt8]], limit: Int = 10) throws -> (up: Int, down: Int) {
        let decoder = try PacketDecoder(linkType: .raw)
        var directions = TrafficDirections(limit: limit)
        var totals = (up: 0, down: 0)
        for bytes in packets {
            let found = bytes.withUnsafeBytes { raw in
                directions.traffic(of: decoder.decode(raw, timestamp: Timestamp(seconds: 1, nanoseconds: 0),
                                                      originalLength: raw.count))
            }
            let traffic = try #require(found)
            if traffic.up { totals.up += traffic.bytes } else { totals.down += traffic.bytes }
        }
        return totals
    }

    /// A download from a server on a port above the client's (python3 -m http.server 0 picks such ports).
    static func download(serverPort: UInt16, clientPort: UInt16, handshake: Bool) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        if handshake {
            packets.append(packet(from: client, clientPort, to: server, serverPort, .syn))
            packets.append(packet(from: server, serverPort, to: client, clientPort, .synAck))
        }
        packets.append(packet(from: client, clientPort, to: server, serverPort, .ack, payload: 100))
        for _ in 0..<10 { packets.append(packet(from: server, serverPort, to: client, clientPort, .ack, payload: 1400)) }
        return packets
    }

    @Test func handshakeDecidesOverPorts() throws {
        let totals = try Self.traffic(Self.download(serverPort: 61_000, clientPort: 40_000, handshake: true))
        #expect(totals.up == 40 + 140)
        #expect(totals.down == 40 + 10 * 1440)
    }

    @Test func withoutHandshakeTheHigherPortIsTheClient() throws {
        let usual = try Self.traffic(Self.download(serverPort: 80, clientPort: 40_000, handshake: false))
        #expect(usual.down == 10 * 1440)
        // Mid-stream, ports are all there is: a server above the client's port is taken for the client.
        let unusual = try Self.traffic(Self.download(serverPort: 61_000, clientPort: 40_000, handshake: false))
        #expect(unusual.up == 10 * 1440)
    }

    @Test func oldestHandshakesAreForgottenPastTheLimit() throws {
        let first = Self.download(serverPort: 61_000, clientPort: 40_000, handshake: true)
        let second = Self.download(serverPort: 61_001, clientPort: 40_001, handshake: true)
        // Both handshakes first, then the first connection's data: with room for one, its roles are forgotten.
        let totals = try Self.traffic(Array(first.prefix(2)) + Array(second.prefix(2)) + Array(first.dropFirst(2)), limit: 1)
        #expect(totals.up == 40 + 40 + 10 * 1440)
        let kept = try Self.traffic(Array(first.prefix(2)) + Array(second.prefix(2)) + Array(first.dropFirst(2)), limit: 2)
        #expect(kept.down == 40 + 40 + 10 * 1440)
    }
}
