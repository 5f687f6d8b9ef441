import Foundation
@testable import LinkConditioner
import Testing

/// The engine's reader of what the kernel sends on its netfilter queue socket (fuzzed by `nfqueue-messages`).
@Suite struct NetfilterQueueMessagesTests {
    func attribute(_ kind: UInt16, _ payload: [UInt8]) -> [UInt8] {
        let length = 4 + payload.count
        return [UInt8(length & 0xff), UInt8(length >> 8), UInt8(kind & 0xff), UInt8(kind >> 8)] + payload
            + [UInt8](repeating: 0, count: (4 - length % 4) % 4)
    }

    func message(type: UInt16, queue: UInt16 = 8192, _ body: [UInt8]) -> [UInt8] {
        let length = 20 + body.count
        return [UInt8(length & 0xff), UInt8((length >> 8) & 0xff), 0, 0, UInt8(type & 0xff), UInt8(type >> 8), 0, 0]
            + [UInt8](repeating: 0, count: 8) + [0, 0, UInt8(queue >> 8), UInt8(queue & 0xff)] + body
    }

    func packets(_ bytes: [UInt8]) -> [NetfilterQueueMessages.QueuedPacket] {
        var packets: [NetfilterQueueMessages.QueuedPacket] = []
        bytes.withUnsafeBytes { NetfilterQueueMessages.parsePackets($0, into: &packets) }
        return packets
    }

    @Test func packetsWithAndWithoutPayloadSeveralToOneReceive() {
        let header = attribute(1, [0, 0, 0, 7, 0x08, 0x00, 3])
        let bytes = message(type: 0x300, header) + message(type: 0x300, queue: 8194, header.map { $0 == 7 ? 9 : $0 } + attribute(10, [0x45, 1, 2]))
        #expect(packets(bytes) == [.init(queue: 8192, id: 7), .init(queue: 8194, id: 9, payload: [0x45, 1, 2])])
    }

    @Test func aMessageOrAttributeLongerThanWhatWasReceivedEndsTheReading() {
        let whole = message(type: 0x300, attribute(1, [0, 0, 0, 7, 0x08, 0x00, 3]))
        for cut in 0..<whole.count { #expect(packets(Array(whole.prefix(cut))).isEmpty, "cut at \(cut)") }
        var lying = whole
        lying[20] = 200 // the attribute claims more than its message holds
        #expect(packets(lying).isEmpty)
    }

    /// An error message too short for its error code is no answer. Before, the reader took the code from the four
    /// bytes after it (stale ones of an earlier receive in the socket's buffer); the fuzz target's exact-size buffer
    /// makes such a read a finding.
    @Test func aTruncatedErrorMessageIsNoAnswer() {
        let header: [UInt8] = [16, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0] // NLMSG_ERROR, 16 bytes: no code
        #expect(header.withUnsafeBytes { NetfilterQueueMessages.acknowledgement($0) } == nil)
        let acknowledged: [UInt8] = [20, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(acknowledged.withUnsafeBytes { NetfilterQueueMessages.acknowledgement($0) } == 0)
        let refused: [UInt8] = [20, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]
        #expect(refused.withUnsafeBytes { NetfilterQueueMessages.acknowledgement($0) } == -1)
    }
}
