import Crypto
import FlowReassembly
@testable import HTTP2
import HTTPDecoding
import HTTPModel
@testable import PacketDecoding
import _CryptoExtras

// The QUIC Initial labeller (RFC 9001 initial keys): long-header parsing, header protection, AEAD, CRYPTO frame
// reassembly and the ClientHello reader behind it. Random bytes never authenticate, so in "protected" mode the
// harness builds a real client Initial around the fuzzer's plaintext frames (any DCID, SCID, token, packet number
// length, declared length), protects it with the keys every observer derives from the DCID, and may then damage one
// byte; in "raw" mode the fuzzer's bytes are the UDP payload as they are. Both go through `QUICLabeler.inspect`
// as well as `QUICInitial.label`.
//
// Input: options byte (bit 0 raw; bits 1-2 packet number length - 1; bit 3 damage one byte; bit 4 use the
// length field the fuzzer gives instead of the right one; bit 5 a version other than 1),
//   protected: DCID length byte + DCID, SCID length byte + SCID, token length byte + token, 16-bit length
//   override, damage position (16 bits), then the plaintext frames (the rest);
//   raw: the datagram (the rest).

nonisolated(unsafe) private var labeler = QUICLabeler()

private func varint(_ value: Int) -> [UInt8] {
    switch value {
    case ..<64: return [UInt8(value)]
    case ..<16384: return [UInt8(0x40 | (value >> 8)), UInt8(value & 0xFF)]
    default: return [0x80 | UInt8((value >> 24) & 0x3F), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF),
                     UInt8(value & 0xFF)]
    }
}

private func protectedInitial(_ input: inout FuzzInput, options: UInt8) -> [UInt8] {
    let dcid = Array(input.take(Int(input.byte() % 24)))
    let scid = Array(input.take(Int(input.byte() % 24)))
    let token = Array(input.take(Int(input.byte())))
    let lengthOverride = Int(input.uint16())
    let damageAt = Int(input.uint16())
    var frames = Array(input.rest())
    let pnLength = Int((options >> 1) & 3) + 1
    if frames.count + pnLength < 4 { frames += [UInt8](repeating: 0, count: 4 - pnLength - frames.count) }
    let version: [UInt8] = options & 32 != 0 ? [0x6b, 0x33, 0x43, 0xcf] : [0, 0, 0, 1]
    let length = options & 16 != 0 ? lengthOverride : pnLength + frames.count + 16
    var header: [UInt8] = [0xC0 | UInt8(pnLength - 1)] + version + [UInt8(dcid.count)] + dcid + [UInt8(scid.count)] + scid
        + varint(token.count) + token + varint(min(length, (1 << 30) - 1))
    let pnOffset = header.count
    let packetNumber = (0..<pnLength).map { UInt8(0x10 + $0) }
    header += packetNumber
    let keys = QUICInitial.initialKeys(dcid: dcid, label: "client in")
    var nonce = keys.iv
    for (index, byte) in packetNumber.reversed().enumerated() { nonce[nonce.count - 1 - index] ^= byte }
    guard let box = try? AES.GCM.seal(frames, using: SymmetricKey(data: keys.key), nonce: AES.GCM.Nonce(data: nonce),
                                      authenticating: header) else { return header }
    var packet = header + Array(box.ciphertext) + Array(box.tag)
    // Header protection (RFC 9001 section 5.4), as a sender applies it.
    var mask = Array(packet[(pnOffset + 4)..<(pnOffset + 20)])
    guard (try? AES.permute(&mask, key: SymmetricKey(data: keys.hp))) != nil else { return packet }
    packet[0] ^= mask[0] & 0x0f
    for index in 0..<pnLength { packet[pnOffset + index] ^= mask[1 + index] }
    if options & 8 != 0 { packet[damageAt % packet.count] ^= 0x01 }
    return packet
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQUICInitial(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let datagram = options & 1 != 0 ? Array(input.rest()) : protectedInitial(&input, options: options)
    if let label = QUICInitial.label(datagram) {
        precondition(label.serverName.map { $0.utf8.count <= datagram.count } ?? true)
        precondition(label.alpn.count <= datagram.count)
    }
    datagram.withUnsafeBytes { payload in
        let udp = UDPDatagram(source: Endpoint(address: .v4(0x0A00_0001), port: 50000),
                              destination: Endpoint(address: .v4(0x0A00_0002), port: 443),
                              length: payload.count + 8, payload: payload, payloadLength: payload.count)
        _ = labeler.inspect(udp, at: Timestamp(seconds: 1_700_000_000, nanoseconds: 0))
    }
    return 0
}
