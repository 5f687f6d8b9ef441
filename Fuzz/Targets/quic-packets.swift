import FlowReassembly
import HTTPModel
@testable import PacketDecoding
@testable import QUIC
import TLS

// The QUIC layer with keys: connection finding, header protection, packet numbers, AEAD, key updates, frames,
// CRYPTO and STREAM reassembly, connection IDs. Random bytes never authenticate, so the harness plays a whole
// connection: a real client Initial (ClientHello with a fixed random) and server Initial (ServerHello), then the
// fuzzer's records, each a Handshake, 1-RTT (optionally after a key update) or 0-RTT packet around the fuzzer's
// frames, protected with keys derived from the fixed secrets of the key log the decoder is given, from the client or
// the server, optionally damaged; or a raw datagram as it is.
//
// Input: one record after another: options byte (bits 0-1 kind: 0 Handshake, 1 1-RTT, 2 1-RTT after a key update,
// 3 raw datagram; bit 2 from the server; bits 3-4 packet number length - 1; bit 5 damage one byte; bit 6 0-RTT
// instead of Handshake; bit 7 from a new client port), packet number (16 bits), damage position (16 bits), length
// (16 bits), then that many bytes: the frames (or the datagram).

private let random = [UInt8](repeating: 0x42, count: 32)
private let secrets: [(String, UInt8)] = [("CLIENT_HANDSHAKE_TRAFFIC_SECRET", 1), ("SERVER_HANDSHAKE_TRAFFIC_SECRET", 2),
                                          ("CLIENT_TRAFFIC_SECRET_0", 3), ("SERVER_TRAFFIC_SECRET_0", 4),
                                          ("CLIENT_EARLY_TRAFFIC_SECRET", 5)]
private let keyLogText = secrets.map { label, fill in
    "\(label) \(random.map { String(format: "%02x", $0) }.joined()) \(String(repeating: String(format: "%02x", fill), count: 32))"
}.joined(separator: "\n")
nonisolated(unsafe) private let keySource: TLSKeySource = {
    var warnings: [TLSKeyLog.Warning] = []
    return TLSKeySource(keyLog: TLSKeyLog(text: keyLogText, warnings: &warnings))
}()
private let suite = PacketProtection.Suite(id: 0x1301)!
private func keys(_ fill: UInt8) -> PacketProtection {
    PacketProtection(secret: [UInt8](repeating: fill, count: 32), suite: suite, version: .v1)!
}
private let originalDCID: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8], clientID: [UInt8] = [0xc1, 0xc2, 0xc3, 0xc4]
private let serverID: [UInt8] = [0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e]

private func varint(_ value: Int) -> [UInt8] {
    value < 64 ? [UInt8(value)] : value < 16384 ? [UInt8(0x40 | (value >> 8)), UInt8(value & 0xFF)]
        : [0x80 | UInt8((value >> 24) & 0x3F), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
}

private func handshakeMessage(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
    [type, 0, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body
}

/// `header` + `frames` protected as a sender does (RFC 9001 section 5).
private func protect(_ header: [UInt8], pnLength: Int, number: UInt64, frames: [UInt8], with keys: PacketProtection) -> [UInt8] {
    var frames = frames
    if frames.count + pnLength < 4 { frames += [UInt8](repeating: 0, count: 4 - pnLength - frames.count) }
    var nonce = keys.iv
    for index in 0..<8 { nonce[11 - index] ^= UInt8(truncatingIfNeeded: number >> (8 * UInt64(index))) }
    guard let sealed = Sealing.seal(chaCha: false, key: keys.key, nonce: nonce, plaintext: frames, additionalData: header)
    else { return header }
    var packet = header + sealed
    let pnOffset = header.count - pnLength
    guard let mask = Sealing.encryptBlocks(key: keys.headerKey, iv: nil, blocks: Array(packet[(pnOffset + 4)..<(pnOffset + 20)]))
    else { return packet }
    packet[0] ^= mask[0] & (packet[0] & 0x80 != 0 ? 0x0f : 0x1f)
    for index in 0..<pnLength { packet[pnOffset + index] ^= mask[1 + index] }
    return packet
}

private func longHeader(type: UInt8, dcid: [UInt8], scid: [UInt8], pnLength: Int, number: UInt64, payloadLength: Int,
                        token: Bool) -> [UInt8] {
    [0xC0 | type << 4 | UInt8(pnLength - 1), 0, 0, 0, 1, UInt8(dcid.count)] + dcid + [UInt8(scid.count)] + scid
        + (token ? [0] : []) + varint(pnLength + payloadLength + 16)
        + (0..<pnLength).map { UInt8(truncatingIfNeeded: number >> (8 * UInt64(pnLength - 1 - $0))) }
}

private let clientInitial: [UInt8] = {
    let extensions: [UInt8] = [0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04, 0x00, 0x10, 0x00, 0x05, 0x00, 0x03, 0x02, 0x68, 0x33]
    let hello = handshakeMessage(1, [3, 3] + random + [0, 0, 2, 0x13, 0x01, 1, 0] + [0, UInt8(extensions.count)] + extensions)
    var frames = [0x06, 0] + varint(hello.count) + hello
    frames += [UInt8](repeating: 0, count: 1200 - 40 - frames.count)
    let initial = PacketProtection.initial(dcid: UnsafeRawBufferPointer(start: originalDCID, count: 8), version: .v1, client: true)!
    return protect(longHeader(type: 0, dcid: originalDCID, scid: clientID, pnLength: 2, number: 0, payloadLength: frames.count,
                              token: true), pnLength: 2, number: 0, frames: frames, with: initial)
}()

private let serverInitial: [UInt8] = {
    let hello = handshakeMessage(2, [3, 3] + [UInt8](repeating: 7, count: 32) + [0, 0x13, 0x01, 0, 0, 6, 0x00, 0x2b, 0x00, 0x02, 0x03, 0x04])
    let frames = [0x06, 0] + varint(hello.count) + hello
    let initial = PacketProtection.initial(dcid: UnsafeRawBufferPointer(start: originalDCID, count: 8), version: .v1, client: false)!
    return protect(longHeader(type: 0, dcid: clientID, scid: serverID, pnLength: 1, number: 0, payloadLength: frames.count,
                              token: true), pnLength: 1, number: 0, frames: frames, with: initial)
}()

private let client = Endpoint(address: .v4(0x0A00_0001), port: 50000), server = Endpoint(address: .v4(0x0A00_0002), port: 4433)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQUICPackets(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var decoder = QUICDecoder(keySource: keySource)
    var streamBytes = 0
    let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    func feed(_ datagram: [UInt8], from source: Endpoint, to destination: Endpoint) {
        datagram.withUnsafeBytes { payload in
            decoder.receive(payload, from: source, to: destination, at: time) { event in
                if case .streamData(_, _, _, let bytes, _, _) = event { streamBytes += bytes.count }
            }
        }
    }
    feed(clientInitial, from: client, to: server)
    feed(serverInitial, from: server, to: client)
    var phases = (client: keys(3), server: keys(4))
    var clientPort = client
    while !input.isEmpty {
        let options = input.byte()
        let number = UInt64(input.uint16()), damageAt = Int(input.uint16())
        let body = Array(input.take(Int(input.uint16())))
        let fromServer = options & 4 != 0, pnLength = Int((options >> 3) & 3) + 1
        if options & 0x80 != 0 { clientPort.port &+= 1 }
        var datagram: [UInt8]
        switch options & 3 {
        case 0:
            let early = options & 0x40 != 0 && !fromServer
            let header = longHeader(type: early ? 1 : 2, dcid: fromServer ? clientID : serverID, scid: fromServer ? serverID : clientID,
                                    pnLength: pnLength, number: number, payloadLength: max(body.count, 4 - pnLength), token: false)
            datagram = protect(header, pnLength: pnLength, number: number, frames: body,
                               with: keys(early ? 5 : fromServer ? 2 : 1))
        case 1, 2:
            if options & 3 == 2 {
                if fromServer { phases.server = phases.server.next()! } else { phases.client = phases.client.next()! }
            }
            let current = fromServer ? phases.server : phases.client
            let phaseBit: UInt8 = current.secret == keys(fromServer ? 4 : 3).secret ? 0 : 0x04
            let header = [0x40 | phaseBit | UInt8(pnLength - 1)] + (fromServer ? clientID : serverID)
                + (0..<pnLength).map { UInt8(truncatingIfNeeded: number >> (8 * UInt64(pnLength - 1 - $0))) }
            datagram = protect(header, pnLength: pnLength, number: number, frames: body, with: current)
        default:
            datagram = body
        }
        if options & 0x20 != 0, !datagram.isEmpty { datagram[damageAt % datagram.count] ^= 0x01 }
        if fromServer { feed(datagram, from: server, to: clientPort) } else { feed(datagram, from: clientPort, to: server) }
    }
    decoder.finish(at: time) { event in
        if case .streamData(_, _, _, let bytes, _, _) = event { streamBytes += bytes.count }
    }
    precondition(streamBytes <= size * 2 + (8 << 20), "more stream bytes handed on than the input could carry")
    return 0
}
