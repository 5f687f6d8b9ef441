import FlowReassembly
import HTTPModel
import PacketDecoding

/// Reassembly's consumer on the reading thread when two threads decode: each new connection is decoded either
/// by the worker (its stream events go into the pipeline's batch) or, while the worker is the slower stage, by
/// `local` on the reading thread itself. That balances the two cores whichever stage is heavier on a capture.
///
/// The output keeps the single-threaded order whatever the split: a decoder emits its events while it consumes
/// the stream event that causes them, the local decoder's events go into the same batch at that point (through
/// `EventRoute`), and the worker replays the batch in order, showing them between the worker's own. Connections
/// are independent of each other in the decoders; the one thing they share is the per-capture decoded-bytes
/// budget (`HTTPDecoderLimits.maxDecodedBytesPerCapture`), which each thread's decoder counts on its own.
struct ConnectionSplitter<Consumer: StreamConsumer>: StreamConsumer {
    /// The reader's own decoder; nil when every connection goes to the worker (TLS decryption with a followed key
    /// log, which grows as it is re-read: one mutable state for all connections).
    var local: Consumer?
    /// Its batch takes the worker's connections while `pipelineRunning`. Not optional, so routing an event does
    /// not retain and release it (that was 1% of the CPU time).
    private let pipeline: StreamPipeline<Consumer>
    private var pipelineRunning = true
    /// After `pipelineFinished`: the worker's decoder, back on this thread for the capture's end.
    private(set) var remote: Consumer?
    /// Connections decoded by `local`; everything else is the worker's.
    private var decodedHere: Set<ConnectionID> = []
    private var opened = 0

    init(local: Consumer?, pipeline: StreamPipeline<Consumer>) {
        self.local = local
        self.pipeline = pipeline
    }

    /// The pipeline's worker has stopped and handed its decoder back: from now on its connections' events go
    /// to it directly, on this thread.
    mutating func pipelineFinished(remote: Consumer) {
        pipelineRunning = false
        self.remote = remote
    }

    /// Calls `body` on the decoder that owns `id`: the local one, the worker's batch, or the returned worker's.
    @inline(__always)
    private mutating func route(_ id: ConnectionID, local body: (inout Consumer) -> Void,
                                worker record: (inout StreamEventBatch<CaptureEvent>) -> Void) {
        if !decodedHere.isEmpty, decodedHere.contains(id) {  // only ever filled when `local` exists
            body(&local!)
        } else if pipelineRunning {
            record(&pipeline.batch)
        } else {
            body(&remote!)
        }
    }

    mutating func connectionOpened(_ id: ConnectionID, client: Endpoint, server: Endpoint, at time: Timestamp) {
        if local != nil, pipelineRunning {
            opened += 1
            switch pipeline.policy.share {
            case .whenWorkerIsBehind: if pipeline.workerIsBehind { decodedHere.insert(id) }
            case .everyOther: if opened % 2 == 0 { decodedHere.insert(id) }
            case .none: break
            }
        }
        route(id, local: { $0.connectionOpened(id, client: client, server: server, at: time) },
              worker: { $0.connectionOpened(id, client: client, server: server, at: time) })
    }

    mutating func streamData(_ id: ConnectionID, _ direction: StreamDirection, _ bytes: UnsafeRawBufferPointer,
                             at time: Timestamp, acknowledged: Int?) {
        route(id, local: { $0.streamData(id, direction, bytes, at: time, acknowledged: acknowledged) },
              worker: { $0.streamData(id, direction, bytes, at: time, acknowledged: acknowledged) })
    }

    mutating func streamGap(_ id: ConnectionID, _ direction: StreamDirection, length: Int, at time: Timestamp) {
        route(id, local: { $0.streamGap(id, direction, length: length, at: time) },
              worker: { $0.streamGap(id, direction, length: length, at: time) })
    }

    mutating func streamEnded(_ id: ConnectionID, _ direction: StreamDirection, reason: StreamEndReason,
                              at time: Timestamp) {
        route(id, local: { $0.streamEnded(id, direction, reason: reason, at: time) },
              worker: { $0.streamEnded(id, direction, reason: reason, at: time) })
    }

    mutating func connectionClosed(_ id: ConnectionID, at time: Timestamp) {
        route(id, local: { $0.connectionClosed(id, at: time) }, worker: { $0.connectionClosed(id, at: time) })
        decodedHere.remove(id)
    }

    mutating func warning(_ id: ConnectionID?, _ warning: any ConnectionWarning, at time: Timestamp) {
        // A warning about no connection in particular is shown by whichever decoder hears it: the same line.
        guard let id else {
            if pipelineRunning { pipeline.batch.warning(nil, warning, at: time) } else { remote!.warning(nil, warning, at: time) }
            return
        }
        route(id, local: { $0.warning(id, warning, at: time) }, worker: { $0.warning(id, warning, at: time) })
    }

    mutating func applicationProtocolNegotiated(_ id: ConnectionID, _ protocolName: String, at time: Timestamp) {
        route(id, local: { $0.applicationProtocolNegotiated(id, protocolName, at: time) },
              worker: { $0.applicationProtocolNegotiated(id, protocolName, at: time) })
    }
}

/// Where the reading thread's own decoder sends its events: into the pipeline's batch while the worker runs
/// (emitted there in order), straight to the consumer once the worker has finished and everything is on this thread.
final class EventRoute {
    var pipelineBatch: ((CaptureEvent) -> Void)?
    let sink: (CaptureEvent) -> Void

    init(sink: @escaping (CaptureEvent) -> Void) { self.sink = sink }

    func deliver(_ call: CaptureEvent) {
        if let pipelineBatch { pipelineBatch(call) } else { sink(call) }
    }
}
