import ArgumentParser
import CaptureEngine
import FlowReassembly
import Foundation
import PacketCapture
import PacketDecoding
import Reports
import TLS

/// Holds the statistics while the HTTP decoder's callback adds exchanges to them.
private final class StatisticsBox {
    var stats: TrafficStatistics
    init(_ stats: TrafficStatistics) { self.stats = stats }
}

/// `--stats`: every packet counted (conversations, endpoints, protocols), TCP reassembled into HTTP exchanges for the
/// HTTP tables; the report is printed when the file ends or the live capture stops (Ctrl-C, -c). With a key log,
/// TLS is decrypted first, so HTTPS exchanges are in the HTTP tables too.
func runStatsMode(handle: CaptureHandle, source: SourceOptions, json: Bool, keys: TLSKeySource?,
                  holding: (wait: Duration, directory: String)) throws {
    var options = HTTPEngineOptions()
    options.keyWait = holding.wait
    options.heldRecordsDirectory = holding.directory
    options.limits.bodyKeepBytes = 0
    options.limits.hashBodies = false  // the tables count sizes; no body hash is shown
    options.keys = keys
    // QUIC is counted as UDP; with a key log it is decrypted so its HTTP/3 exchanges are in the HTTP tables.
    options.labelQUIC = keys != nil
    options.packetLimit = source.count
    let engine = try HTTPEngine(handle: handle, options: options)
    let box = StatisticsBox(TrafficStatistics())
    var failure: Error?
    do {
        // One thread: the statistics count packets on the reading thread and exchanges where they are decoded.
        try engine.run(progress: ProgressReporter(handle: handle), observe: { box.stats.count($0) },
                       ended: { printLiveStatistics(handle: handle, ended: $0) }, note: { _ in }) { event in
            if case .http(.exchange(let exchange)) = event { box.stats.add(exchange) }
        }
    } catch {
        failure = error
    }
    let stats = box.stats
    let text = json ? StatisticsJSONRenderer().render(stats) : StatisticsTextRenderer().render(stats)
    FileHandle.standardOutput.write(Data(text.utf8))
    if stats.conversations.packetsNotTabled > 0 {
        printError("\(stats.conversations.packetsNotTabled) packets belong to conversations past the limit of "
                   + "\(stats.limits.maxConversations); they are in the totals but not in the conversation tables")
    }
    if stats.addresses.packetsNotTabled > 0 {
        printError("\(stats.addresses.packetsNotTabled) addresses past the limit of \(stats.limits.maxAddresses) are "
                   + "not in the IP endpoint table")
    }
    if let failure { throw failure }
}

/// `--follow`: only the chosen connection's segments go through the reassembler, into a writer that prints its
/// bytes as tshark's follow does.
func runFollowMode(handle: CaptureHandle, source: SourceOptions, target: FollowTarget, format: FollowFormat) throws {
    let decoder = try PacketDecoder(linkType: handle.linkType)
    // The conversation table numbers connections exactly as --stats does (and as Wireshark's tcp.stream).
    var conversations = ConversationTable()
    var reassembler = TCPReassembler()
    var writer: FollowStreamWriter?
    var chosen: Int?
    var lastTime: Timestamp?
    let output = TextOutput(fileDescriptor: STDOUT_FILENO, flushThreshold: 1 << 16)
    var progress = ProgressReporter(handle: handle)
    var failure: Error?
    do {
        try PacketReading.run(handle, limit: source.count, progress: &progress,
                              ended: { printLiveStatistics(handle: handle, ended: $0) }) { packet in
            lastTime = packet.timestamp
            let decoded = decoder.decode(packet.bytes, timestamp: packet.timestamp, originalLength: packet.originalLength)
            guard let segment = decoded.tcp,
                  let index = conversations.countTCP(from: segment.source, to: segment.destination, flags: segment.flags,
                                                     sequence: segment.sequenceNumber, frameLength: decoded.originalLength,
                                                     at: decoded.timestamp) else { return }
            if chosen == nil {
                switch target {
                case .index(let wanted) where wanted == index: chosen = index
                case .ends(let x, let y) where conversations.tcp[index].joins(x, y): chosen = index
                default: return
                }
                let conversation = conversations.tcp[index]
                var started = FollowStreamWriter(format: format, node0: conversation.a, node1: conversation.b, output: output)
                switch target {
                case .index(let wanted): started.writeHeader(filter: FollowStreamWriter.filter(index: wanted))
                case .ends(let x, let y): started.writeHeader(filter: FollowStreamWriter.filter(x, y))
                }
                writer = started
            }
            guard index == chosen, writer != nil else { return }
            reassembler.process(decoded, into: &writer!)
            if writer!.output.writeFailed { handle.stop() }
        }
    } catch {
        failure = error
    }
    guard var writer else {
        let count = conversations.tcp.count
        switch target {
        case .index(let wanted):
            printError("no TCP conversation \(wanted) in this capture: it has \(count) (0 to \(max(count - 1, 0))); "
                       + "capture --stats lists them")
        case .ends(let x, let y):
            printError("no TCP conversation between \(x) and \(y) in this capture; capture --stats lists the \(count) it has")
        }
        if let failure { throw failure }
        throw ExitCode(1)
    }
    reassembler.finish(at: lastTime ?? Timestamp(seconds: 0, nanoseconds: 0), into: &writer)
    writer.writeFooter()
    if let failure { throw failure }
}
