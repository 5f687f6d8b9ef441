import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A first-in first-out queue of at most `capacity` values from one thread to another. `put` waits while the
/// queue is full (back pressure: the producer can never run further ahead than `capacity` values), `take`
/// waits while it is empty, and `close` lets the consumer drain what is left and then stop.
///
/// `@unchecked Sendable` is safe here because every stored property but the constants and `count` is read and
/// written only with `mutex` held; `count` is an atomic, read without the lock only as a hint (`isEmpty`, `waiting`).
public final class BoundedHandoff<Element: Sendable>: @unchecked Sendable {
    public let capacity: Int
    private var slots: [Element?]
    private var head = 0
    private let count = Atomic<Int>(0)
    private var closed = false
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let notEmpty: UnsafeMutablePointer<pthread_cond_t>
    private let notFull: UnsafeMutablePointer<pthread_cond_t>

    public init(capacity: Int) {
        precondition(capacity > 0, "a handoff needs room for at least one value")
        self.capacity = capacity
        slots = Array(repeating: nil, count: capacity)
        mutex = .allocate(capacity: 1)
        notEmpty = .allocate(capacity: 1)
        notFull = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notEmpty, nil)
        pthread_cond_init(notFull, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        pthread_cond_destroy(notEmpty)
        pthread_cond_destroy(notFull)
        mutex.deallocate()
        notEmpty.deallocate()
        notFull.deallocate()
    }

    /// Whether nothing is waiting to be taken: a hint for the producer (the consumer may be taking one right now).
    public var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Values waiting to be taken: a hint, like `isEmpty`.
    public var waiting: Int { count.load(ordering: .relaxed) }

    /// Adds `value`, waiting while the queue is full. False (and `value` dropped) once the queue is closed.
    @discardableResult
    public func put(_ value: Element) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while count.load(ordering: .relaxed) == capacity && !closed { pthread_cond_wait(notFull, mutex) }
        if closed { return false }
        let used = count.load(ordering: .relaxed)
        slots[(head + used) % capacity] = value
        count.store(used + 1, ordering: .releasing)
        pthread_cond_signal(notEmpty)
        return true
    }

    /// The oldest value, waiting while the queue is empty; nil once the queue is closed and drained.
    public func take() -> Element? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while count.load(ordering: .relaxed) == 0 && !closed { pthread_cond_wait(notEmpty, mutex) }
        return removeFirst()
    }

    /// The oldest value if there is one, without waiting.
    public func tryTake() -> Element? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return removeFirst()
    }

    /// No more values will be put: `take` returns what is left, then nil; a waiting `put` gives up.
    public func close() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(notEmpty)
        pthread_cond_broadcast(notFull)
        pthread_mutex_unlock(mutex)
    }

    /// Call with `mutex` held.
    private func removeFirst() -> Element? {
        let used = count.load(ordering: .relaxed)
        guard used > 0 else { return nil }
        let value = slots[head].take()
        head = (head + 1) % capacity
        count.store(used - 1, ordering: .releasing)
        pthread_cond_signal(notFull)
        return value
    }
}
