import FlowReassembly
import Foundation
import PacketDecoding
@testable import TLS

// The TLS layer between reassembly and HTTP: record framing, handshake reassembly, ClientHello / ServerHello /
// EncryptedExtensions / Finished / KeyUpdate handling, holding, and decryption with a fixed key log.
//
// Random ciphertext never authenticates, so decryption would stay out of reach if the fuzzer wrote records itself.
// Instead the harness plays both peers: it writes a ClientHello with a fixed client random (the one the key log
// names) and a ServerHello for the chosen version and suite, and *seals* the plaintext the fuzzer gives it with
// the keys the decrypting layer will derive. So the fuzzer controls what comes out of decryption (handshake
// messages split or joined across records, EncryptedExtensions with odd ALPN lists, KeyUpdate, padding-only TLS 1.3
// records, CBC padding) as well as raw records, gaps, ends and the segment size.
//
// Input: options byte, segment-size byte, ServerHello extension bytes (length byte + bytes), then steps:
//   control byte: bit 0 side (0 client, 1 server); bits 1-3 kind; bits 4-7 argument
//     0 raw: 16-bit length + bytes appended to the side's stream as they are
//     1 cleartext handshake record: 16-bit length + fragment
//     2 sealed record: content type byte, 16-bit length + plaintext; TLS 1.3 key from the argument
//       (0 early, 1 handshake, 2 application, 3+ application after (argument - 2) KeyUpdates)
//     3 sealed record, then one byte of it flipped (position from the next byte)
//     4 gap: 16-bit length
//     5 end of the side's stream
//     6 ChangeCipherSpec
//     7 sealed record with explicit TLS 1.3 padding: padding length byte, content type byte, length + plaintext
// Options: bits 0-2 session (TLS 1.3 AES-128-GCM, AES-256-GCM, ChaCha20; TLS 1.2 AES-128-GCM, AES-256-GCM-SHA384,
//   ChaCha20, AES-128-CBC-SHA, AES-256-CBC-SHA384), bit 3 client offers early data, bit 4 encrypt-then-MAC,
//   bit 5 no hello written by the harness (raw steps only), bit 6 an empty key log, bit 7 small limits.

private let clientRandom = [UInt8](repeating: 0xC1, count: 31) + [0x01]
private let serverRandom = [UInt8](repeating: 0x5E, count: 31) + [0x02]
private let masterSecret = [UInt8](repeating: 0x4D, count: 48)

private struct Session {
    var suite: UInt16
    var tls13: Bool
}

private let sessions: [Session] = [
    Session(suite: 0x1301, tls13: true), Session(suite: 0x1302, tls13: true), Session(suite: 0x1303, tls13: true),
    Session(suite: 0xC02F, tls13: false), Session(suite: 0xC030, tls13: false), Session(suite: 0xCCA8, tls13: false),
    Session(suite: 0xC013, tls13: false), Session(suite: 0xC028, tls13: false),
]

/// Fixed traffic secrets, one per label, long enough for SHA-384 suites.
private func secret(_ label: UInt8, sha384: Bool) -> [UInt8] {
    [UInt8](repeating: label, count: sha384 ? 48 : 32)
}

private func keyLogText(sha384: Bool) -> String {
    let random = Hex.encode(clientRandom)
    var text = "CLIENT_RANDOM \(random) \(Hex.encode(masterSecret))\n"
    for (label, byte) in [("CLIENT_EARLY_TRAFFIC_SECRET", UInt8(0xE0)), ("CLIENT_HANDSHAKE_TRAFFIC_SECRET", 0xA0),
                          ("SERVER_HANDSHAKE_TRAFFIC_SECRET", 0xB0), ("CLIENT_TRAFFIC_SECRET_0", 0xA1),
                          ("SERVER_TRAFFIC_SECRET_0", 0xB1)] {
        text += "\(label) \(random) \(Hex.encode(secret(byte, sha384: sha384)))\n"
    }
    return text
}

private func keyLog(sha384: Bool) -> TLSKeyLog {
    var warnings: [TLSKeyLog.Warning] = []
    let log = TLSKeyLog(text: keyLogText(sha384: sha384), warnings: &warnings)
    precondition(warnings.isEmpty, "fuzz harness key log: \(warnings)")
    return log
}

nonisolated(unsafe) private var keyLogs: [Bool: TLSKeyLog] = [:]

/// Counts what the TLS layer passes on and checks the contract it must keep.
private struct CountingConsumer: StreamConsumer {
    var bytes = 0
    var gaps = 0
    var warnings = 0
    var ended: Set<Int> = []

    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {}
    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ data: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?) {
        precondition(!ended.contains(direction == .clientToServer ? 0 : 1), "data after the stream ended")
        bytes += data.count
        if let first = data.first { bytes += Int(first) & 1 }  // touch the lent bytes
    }
    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        precondition(length >= 0)
        gaps += 1
    }
    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp) {
        ended.insert(direction == .clientToServer ? 0 : 1)
    }
    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {}
    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        precondition(!warning.description.isEmpty)
        warnings += 1
    }
}

private final class SessionCount { var count = 0 }

/// Seals records the way a peer would, with the keys the decrypting layer derives from the same secrets.
private struct Sealer {
    let suite: CipherSuite
    let tls13: Bool
    let encryptThenMAC: Bool
    var sequences: [Int: UInt64] = [:]

    func protection13(side: Int, stage: Int) -> RecordProtection? {
        let sha384 = suite.usesSHA384
        var base: [UInt8]
        switch stage {
        case 0: base = secret(0xE0, sha384: sha384)
        case 1: base = secret(side == 0 ? 0xA0 : 0xB0, sha384: sha384)
        default: base = secret(side == 0 ? 0xA1 : 0xB1, sha384: sha384)
        }
        if stage > 2 { for _ in 0..<(stage - 2) { base = RecordProtection.nextTrafficSecret(base, suite: suite) } }
        return RecordProtection.tls13(secret: base, suite: suite)
    }

    /// Every suite the harness picks has keys libcrypto takes: nil here would be a bug worth a crash.
    func protection12(side: Int) -> RecordProtection {
        RecordProtection.tls12(masterSecret: masterSecret, clientRandom: clientRandom, serverRandom: serverRandom,
                               suite: suite, forClient: side == 0, encryptThenMAC: encryptThenMAC)!
    }

    mutating func nextSequence(_ key: Int) -> UInt64 {
        defer { sequences[key, default: 0] += 1 }
        return sequences[key, default: 0]
    }

    mutating func seal(side: Int, stage: Int, type: UInt8, plaintext: [UInt8], padding: Int) -> [UInt8] {
        if tls13 {
            guard let protection = protection13(side: side, stage: stage) else { return [] }
            let sequence = nextSequence(side * 64 + stage)
            let inner = plaintext + [type] + [UInt8](repeating: 0, count: padding)
            let length = inner.count + RecordProtection.tagLength
            let header: [UInt8] = [23, 3, 3, UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            return header + aead(protection, nonce: nonce(protection.iv, sequence), inner, additionalData: header)
        }
        let protection = protection12(side: side)
        let sequence = nextSequence(side)
        let version: [UInt8] = [3, 3]
        func additionalData(_ length: Int) -> [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * $0)) } + [type] + version
                + [UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
        }
        var fragment: [UInt8]
        switch suite.protection {
        case .aesGCM:
            let explicit = (0..<8).map { UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * $0)) }
            fragment = explicit + aead(protection, nonce: protection.iv + explicit, plaintext,
                                       additionalData: additionalData(plaintext.count))
        case .chaCha20Poly1305:
            fragment = aead(protection, nonce: nonce(protection.iv, sequence), plaintext,
                            additionalData: additionalData(plaintext.count))
        case .aesCBC(_, let hash):
            let iv = [UInt8](repeating: 0x1F, count: 16)
            func mac(_ parts: [UInt8]) -> [UInt8] {
                Sealing.hmac(digestLength: hash.length, key: protection.macKey, parts)
            }
            func padded(_ bytes: [UInt8]) -> [UInt8] {
                let padLength = (16 - (bytes.count + 1) % 16) % 16 + 16 * (padding % 4)
                return bytes + [UInt8](repeating: UInt8(padLength), count: padLength + 1)
            }
            func encrypt(_ bytes: [UInt8]) -> [UInt8] {
                Sealing.encryptBlocks(key: protection.key, iv: iv, blocks: bytes).map { iv + $0 } ?? []
            }
            if encryptThenMAC {
                let blocks = encrypt(padded(plaintext))
                fragment = blocks + mac(additionalData(blocks.count) + blocks)
            } else {
                fragment = encrypt(padded(plaintext + mac(additionalData(plaintext.count) + plaintext)))
            }
        }
        return [type] + version + [UInt8((fragment.count >> 8) & 0xFF), UInt8(fragment.count & 0xFF)] + fragment
    }

    private func nonce(_ iv: [UInt8], _ sequence: UInt64) -> [UInt8] {
        var nonce = iv
        for index in 0..<8 { nonce[4 + index] ^= UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * index)) }
        return nonce
    }

    private func aead(_ protection: RecordProtection, nonce: [UInt8], _ plaintext: [UInt8],
                      additionalData: [UInt8]) -> [UInt8] {
        switch suite.protection {
        case .aesGCM, .chaCha20Poly1305:
            let chaCha = suite.protection == .chaCha20Poly1305
            return Sealing.seal(chaCha: chaCha, key: protection.key, nonce: nonce, plaintext: plaintext,
                                additionalData: additionalData) ?? []
        case .aesCBC:
            return []
        }
    }
}

private func handshakeRecord(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
    let message = [type, UInt8((body.count >> 16) & 0xFF), UInt8((body.count >> 8) & 0xFF), UInt8(body.count & 0xFF)] + body
    return [22, 3, 1, UInt8((message.count >> 8) & 0xFF), UInt8(message.count & 0xFF)] + message
}

private func vector16(_ bytes: [UInt8]) -> [UInt8] { [UInt8((bytes.count >> 8) & 0xFF), UInt8(bytes.count & 0xFF)] + bytes }
private func fieldBytes(_ type: UInt16, _ data: [UInt8]) -> [UInt8] { [UInt8(type >> 8), UInt8(type & 0xFF)] + vector16(data) }

private func clientHello(earlyData: Bool) -> [UInt8] {
    let name = Array("fuzz.example".utf8)
    var extensions = fieldBytes(0, vector16([0] + vector16(name)))
    extensions += fieldBytes(16, vector16([2] + Array("h2".utf8) + [8] + Array("http/1.1".utf8)))
    extensions += fieldBytes(43, [4, 3, 4, 3, 3])
    if earlyData { extensions += fieldBytes(42, []) + fieldBytes(41, [0, 0]) }
    let suites: [UInt8] = sessions.flatMap { [UInt8($0.suite >> 8), UInt8($0.suite & 0xFF)] }
    let body = [3, 3] + clientRandom + [32] + [UInt8](repeating: 0x33, count: 32) + vector16(suites) + [1, 0]
        + vector16(extensions)
    return handshakeRecord(1, body)
}

private func serverHello(_ session: Session, encryptThenMAC: Bool, extra: [UInt8]) -> [UInt8] {
    var extensions: [UInt8] = []
    if session.tls13 { extensions += fieldBytes(43, [3, 4]) } else { extensions += fieldBytes(16, vector16([2] + Array("h2".utf8))) }
    if encryptThenMAC { extensions += fieldBytes(22, []) }
    extensions += extra
    let body = [3, 3] + serverRandom + [32] + [UInt8](repeating: 0x33, count: 32)
        + [UInt8(session.suite >> 8), UInt8(session.suite & 0xFF), 0] + vector16(extensions)
    return handshakeRecord(2, body)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLSRecords(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let options = input.byte()
    let segmentSize = Int(input.byte()) * 8 + 1
    let serverExtensions = Array(input.take(Int(input.byte())))
    let session = sessions[Int(options & 7)]
    let encryptThenMAC = options & 16 != 0
    guard let suite = CipherSuite.suite(session.suite) else { preconditionFailure("suite \(session.suite) unknown") }

    let keys: TLSKeyLog
    if options & 64 != 0 {
        keys = TLSKeyLog()
    } else if let cached = keyLogs[suite.usesSHA384] {
        keys = cached
    } else {
        keys = keyLog(sha384: suite.usesSHA384)
        keyLogs[suite.usesSHA384] = keys
    }
    var limits = TLSDecryptionLimits()
    if options & 128 != 0 {
        limits.maxRecordLength = 600
        limits.maxHeldBytesBeforeServerHello = 256
        limits.maxHandshakeMessageLength = 300
    }
    let sessionCount = SessionCount()
    var layer = TLSDecryptingConsumer(keys: TLSKeySource(keyLog: keys), limits: limits, inner: CountingConsumer()) { _ in
        sessionCount.count += 1
    }
    let id = ConnectionID(1)
    let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    layer.connectionOpened(id, client: Endpoint(address: .v4(0x0A00_0001), port: 50000),
                           server: Endpoint(address: .v4(0x0A00_0002), port: 443), at: time)

    var ended = [false, false]
    func send(_ side: Int, _ bytes: [UInt8]) {
        guard !ended[side] else { return }
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + segmentSize)
            bytes[start..<end].withUnsafeBytes {
                layer.streamData(id, side == 0 ? .clientToServer : .serverToClient, $0, at: time)
            }
            start = end
        }
    }

    if options & 32 == 0 {
        send(0, clientHello(earlyData: options & 8 != 0))
        send(1, serverHello(session, encryptThenMAC: encryptThenMAC, extra: serverExtensions))
    }
    var sealer = Sealer(suite: suite, tls13: session.tls13, encryptThenMAC: encryptThenMAC)
    var steps = 0
    while !input.isEmpty && steps < 512 {
        steps += 1
        let control = input.byte()
        let side = Int(control & 1)
        let argument = Int(control >> 4)
        switch (control >> 1) & 7 {
        case 0:
            send(side, Array(input.take(Int(input.uint16()))))
        case 1:
            let fragment = Array(input.take(Int(input.uint16())))
            send(side, [22, 3, 3, UInt8((fragment.count >> 8) & 0xFF), UInt8(fragment.count & 0xFF)] + fragment)
        case 2, 3, 7:
            let kind = (control >> 1) & 7
            let padding = kind == 7 ? Int(input.byte()) : 0
            let type = input.byte()
            let plaintext = Array(input.take(Int(input.uint16())))
            var record = sealer.seal(side: side, stage: argument, type: type, plaintext: plaintext, padding: padding)
            if kind == 3, !record.isEmpty { record[Int(input.byte()) % record.count] ^= 0x40 }
            send(side, record)
        case 4:
            let length = Int(input.uint16())
            if !ended[side] { layer.streamGap(id, side == 0 ? .clientToServer : .serverToClient, length: length, at: time) }
        case 5:
            if !ended[side] {
                ended[side] = true
                layer.streamEnded(id, side == 0 ? .clientToServer : .serverToClient, reason: .fin, at: time)
            }
        default:
            send(side, [20, 3, 3, 0, 1, 1])
        }
    }
    for side in 0...1 where !ended[side] {
        layer.streamEnded(id, side == 0 ? .clientToServer : .serverToClient, reason: .captureEnded, at: time)
    }
    layer.connectionClosed(id, at: time)
    precondition(sessionCount.count <= 1, "one TLS line per connection, got \(sessionCount.count)")
    return 0
}
