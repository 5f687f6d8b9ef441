import HTTPModel
import TLSWire

/// Counts and sizes gRPC's length-prefixed messages (1-byte compressed flag, 4-byte big-endian length, then
/// the message) in one direction of a call's de-framed DATA bytes, keeping a few bytes of each as hex.
/// Nothing is decoded: protobuf needs the schema.
struct GRPCMessageCounter {
    private let maxListed: Int
    private var prefix: [UInt8] = []
    private var remaining = 0
    private var current: GRPCCallFacts.Message?
    private var currentKept: [UInt8] = []
    private(set) var listed: [GRPCCallFacts.Message] = []
    private(set) var count = 0
    private static let hexBytes = 16

    init(maxListed: Int) { self.maxListed = maxListed }

    /// Whether a message was cut short (the stream ended inside one).
    var isMidMessage: Bool { current != nil || !prefix.isEmpty }

    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes[...]
        while !rest.isEmpty {
            if current == nil {
                let take = min(5 - prefix.count, rest.count)
                prefix.append(contentsOf: rest.prefix(take))
                rest = rest.dropFirst(take)
                guard prefix.count == 5 else { return }
                let (flags, length) = prefix.withUnsafeBytes { bytes in
                    var cursor = ByteCursor(bytes)
                    return (cursor.u8()!, cursor.u32()!)  // `prefix` holds exactly 5 bytes
                }
                remaining = Int(length)
                current = GRPCCallFacts.Message(size: remaining, compressed: flags & 1 != 0, hexPrefix: "")
                currentKept = []
                prefix = []
                if remaining == 0 { finishMessage() }
                continue
            }
            let take = min(remaining, rest.count)
            let room = Self.hexBytes - currentKept.count
            if room > 0 { currentKept.append(contentsOf: rest.prefix(min(room, take))) }
            rest = rest.dropFirst(take)
            remaining -= take
            if remaining == 0 { finishMessage() }
        }
    }

    private mutating func finishMessage() {
        guard var message = current else { return }
        current = nil
        count += 1
        guard listed.count < maxListed else { return }
        message.hexPrefix = currentKept.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xf)]])
        }.joined()
        listed.append(message)
    }
}
