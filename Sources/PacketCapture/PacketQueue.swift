import PacketDecoding
#if canImport(Glibc)
import Glibc
#endif

/// A bounded byte ring that decouples a live capture thread from the (possibly slow) consumer.
///
/// The capture thread copies each packet in; when the ring is full the packet is dropped and counted, so a
/// slow terminal costs visible queue drops instead of silently stalling the kernel ring. Memory is fixed at
/// `capacity` bytes, allocated once.
final class PacketQueue: @unchecked Sendable {
    /// How often `idle` runs while no packet comes.
    static let idleIntervalNanoseconds = 100_000_000
    private static let recordHeader = 24  // seconds(8) nanoseconds(4) originalLength(4) capturedLength(4) pad(4)
    private let storage: UnsafeMutableRawBufferPointer
    private var head = 0  // next byte to read
    private var tail = 0  // next byte to write
    private var used = 0  // bytes in use, including skipped space at the end of the ring
    private var closed = false
    private(set) var dropped = 0
    private var mutex = pthread_mutex_t()
    private var notEmpty = pthread_cond_t()

    init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 8)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&notEmpty, nil)
    }

    deinit {
        storage.deallocate()
        pthread_mutex_destroy(&mutex)
        pthread_cond_destroy(&notEmpty)
    }

    /// Copies a packet in; false (and counted) when there is no room.
    @discardableResult
    func push(_ packet: CapturedPacket) -> Bool {
        let size = (Self.recordHeader + packet.bytes.count + 7) & ~7
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        var start = tail
        var skip = 0
        if start + size > storage.count {  // does not fit before the end: skip to the start of the ring
            skip = storage.count - start
            start = 0
        }
        guard size <= storage.count, used + skip + size <= storage.count else {
            dropped += 1
            return false
        }
        if skip > 0 {
            if skip >= 16 { storage.storeBytes(of: UInt32.max, toByteOffset: tail + 12, as: UInt32.self) }
            used += skip
        }
        storage.storeBytes(of: packet.timestamp.seconds, toByteOffset: start, as: Int64.self)
        storage.storeBytes(of: packet.timestamp.nanoseconds, toByteOffset: start + 8, as: Int32.self)
        storage.storeBytes(of: UInt32(packet.originalLength), toByteOffset: start + 12, as: UInt32.self)
        storage.storeBytes(of: UInt32(packet.bytes.count), toByteOffset: start + 16, as: UInt32.self)
        if let source = packet.bytes.baseAddress, packet.bytes.count > 0 {
            (storage.baseAddress! + start + Self.recordHeader).copyMemory(from: source, byteCount: packet.bytes.count)
        }
        tail = start + size
        if tail == storage.count { tail = 0 }
        used += size
        pthread_cond_signal(&notEmpty)
        return true
    }

    /// No more packets will be pushed; `pop` drains what is left, then returns false.
    func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&notEmpty)
        pthread_mutex_unlock(&mutex)
    }

    /// Waits for the next packet and lends it to `body`; false once closed and empty. `idle` runs (without the
    /// lock) when there is no packet to hand out right now, and again every `idleInterval` while none comes.
    func pop(index: Int, idle: () -> Void = {}, _ body: (CapturedPacket) throws -> Void) rethrows -> Bool {
        pthread_mutex_lock(&mutex)
        while used == 0 && !closed {
            pthread_mutex_unlock(&mutex)
            idle()
            pthread_mutex_lock(&mutex)
            guard used == 0 && !closed else { break }
            var until = timespec()
            clock_gettime(CLOCK_REALTIME, &until)
            until.tv_nsec += Self.idleIntervalNanoseconds
            if until.tv_nsec >= 1_000_000_000 { until.tv_sec += 1; until.tv_nsec -= 1_000_000_000 }
            _ = pthread_cond_timedwait(&notEmpty, &mutex, &until)
        }
        if used == 0 {
            pthread_mutex_unlock(&mutex)
            return false
        }
        // A wrap marker (or too little room for a header) means the record sits at the start of the ring.
        if head + Self.recordHeader > storage.count
            || storage.load(fromByteOffset: head + 12, as: UInt32.self) == UInt32.max {
            used -= storage.count - head
            head = 0
        }
        let start = head
        pthread_mutex_unlock(&mutex)

        let seconds = storage.load(fromByteOffset: start, as: Int64.self)
        let nanoseconds = storage.load(fromByteOffset: start + 8, as: Int32.self)
        let originalLength = Int(storage.load(fromByteOffset: start + 12, as: UInt32.self))
        let capturedLength = Int(storage.load(fromByteOffset: start + 16, as: UInt32.self))
        let size = (Self.recordHeader + capturedLength + 7) & ~7
        defer {
            pthread_mutex_lock(&mutex)
            head = start + size
            if head == storage.count { head = 0 }
            used -= size
            pthread_mutex_unlock(&mutex)
        }
        try body(CapturedPacket(
            index: index, timestamp: Timestamp(seconds: seconds, nanoseconds: nanoseconds),
            originalLength: originalLength,
            bytes: UnsafeRawBufferPointer(start: storage.baseAddress! + start + Self.recordHeader, count: capturedLength)))
        return true
    }
}

/// Runs a live capture on its own thread and hands packets to the caller's thread through a bounded queue.
public final class BufferedCapture: @unchecked Sendable {
    public let handle: CaptureHandle
    private let queue: PacketQueue
    private var captureError: (any Error)?

    /// `queueBytes` bounds the memory between capture and consumer (default 32 MiB).
    public init(handle: CaptureHandle, queueBytes: Int = 32 << 20) {
        self.handle = handle
        self.queue = PacketQueue(capacity: queueBytes)
    }

    /// Packets dropped because the consumer fell behind and the queue was full.
    public var droppedByQueue: Int { queue.dropped }

    /// Captures until `handle.stop()` or `limit` packets, calling `body` on this thread for each.
    public func forEachPacket(limit: Int? = nil, _ body: (CapturedPacket) throws -> Void) throws {
        try forEachPacket(limit: limit, whenIdle: {}, body)
    }

    /// The same, and `whenIdle` runs on this thread each time it is about to wait for packets (to pass on work
    /// held back for batching).
    public func forEachPacket(limit: Int? = nil, whenIdle: () -> Void,
                              _ body: (CapturedPacket) throws -> Void) throws {
        let thread = CaptureThread { [self] in
            // This thread only moves packets from the kernel's ring into the queue; when it waits for a CPU the
            // ring (2 MiB by default, milliseconds at gigabit rates) overflows and the kernel drops packets for
            // good, where a slow consumer costs counted queue drops at worst. So it asks to run before the
            // decoding threads when a CPU is contended: 10 nice steps above them. Allowed to root and CAP_SYS_NICE;
            // otherwise it stays as is.
            // On Linux the nice value is per thread, and `0` names the calling thread alone.
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            errno = 0
            let current = getpriority(which, 0)
            if errno == 0 { _ = setpriority(which, 0, max(-20, current - 10)) }
            do {
                try handle.forEachPacket(limit: limit) { packet in queue.push(packet) }
            } catch {
                captureError = error
            }
            queue.close()
        }
        thread.start()
        var delivered = 0
        do {
            while try queue.pop(index: delivered + 1, idle: whenIdle, body) {
                delivered += 1
                if let limit, delivered >= limit { handle.stop() }
            }
        } catch {
            handle.stop()
            while queue.pop(index: 0, { _ in }) {}
            thread.join()
            throw error
        }
        thread.join()
        if let captureError { throw captureError }
    }
}

/// A plain joinable POSIX thread.
private final class CaptureThread: @unchecked Sendable {
    private let work: () -> Void
    private var thread = pthread_t()

    init(_ work: @escaping () -> Void) { self.work = work }

    func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { context in
            let me = Unmanaged<CaptureThread>.fromOpaque(context!).takeRetainedValue()
            me.work()
            return nil
        }, context)
    }

    func join() { pthread_join(thread, nil) }
}
