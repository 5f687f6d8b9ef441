import Crypto
import TLSWire
import _CryptoExtras

/// Labels a QUIC connection (HTTP/3 when ALPN says h3) from the client's first Initial packet: version from the
/// long header, and — for QUIC v1 — the ClientHello's server name and ALPN, by removing Initial protection with
/// the keys every observer can derive from the Destination Connection ID (RFC 9001 section 5). Nothing after
/// the Initial is decoded: HTTP/3 itself is labelled, not decoded.
public enum QUICInitial {
    public struct Label: Sendable, Hashable {
        public var version: UInt32
        public var serverName: String?
        public var alpn: [String]
    }

    /// RFC 9001 section 5.2: the v1 initial salt.
    static let saltV1: [UInt8] = [0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8,
                                  0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a]

    /// The label for a UDP payload that is a client Initial packet, or nil when it is not one. `serverName` and
    /// `alpn` are left empty when the packet cannot be unprotected (another version, a ClientHello spread over
    /// several packets, a damaged packet).
    public static func label(_ datagram: [UInt8]) -> Label? {
        guard datagram.count >= 7, datagram[0] & 0xc0 == 0xc0 else { return nil }  // long header, fixed bit
        let version = UInt32(datagram[1]) << 24 | UInt32(datagram[2]) << 16 | UInt32(datagram[3]) << 8 | UInt32(datagram[4])
        guard version != 0 else { return nil }  // version negotiation
        // v1 Initial: type bits 00 (v2 uses 01; it is labelled by version only).
        guard version != 1 || (datagram[0] >> 4) & 0x3 == 0 else { return nil }
        var label = Label(version: version, serverName: nil, alpn: [])
        guard version == 1, let crypto = try? cryptoData(datagram),
              let parsed = crypto.withUnsafeBytes({ ClientHelloFacts(message: $0) }) else {
            return label
        }
        label.serverName = parsed.serverName
        label.alpn = parsed.alpn
        return label
    }

    /// The CRYPTO frames' bytes from offset 0: the start of the TLS handshake, a ClientHello.
    static func cryptoData(_ packet: [UInt8]) throws -> [UInt8]? {
        var offset = 5
        let dcidLength = Int(packet[offset]); offset += 1
        guard dcidLength <= 20, offset + dcidLength < packet.count else { return nil }
        let dcid = Array(packet[offset..<offset + dcidLength]); offset += dcidLength
        let scidLength = Int(packet[offset]); offset += 1 + scidLength
        guard let tokenLength = varint(packet, &offset) else { return nil }
        offset += tokenLength
        guard let length = varint(packet, &offset), offset + length <= packet.count, length >= 20 else { return nil }
        let pnOffset = offset

        let keys = initialKeys(dcid: dcid, label: "client in")
        // Header protection (RFC 9001 section 5.4): AES-ECB of a 16-byte sample 4 bytes after the packet number.
        var mask = Array(packet[(pnOffset + 4)..<(pnOffset + 20)])
        try AES.permute(&mask, key: SymmetricKey(data: keys.hp))
        var header = Array(packet[0..<pnOffset])
        header[0] ^= mask[0] & 0x0f
        let pnLength = Int(header[0] & 0x03) + 1
        var packetNumber: UInt64 = 0
        for i in 0..<pnLength {
            let byte = packet[pnOffset + i] ^ mask[1 + i]
            header.append(byte)
            packetNumber = packetNumber << 8 | UInt64(byte)
        }
        var nonce = keys.iv
        for i in 0..<8 { nonce[nonce.count - 1 - i] ^= UInt8(truncatingIfNeeded: packetNumber >> (8 * UInt64(i))) }
        let payloadStart = pnOffset + pnLength, payloadEnd = pnOffset + length
        guard payloadEnd - payloadStart > 16 else { return nil }
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce),
                                        ciphertext: packet[payloadStart..<(payloadEnd - 16)],
                                        tag: packet[(payloadEnd - 16)..<payloadEnd])
        let plaintext = Array(try AES.GCM.open(box, using: SymmetricKey(data: keys.key), authenticating: header))
        return cryptoStream(plaintext)
    }

    /// CRYPTO frame data contiguous from offset 0 (frames may come in any order within the packet).
    static func cryptoStream(_ frames: [UInt8]) -> [UInt8]? {
        var pieces: [(offset: Int, data: ArraySlice<UInt8>)] = []
        var position = 0
        while position < frames.count {
            let type = frames[position]
            position += 1
            switch type {
            case 0x00, 0x01: continue  // PADDING, PING
            case 0x02, 0x03:           // ACK: largest, delay, range count, first range, ranges (, ECN counts)
                guard varint(frames, &position) != nil, varint(frames, &position) != nil,
                      let count = varint(frames, &position), varint(frames, &position) != nil else { return nil }
                for _ in 0..<min(count, 1000) {
                    guard varint(frames, &position) != nil, varint(frames, &position) != nil else { return nil }
                }
                if type == 0x03 { for _ in 0..<3 { guard varint(frames, &position) != nil else { return nil } } }
            case 0x06:
                guard let offset = varint(frames, &position), let length = varint(frames, &position),
                      position + length <= frames.count else { return nil }
                pieces.append((offset, frames[position..<position + length]))
                position += length
            default:
                position = frames.count  // CONNECTION_CLOSE and others: nothing more of use
            }
        }
        var stream: [UInt8] = []
        for piece in pieces.sorted(by: { $0.offset < $1.offset }) where piece.offset <= stream.count {
            stream.append(contentsOf: piece.data.dropFirst(stream.count - piece.offset))
        }
        return stream.isEmpty ? nil : stream
    }

    struct Keys { var key: [UInt8]; var iv: [UInt8]; var hp: [UInt8] }

    /// RFC 9001 section 5.2: initial secrets from the client's Destination Connection ID.
    static func initialKeys(dcid: [UInt8], label: String) -> Keys {
        let initial = HKDF<Crypto.SHA256>.extract(inputKeyMaterial: SymmetricKey(data: dcid), salt: saltV1)
        let secret = expandLabel(SymmetricKey(data: initial), label, 32)
        let secretKey = SymmetricKey(data: secret)
        return Keys(key: expandLabel(secretKey, "quic key", 16), iv: expandLabel(secretKey, "quic iv", 12),
                    hp: expandLabel(secretKey, "quic hp", 16))
    }

    /// TLS 1.3 HKDF-Expand-Label with an empty context (RFC 8446 section 7.1).
    static func expandLabel(_ secret: SymmetricKey, _ label: String, _ length: Int) -> [UInt8] {
        let full = Array("tls13 \(label)".utf8)
        let info = [UInt8(length >> 8), UInt8(length & 0xff), UInt8(full.count)] + full + [0]
        let output = HKDF<Crypto.SHA256>.expand(pseudoRandomKey: secret, info: info, outputByteCount: length)
        return output.withUnsafeBytes { Array($0) }
    }

    /// RFC 9000 section 16 variable-length integer.
    static func varint(_ bytes: [UInt8], _ offset: inout Int) -> Int? {
        guard offset < bytes.count else { return nil }
        let length = 1 << Int(bytes[offset] >> 6)
        guard offset + length <= bytes.count else { return nil }
        var value = Int(bytes[offset] & 0x3f)
        for i in 1..<length { value = value << 8 | Int(bytes[offset + i]) }
        offset += length
        return value
    }
}
