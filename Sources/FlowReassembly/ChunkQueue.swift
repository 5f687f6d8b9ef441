/// The out-of-order chunks of one direction, sorted by sequence number, in a ring buffer.
///
/// A plain array made reassembly quadratic on hostile captures: segments arriving in reverse order inserted at
/// index 0 and holes filled front to back removed from index 0, each moving every other chunk. Here both ends
/// cost O(1) (amortised), lookups by index O(1) (so binary search works), and an insertion in the middle moves
/// the shorter side only, which `ReassemblyLimits.maxBufferedSegmentsPerConnection` keeps short.
struct ChunkQueue: Sendable, RandomAccessCollection {
    private var storage: [PendingChunk] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    private static let placeholder = PendingChunk(sequence: 0, bytes: [])

    @inline(__always) private func physical(_ index: Int) -> Int {
        let position = head + index
        return position >= storage.count ? position - storage.count : position
    }

    subscript(index: Int) -> PendingChunk {
        get {
            precondition(index >= 0 && index < count, "chunk index out of range")
            return storage[physical(index)]
        }
        _modify {
            precondition(index >= 0 && index < count, "chunk index out of range")
            yield &storage[physical(index)]
        }
    }

    mutating func insert(_ chunk: PendingChunk, at index: Int) {
        precondition(index >= 0 && index <= count, "chunk index out of range")
        if count == storage.count { grow() }
        if index < count / 2 {
            // Move the front part one place towards the front.
            head = head == 0 ? storage.count - 1 : head - 1
            for k in 0..<index { storage[physical(k)] = storage[physical(k + 1)] }
        } else {
            var k = count
            while k > index {
                storage[physical(k)] = storage[physical(k - 1)]
                k -= 1
            }
        }
        storage[physical(index)] = chunk
        count += 1
    }

    mutating func append(_ chunk: PendingChunk) { insert(chunk, at: count) }

    mutating func removeFirst(_ n: Int = 1) {
        precondition(n >= 0 && n <= count, "removing more chunks than held")
        for k in 0..<n { storage[physical(k)] = Self.placeholder }
        head = count == n || storage.isEmpty ? 0 : physical(n)
        count -= n
    }

    mutating func removeLast() {
        precondition(count > 0, "removing from no chunks")
        storage[physical(count - 1)] = Self.placeholder
        count -= 1
        if count == 0 { head = 0 }
    }

    mutating func removeAll() {
        storage = []
        head = 0
        count = 0
    }

    /// Doubles the ring, laying the chunks out from position 0 again.
    private mutating func grow() {
        var larger: [PendingChunk] = []
        larger.reserveCapacity(Swift.max(4, storage.count * 2))
        for k in 0..<count { larger.append(storage[physical(k)]) }
        while larger.count < Swift.max(4, storage.count * 2) { larger.append(Self.placeholder) }
        storage = larger
        head = 0
    }
}
