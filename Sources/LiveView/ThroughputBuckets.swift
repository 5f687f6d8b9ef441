import PacketDecoding

/// Bytes per direction in fixed time buckets, from every TCP and UDP packet the engine decoded: the page's timeline.
/// Bounded: when the capture outgrows `limit` buckets, neighbours are merged and the bucket's length doubles, so a
/// week-long file takes as many buckets as a minute-long one.
public struct ThroughputBuckets: Sendable, Equatable {
    /// Seconds per bucket (1 to start with).
    public private(set) var bucketSeconds: Int64 = 1
    /// Capture time of the first bucket's start (whole seconds); nil before the first packet.
    public private(set) var start: Int64?
    /// Client to server bytes per bucket (`TrafficDirections` says which way a packet goes).
    public private(set) var up: [Int] = []
    public private(set) var down: [Int] = []
    let limit: Int

    public init(limit: Int) { self.limit = max(limit, 2) }

    /// Adds `bytes` at `time`; returns the buckets that closed (a later bucket was started), for the live push.
    @discardableResult
    public mutating func add(_ bytes: Int, up isUp: Bool, at time: Timestamp) -> Range<Int> {
        let seconds = time.seconds
        if start == nil { start = seconds }
        // Packets out of time order (from another capture queue) go into the first bucket rather than before it.
        var index = Int(max(0, (seconds - start!) / bucketSeconds))
        while index >= limit {
            merge()
            index = Int(max(0, (seconds - start!) / bucketSeconds))
        }
        let closedFrom = max(up.count - 1, 0)
        while up.count <= index {
            up.append(0)
            down.append(0)
        }
        if isUp { up[index] += bytes } else { down[index] += bytes }
        return closedFrom..<max(closedFrom, up.count - 1)
    }

    private mutating func merge() {
        bucketSeconds *= 2
        up = stride(from: 0, to: up.count, by: 2).map { up[$0] + (($0 + 1) < up.count ? up[$0 + 1] : 0) }
        down = stride(from: 0, to: down.count, by: 2).map { down[$0] + (($0 + 1) < down.count ? down[$0 + 1] : 0) }
    }

    /// Capture time at which bucket `index` starts.
    public func time(ofBucket index: Int) -> Int64 { (start ?? 0) + Int64(index) * bucketSeconds }
}
