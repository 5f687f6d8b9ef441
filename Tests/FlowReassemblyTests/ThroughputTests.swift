import FlowReassembly
import Foundation
import PacketDecoding
import Testing

/// A consumer that only counts, so the measurement is the reassembler's own cost.
private struct CountingConsumer: StreamConsumer {
    var bytes = 0
    var gaps = 0
    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {}
    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ data: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?) { bytes += data.count }
    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        gaps += length
    }
    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp) {}
    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {}
    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {}
}

/// Throughput figures, run on demand: `TAPKIT_BENCH=1 swift test -c release --filter ThroughputTests`
/// (`TAPKIT_BENCH_SEGMENTS` sets the count). With a malloc-counting shim preloaded it also prints heap allocations,
/// which show the in-order path allocates per connection, not per segment.
@Suite("Reassembly: throughput", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["TAPKIT_BENCH"] != nil, "set TAPKIT_BENCH=1 to measure"))
struct ThroughputTests {
    /// Heap allocations so far, when a counting malloc shim exporting `tapkit_malloc_count` is preloaded.
    static func allocationCount() -> Int? {
        guard let symbol = dlsym(nil, "tapkit_malloc_count") else { return nil }
        typealias Counter = @convention(c) () -> Int
        return unsafeBitCast(symbol, to: Counter.self)()
    }

    static func measure(_ label: String, segments: Int, _ body: () -> Void) {
        let allocationsBefore = allocationCount()
        let start = ContinuousClock.now
        body()
        let elapsed = ContinuousClock.now - start
        if let before = allocationsBefore, let after = allocationCount() {
            print("BENCH \(label): \(after - before) heap allocations")
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("BENCH \(label): \(segments) segments in \(String(format: "%.3f", seconds)) s = "
              + "\(Int(Double(segments) / seconds)) segments/s")
    }

    @Test func inOrderAndReordered() {
        let payload = [UInt8](repeating: 0x41, count: 1448)
        let count = Int(ProcessInfo.processInfo.environment["TAPKIT_BENCH_SEGMENTS"] ?? "") ?? 2_000_000
        let connections = 1_000
        payload.withUnsafeBytes { bytes in
            var reassembler = TCPReassembler()
            var consumer = CountingConsumer()
            Self.measure("in order, \(connections) connections, 1448-byte segments", segments: count) {
                for i in 0..<count {
                    let c = i % connections
                    let source = Endpoint(address: .v4(0x0a00_0000 | UInt32(c)), port: 40000)
                    let destination = Endpoint(address: .v4(0x0a01_0001), port: 80)
                    reassembler.process(source: source, destination: destination,
                                        sequenceNumber: UInt32(truncatingIfNeeded: (i / connections) * 1448),
                                        acknowledgmentNumber: 1, flags: [.ack], payload: bytes,
                                        at: Timestamp(seconds: 1_700_000_000 + Int64(i / 100_000), nanoseconds: 0),
                                        into: &consumer)
                }
            }
            #expect(consumer.bytes == count * 1448)
            #expect(reassembler.statistics.peakBufferedBytes == 0)

            var reordered = TCPReassembler()
            var second = CountingConsumer()
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            Self.measure("pairs swapped (every other segment buffered), 1448-byte segments", segments: count) {
                for i in 0..<(count + connections) {
                    let c = i % connections
                    let source = Endpoint(address: .v4(0x0a00_0000 | UInt32(c)), port: 40000)
                    let destination = Endpoint(address: .v4(0x0a01_0001), port: 80)
                    let time = Timestamp(seconds: 1_700_000_000 + Int64(i / 100_000), nanoseconds: 0)
                    if i < connections {
                        reordered.process(source: source, destination: destination, sequenceNumber: UInt32.max,
                                          acknowledgmentNumber: 0, flags: [.syn], payload: empty, at: time,
                                          into: &second)
                        continue
                    }
                    var n = (i - connections) / connections
                    n = n % 2 == 0 ? n + 1 : n - 1
                    reordered.process(source: source, destination: destination,
                                      sequenceNumber: UInt32(truncatingIfNeeded: n * 1448),
                                      acknowledgmentNumber: 1, flags: [.ack], payload: bytes, at: time, into: &second)
                }
            }
            #expect(second.bytes == count * 1448)
            #expect(second.gaps == 0)
        }
    }
}
