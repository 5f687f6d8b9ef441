import FlowReassembly
import SystemSupport
import TLS

/// The second core for the HTTP engine: the caller's thread reads, decodes and reassembles packets and records
/// reassembly's output into `batch`; a worker thread replays each batch into the layers above (TLS decryption,
/// HTTP parsing, body decoding and hashing, rendering). Both stages are deterministic and the batches keep
/// reassembly's order, so the output is byte for byte what one thread would write (CLI tests check this on every
/// fixture).
///
/// Batches travel through a bounded handoff (`queueDepth` batches) and come back empty through a second one to
/// be reused, so memory stays at about (queueDepth + 2) batches and recording allocates nothing once warm.
/// When the worker falls behind, the reader waits for it (offline) or keeps pulling packets into the live
/// capture's own queue while it waits (the capture thread behind `BufferedCapture` drains the kernel ring).
final class StreamPipeline<Consumer: StreamConsumer> {
    typealias Policy = StreamPipelinePolicy
    typealias Batch = StreamEventBatch<CaptureEvent>

    /// What the reader records into; handed over by `packetDone`, `handOver` and `finish`.
    var batch: Batch
    let policy: Policy
    private let work: BoundedHandoff<Batch>
    private let recycled: BoundedHandoff<Batch>
    private let stage: WorkerStage<Consumer>
    private var thread: JoinableThread?
    private(set) var batchesHandedOver = 0

    /// Moves `consumer` to a new worker thread until `finish()` gives it back. `deliver` runs on the worker, in
    /// order with the stream events, for each output the reader made itself and appended to the batch.
    init(consumer: Consumer, policy: Policy = Policy(), deliver: @escaping (CaptureEvent) -> Void) throws {
        self.policy = policy
        batch = Batch(eventCapacity: policy.fullEvents, byteCapacity: policy.fullBytes)
        work = BoundedHandoff(capacity: policy.queueDepth)
        // Room for every batch that can exist (the reader's two, the queue's, the worker's), so returning one
        // never waits.
        recycled = BoundedHandoff(capacity: policy.queueDepth + 3)
        let stage = WorkerStage(consumer: consumer, deliver: deliver)
        self.stage = stage
        // The worker sees the stage through a non-generic protocol, so the thread's closure captures no metatype.
        let work = work, recycled = recycled, worker: any BatchReplaying = stage
        thread = try JoinableThread {
            while var batch = work.take() {
                worker.consume(batch)
                batch.removeAll()  // keeps the storage: this is the only reference left
                recycled.put(batch)
            }
        }
    }

    /// A pipeline dropped without `finish()` (an error on the way out) still stops its thread.
    deinit { finishThread() }

    /// After each packet: hands the batch over when it is full, or when the worker is out of work and the batch
    /// is worth waking it for.
    @inline(__always)
    func packetDone() {
        let events = batch.eventCount
        if policy.everyPacket || events >= policy.fullEvents || batch.byteCount >= policy.fullBytes
            || events >= policy.eagerEvents && work.isEmpty {
            handOver()
        }
    }

    /// Whether `policy.behindBatches` or more batches wait for the worker: it is the slower stage now.
    var workerIsBehind: Bool { work.waiting >= policy.behindBatches }

    /// Hands over whatever is recorded (the input went quiet: a live capture waiting for packets).
    func handOver() {
        guard !batch.isEmpty else { return }
        let next = recycled.tryTake() ?? Batch(eventCapacity: policy.fullEvents, byteCapacity: policy.fullBytes)
        let full = batch
        batch = next
        batchesHandedOver += 1
        work.put(full)
    }

    /// Hands over the rest, waits for the worker to consume everything and returns the consumer, whose every
    /// change is visible to the caller from now on.
    func finish() -> Consumer {
        finishThread()
        return stage.consumer
    }

    private func finishThread() {
        guard let thread else { return }
        handOver()
        work.close()
        thread.join()
        self.thread = nil
    }
}

/// What the worker thread does with each batch.
private protocol BatchReplaying: Sendable {
    func consume(_ batch: StreamEventBatch<CaptureEvent>)
}

/// The worker's side: the consumer and the sink callback, used by the worker thread alone between the
/// pipeline's start and `join`.
///
/// `@unchecked Sendable` is safe because of that hand-off discipline: the reader thread creates it, touches it
/// again only after `JoinableThread.join()` (which orders every write the worker made before the read), and the
/// worker is the only thread that calls `consume` in between.
private final class WorkerStage<Consumer: StreamConsumer>: BatchReplaying, @unchecked Sendable {
    var consumer: Consumer
    let deliver: (CaptureEvent) -> Void

    init(consumer: Consumer, deliver: @escaping (CaptureEvent) -> Void) {
        self.consumer = consumer
        self.deliver = deliver
    }

    func consume(_ batch: StreamEventBatch<CaptureEvent>) {
        batch.replay(into: &consumer, extra: deliver)
    }
}

/// When a `StreamPipeline` hands a batch over (see `packetDone`), and how many may wait.
public struct StreamPipelinePolicy: Sendable {
    /// Hand over a batch this big whatever the worker is doing.
    public var fullBytes = 256 << 10
    public var fullEvents = 2_048
    /// Hand over a batch at least this big when the worker has nothing queued (keeps it busy without waking it
    /// for every packet).
    public var eagerEvents = 64
    /// Hand over after every packet that produced something: for input that may pause without telling us
    /// (a pipe on standard input), so what arrived is shown without waiting for more.
    public var everyPacket = false
    /// Batches waiting for the worker at most.
    public var queueDepth = 8
    /// Batches waiting for the worker that make it count as behind (`ConnectionShare.whenWorkerIsBehind`).
    public var behindBatches = 6
    /// Which new connections the reading thread decodes itself, when it has a decoder of its own.
    public var share = ConnectionShare.whenWorkerIsBehind

    public init() {}

    public enum ConnectionShare: Sendable {
        /// Those opened while batches wait for the worker: balances the threads on any traffic mix.
        case whenWorkerIsBehind
        /// Every other connection, whatever the load (for tests: the split does not depend on timing).
        case everyOther
        /// None: the worker decodes everything.
        case none
    }
}
