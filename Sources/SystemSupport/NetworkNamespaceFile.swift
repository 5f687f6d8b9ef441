#if canImport(Glibc)
import Glibc
#endif

/// An open network namespace file, checked to be one, and the one way this codebase does work inside another
/// network namespace without the process moving there: `perform` joins it on a thread of its own (setns), runs
/// the work, and lets the thread end. Sockets made by that work stay in the namespace they were made in for
/// their whole life (the kernel binds a socket to its namespace at creation), so they are used from any thread
/// afterwards: that is how `capture --netns` reads packets inside a namespace while it runs in its own.
/// The descriptor is closed when this goes away.
public final class NetworkNamespaceFile: Sendable {
    public let target: NetworkNamespaceTarget
    private let descriptor: Int32
    /// The namespace's own identity (nsfs device and inode), to tell later whether a name still leads to it.
    public let device: UInt64
    public let inode: UInt64

    /// `_IO(0xb7, 0x3)` from linux/nsfs.h: the type of namespace a descriptor refers to, as a CLONE_NEW* flag.
    private static let getNamespaceType: UInt = 0xb703
    private static let newNetworkNamespace: Int32 = 0x4000_0000  // CLONE_NEWNET

    /// Opens the target's file and checks that it is a network namespace.
    public init(_ target: NetworkNamespaceTarget) throws(NetworkNamespaceError) {
        self.target = target
        let path = target.path
        let descriptor: Int32
        do {
            descriptor = try SystemCall.retrying("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
        } catch {
            switch error.errno {
            case EACCES, EPERM: throw .notPermitted(target.description)
            case ENOENT:
                if case .process(let pid) = target { throw .noSuchProcess(pid) }
                if case .named(let name) = target { throw .noSuchNamespace(name: name, path: path) }
                throw .noSuchFile(path)
            default: throw .cannotOpen(path: path, error: error)
            }
        }
        var info = stat()
        fstat(descriptor, &info)
        let type = ioctl(descriptor, Self.getNamespaceType)
        guard type == Self.newNetworkNamespace else {
            let found = type >= 0 ? "a \(Self.kind(of: type)) namespace" : Self.kind(ofFile: info.st_mode)
            close(descriptor)
            throw .notANetworkNamespace(path: path, found: found)
        }
        self.descriptor = descriptor
        self.device = UInt64(info.st_dev)
        self.inode = UInt64(info.st_ino)
    }

    deinit { close(descriptor) }

    /// Whether this process's own network namespace is this one (then nothing needs entering).
    public var isOwnNamespace: Bool {
        var own = stat()
        return stat("/proc/thread-self/ns/net", &own) == 0 && UInt64(own.st_ino) == inode && UInt64(own.st_dev) == device
    }

    /// Whether the target's path still leads to this namespace: false once `ip netns delete` removed the name, a
    /// process given by pid has exited (its /proc entry goes), or the name now means another namespace.
    public var isStillNamed: Bool {
        var now = stat()
        return stat(target.path, &now) == 0 && UInt64(now.st_ino) == inode && UInt64(now.st_dev) == device
    }

    /// Runs `work` on a new thread that has joined this namespace, waits for it, and returns its result. The thread
    /// ends with the work, so no thread of this process is left in the namespace.
    public func perform<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) throws -> Value {
        let outcome = ThreadOutcome<Value>()
        let descriptor = self.descriptor
        let target = self.target
        let thread = try JoinableThread {
            guard let setns = Self.setns, setns(descriptor, Self.newNetworkNamespace) == 0 else {
                outcome.result = .failure(NetworkNamespaceError.cannotEnter(
                    target: target.description,
                    error: SystemCallError(call: "setns", errno: Self.setns == nil ? ENOSYS : errno, subject: target.path)))
                return
            }
            outcome.result = Result { try work() }
        }
        thread.join()
        return try outcome.result!.get()
    }

    /// glibc's setns(2) wrapper, looked up once: Swift's Glibc module leaves it out (sched.h declares it only under
    /// _GNU_SOURCE), and a C target for one declaration would be more than this.
    private static let setns: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    private static func kind(of type: Int32) -> String {
        switch type {
        case 0x0002_0000: "mount"
        case 0x0400_0000: "UTS"
        case 0x0800_0000: "IPC"
        case 0x1000_0000: "user"
        case 0x2000_0000: "PID"
        case 0x0200_0000: "cgroup"
        case 0x0000_0080: "time"
        default: "another kind of"
        }
    }

    private static func kind(ofFile mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFREG: "a regular file"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFIFO: "a pipe"
        case S_IFSOCK: "a socket"
        default: "not a namespace file"
        }
    }
}

/// What a thread's work returned, written by the thread before it ends and read after `join`, which orders the two.
private final class ThreadOutcome<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
