import FlowReassembly
import HTTP2
import HTTPDecoding
import HTTPModel
import PacketCapture
import PacketDecoding
import QUIC
import TLS

/// What the engine emits, in capture order, on one thread: HTTP events (exchanges, WebSocket messages, notices,
/// warnings) and the TLS facts of each connection the decrypting layer saw.
public enum CaptureEvent: Sendable, Hashable {
    case http(HTTPEvent)
    case tls(TLSSessionFacts)
}

/// Something the engine noticed about the capture as a whole, for the executable to put into words.
public enum CaptureNote: Sendable, Equatable {
    /// `-c` stopped reading after this many packets: exchanges still open then are reported incomplete.
    case stoppedAtCount(Int)
    /// `cut` of the `read` packets were cut by the snap length (at most `longestKept` bytes of each kept): HTTP
    /// messages in them are incomplete or missing.
    case packetsCut(cut: Int, read: Int, longestKept: Int)
}

/// What the HTTP engine decodes and how, from the executable's options.
public struct HTTPEngineOptions {
    public var limits = HTTPDecoderLimits()
    /// TLS is decrypted with these keys (also inside CONNECT tunnels); nil leaves TLS encrypted and labelled.
    public var keys: TLSKeySource?
    /// Two threads (reassembly on the reading one, decoding on a worker) with this policy; nil for one thread.
    public var pipeline: StreamPipelinePolicy?
    /// QUIC connections on UDP (any port) are followed: each gets a line (`.notice`), and with `keys` its packets
    /// are decrypted.
    public var labelQUIC = true
    /// Stop after this many packets.
    public var packetLimit: Int?
    /// Every packet is also saved to this file as it arrives, whatever is shown (`--http -w FILE`): pcapng when the
    /// name ends in `.pcapng`, else pcap.
    public var savePacketsTo: String?
    /// Key log lines written into a pcapng `savePacketsTo` as they become known, before the packets that follow.
    public var secretsToSave: SecretsToEmbed?
    /// How long TLS records and QUIC packets wait for a key a followed key log does not have yet
    /// (`TLSDecryptionLimits.keyWait`, `QUICLimits.keyWait`).
    public var keyWait: Duration = .seconds(2)
    /// Where TLS records waiting past the in-memory bound go (an unlinked temporary file); nil keeps them in memory
    /// only (`TLSDecryptionLimits.spillDirectory`).
    public var heldRecordsDirectory: String?

    /// The TLS layer's limits for these options' keys.
    public var tlsLimits: TLSDecryptionLimits {
        var limits = TLSDecryptionLimits(for: keys)
        if limits.keyWait > .zero { limits.keyWait = keyWait }
        limits.spillDirectory = heldRecordsDirectory
        return limits
    }

    /// The QUIC layer's limits.
    public var quicLimits: QUICLimits {
        var limits = QUICLimits()
        limits.keyWait = keyWait
        return limits
    }

    public init() {}
}

/// The capture pipeline from packets to typed events: decode -> TCP reassembly -> (TLS decryption) -> HTTP/1,
/// with HTTP/2, WebSocket and CONNECT tunnels taken over after HTTP/1 -> `CaptureEvent`s, and QUIC labels from UDP.
/// One builder (`makeStack`) and one read loop over live and offline sources, used by every mode of `capture`
/// that decodes HTTP; a second consumer of the events (a live view) or a new protocol plugs in here, not in the
/// executable.
public struct HTTPEngine {
    public let handle: CaptureHandle
    public let options: HTTPEngineOptions
    let packetDecoder: PacketDecoder

    /// Fails for a link type the packet decoder cannot read.
    public init(handle: CaptureHandle, options: HTTPEngineOptions) throws {
        self.handle = handle
        self.options = options
        packetDecoder = try PacketDecoder(linkType: handle.linkType)
    }

    /// Reads the source to its end and emits what it carries to `events`; connections still open at the end are
    /// closed (requests still waiting appear with no response). `observe` sees every decoded packet first (the
    /// statistics count them); `ended` is told how reading ended before the last connections are closed. The
    /// error that ended reading early is thrown after everything read before it was emitted.
    public func run<Progress: ReadProgress>(progress: Progress?, observe: ((DecodedPacket) -> Void)? = nil,
                                            ended: @escaping (ReadingEnded) -> Void,
                                            note: @escaping (CaptureNote) -> Void,
                                            events: @escaping (CaptureEvent) -> Void) throws {
        let loop = ReadLoop(engine: self, observe: observe, ended: ended, note: note, show: events)
        var progress = progress
        if let keys = options.keys {
            // TLS first: decrypted application data reaches the HTTP decoder as if it were cleartext.
            var consumer = makeStack(keys: keys, events)
            // A key log read once is only looked up from here on, so both threads can decode connections with it;
            // a followed one grows as it is re-read, so then every connection stays on the worker.
            let route = EventRoute(sink: events)
            try loop.run(consumer: &consumer, local: keys.follows ? nil : (makeStack(keys: keys, route.deliver), route),
                         progress: &progress) {
                $0.finishWaiting(at: $1)
                $0.reportKeyLogWarnings(at: $1)
                $0.inner.flush(at: $1)
            }
        } else {
            var consumer = makeHTTPDecoder(events)
            let route = EventRoute(sink: events)
            try loop.run(consumer: &consumer, local: (makeHTTPDecoder(route.deliver), route), progress: &progress) {
                $0.flush(at: $1)
            }
        }
    }

    /// HTTP/1 with the HTTP/2 and WebSocket takeovers, and with a key log the TLS inside CONNECT tunnels.
    func makeHTTPDecoder(_ deliver: @escaping (CaptureEvent) -> Void) -> HTTPStreamDecoder {
        let takeover = TunnelDecryptor.takeover(keys: options.keys, limits: options.tlsLimits) {
            deliver(.tls($0))
        }
        return HTTPStreamDecoder(limits: options.limits, takeover: takeover) { deliver(.http($0)) }
    }

    /// TLS decryption in front of the HTTP decoder.
    func makeStack(keys: TLSKeySource,
                   _ deliver: @escaping (CaptureEvent) -> Void) -> TLSDecryptingConsumer<HTTPStreamDecoder> {
        TLSDecryptingConsumer(keys: keys, limits: options.tlsLimits, inner: makeHTTPDecoder(deliver)) {
            deliver(.tls($0))
        }
    }
}

/// Reads packets through reassembly into a consumer until the source ends, then closes what is still open.
private struct ReadLoop {
    let engine: HTTPEngine
    let observe: ((DecodedPacket) -> Void)?
    let ended: (ReadingEnded) -> Void
    let note: (CaptureNote) -> Void
    /// Emits events, on the thread that runs the consumer.
    let show: (CaptureEvent) -> Void

    /// `local`: a second decoder for the reading thread, when connections may be shared between the threads.
    func run<Consumer: StreamConsumer, Progress: ReadProgress>(
        consumer: inout Consumer, local: (consumer: Consumer, route: EventRoute)?, progress: inout Progress?,
        flush: (inout Consumer, Timestamp) -> Void
    ) throws {
        let handle = engine.handle, options = engine.options, packetDecoder = engine.packetDecoder
        var reassembler = TCPReassembler()
        let writer = try options.savePacketsTo.map { try handle.makeWriter(path: $0, pcapng: $0.hasSuffix(".pcapng")) }
        var secrets = options.secretsToSave
        defer { try? writer?.flush() }
        // QUIC runs on the reading thread; a followed key log is re-read there from its own copy.
        var quic = options.labelQUIC
            ? QUICDecoder(keySource: options.keys.map { $0.follows ? $0.copy() : $0 }, limits: options.quicLimits) : nil
        let quicRouter = QUICRouter(limits: options.limits, sink: show)

        var lastTime: Timestamp?
        var packetsCut = 0, packetsRead = 0, longestCut = 0
        func feed<Target: StreamConsumer>(_ packet: CapturedPacket, into target: inout Target) {
            packetsRead += 1
            lastTime = packet.timestamp
            if packet.bytes.count < packet.originalLength {
                packetsCut += 1
                longestCut = max(longestCut, packet.bytes.count)
            }
            let decoded = packetDecoder.decode(packet.bytes, timestamp: packet.timestamp,
                                               originalLength: packet.originalLength)
            observe?(decoded)
            reassembler.process(decoded, into: &target)
            if let writer {
                if secrets != nil, let lines = secrets!.newLines() { writer.writeSecrets(lines) }
                writer.write(packet)
            }
            // Optional chaining calls `receive` in place: testing `quic != nil` first copied the whole decoder
            // (its tables retained and released) for every packet, TCP ones too.
            if let udp = decoded.udp { quic?.receive(udp, at: packet.timestamp) { quicRouter.route($0) } }
        }
        // Two threads: the consumer moves to the pipeline's worker for the loop and comes back before anything
        // else is emitted, so messages on standard error keep their single-threaded order too.
        let pipeline = try options.pipeline.map { try StreamPipeline(consumer: consumer, policy: $0, deliver: show) }
        // With two threads QUIC's events join reassembly's batch, so they keep their place among TCP's.
        if let pipeline { quicRouter.sink = { pipeline.batch.append(extra: $0) } }
        var splitter = pipeline.map { pipeline in
            local?.route.pipelineBatch = { pipeline.batch.append(extra: $0) }
            return ConnectionSplitter(local: local?.consumer, pipeline: pipeline)
        }
        var failure: Error?
        do {
            try PacketReading.run(handle, limit: options.packetLimit, progress: &progress,
                                  whenIdle: {
                                      // Two threads: the worker owns the consumer; the quiet time reaches it
                                      // in order with what is batched.
                                      if let pipeline {
                                          quic?.idle { quicRouter.route($0) }
                                          pipeline.batch.idle()
                                          pipeline.handOver()
                                      } else {
                                          quic?.idle { quicRouter.route($0) }
                                          consumer.idle()
                                      }
                                  },
                                  beforeEnd: {
                                      guard let pipeline else { return }
                                      local?.route.pipelineBatch = nil
                                      splitter!.pipelineFinished(remote: pipeline.finish())
                                  },
                                  ended: ended) { packet in
                if let pipeline {
                    feed(packet, into: &splitter!)
                    pipeline.packetDone()
                } else {
                    feed(packet, into: &consumer)
                }
            }
        } catch {
            failure = error
        }
        if let count = options.packetLimit, packetsRead >= count { note(.stoppedAtCount(count)) }
        let end = lastTime ?? Timestamp(seconds: 0, nanoseconds: 0)
        quicRouter.sink = show  // the worker is done: from here on everything is emitted on this thread
        quic?.finish(at: end) { quicRouter.route($0) }
        if var splitter {
            // Reassembly closes every connection it still has here, so both decoders are left with none open and
            // flushing them one after the other cannot reorder anything.
            reassembler.finish(at: end, into: &splitter)
            if splitter.local != nil { flush(&splitter.local!, end) }
            consumer = splitter.remote!
        } else {
            reassembler.finish(at: end, into: &consumer)
        }
        flush(&consumer, end)
        if packetsCut > 0 { note(.packetsCut(cut: packetsCut, read: packetsRead, longestKept: longestCut)) }
        if let failure { throw failure }
    }
}
