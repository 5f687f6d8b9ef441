import PacketCapture
import PacketDecoding

/// Shows how far a long read has got (the executable's progress line on a terminal); nothing else is told.
public protocol ReadProgress {
    /// After each packet; `packets` is the packet's index in the source.
    mutating func tick(packets: Int)
    /// Reading has ended: take the progress line away.
    mutating func clear()
}

/// No progress shown (tests, and sources that are not files).
public struct NoProgress: ReadProgress {
    public init() {}
    public func tick(packets: Int) {}
    public func clear() {}
}

/// How reading ended, for the closing lines the executable prints.
public struct ReadingEnded: Sendable {
    /// Live only: packets delivered to the loop, and packets the queue between the capture thread and the loop
    /// dropped because the loop fell behind (tcpdump's closing counts; libpcap's own come from the handle).
    public var live: (captured: Int, queueDrops: Int)?
}

/// The one read loop over live and offline sources. A live handle is read through `BufferedCapture` (a thread of
/// its own drains the kernel's ring into a bounded queue, so a slow decoder costs counted queue drops rather than
/// kernel drops); a file is read straight from the handle, with `progress` ticked after each packet.
public enum PacketReading {
    /// Calls `body` for every packet until the source ends, `limit` packets were read or the handle is stopped.
    /// `whenIdle` runs (live only) each time the loop is about to wait for packets; `beforeEnd` runs once reading
    /// has ended, also when it failed, before `ended` is told how; the error that ended reading is rethrown after.
    public static func run<Progress: ReadProgress>(
        _ handle: CaptureHandle, limit: Int?, progress: inout Progress?, whenIdle: () -> Void = {},
        beforeEnd: () -> Void = {}, ended: (ReadingEnded) -> Void, _ body: (CapturedPacket) throws -> Void
    ) throws {
        if handle.isLive {
            let buffered = BufferedCapture(handle: handle)
            var captured = 0
            defer {
                beforeEnd()
                ended(ReadingEnded(live: (captured, buffered.droppedByQueue)))
            }
            try buffered.forEachPacket(limit: limit, whenIdle: whenIdle) { packet in
                captured += 1
                try body(packet)
            }
        } else {
            defer {
                beforeEnd()
                progress?.clear()
                ended(ReadingEnded(live: nil))
            }
            try handle.forEachPacket(limit: limit) { packet in
                try body(packet)
                progress?.tick(packets: packet.index)
            }
        }
    }
}
