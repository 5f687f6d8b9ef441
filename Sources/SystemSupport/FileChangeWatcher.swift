#if canImport(Glibc)
import Glibc
import Synchronization

/// Counts the changes to one file (written, created, moved into place, its attributes changed) as inotify reports
/// them on the file's directory, so the file may not exist yet and may be replaced. A thread of its own waits for
/// the kernel's events; asking whether the file changed is one atomic load, no system call, so a reader may ask
/// for every packet. (inotify does not see writes made to a network file system by another machine: callers
/// still look at the file now and then.)
public final class FileChangeWatcher: Sendable {
    private final class State: Sendable {
        let changes = Atomic<Int>(0)
        let stopping = Atomic<Bool>(false)
    }

    private let state = State()
    private let descriptor: Int32
    private let thread: JoinableThread

    /// Starts watching `path` (its directory must exist). Throws when inotify cannot be used.
    public init(path: String) throws(SystemCallError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let descriptor = try SystemCall.retrying("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_ATTRIB)
        do {
            try SystemCall.retrying("inotify_add_watch", subject: directory) { inotify_add_watch(descriptor, directory, mask) }
        } catch {
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        let state = state
        do {
            thread = try JoinableThread { Self.watch(descriptor, name: name, state: state) }
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// How many changes were seen so far: a reader compares it with the count when it last read the file.
    public var changeCount: Int { state.changes.load(ordering: .acquiring) }

    deinit {
        state.stopping.store(true, ordering: .releasing)
        thread.join()
        close(descriptor)
    }

    /// Waits for events (at most 100 ms at a time, to see `stopping`) and counts those naming the file.
    private static func watch(_ descriptor: Int32, name: String, state: State) {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        let wanted = Array(name.utf8)
        while !state.stopping.load(ordering: .acquiring) {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 100) > 0 else { continue }
            let count = read(descriptor, buffer, size)
            guard count > 0 else { continue }
            var offset = 0
            var seen = false
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = UnsafeRawBufferPointer(start: buffer + nameStart, count: Int(event.len))
                let eventName = nameBytes.prefix { $0 != 0 }
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 || eventName.elementsEqual(wanted) { seen = true }
                offset = nameStart + Int(event.len)
            }
            if seen { state.changes.add(1, ordering: .releasing) }
        }
    }
}
#endif
