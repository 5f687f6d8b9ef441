#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A temporary file for bytes that wait too long to stay in memory (TLS records held for their key). It is made
/// with mode 0600 and unlinked at once, so it has no name: nothing else can open it, and the kernel removes it when
/// the descriptor is closed, also when the process is killed. Append-only; emptied (truncated) when the caller says
/// nothing in it is needed any more.
public final class SpillFile {
    /// Where some bytes were put.
    public struct Extent: Sendable, Hashable {
        public var offset: Int
        public var length: Int

        public init(offset: Int, length: Int) {
            self.offset = offset
            self.length = length
        }
    }

    private let descriptor: Int32
    /// Bytes written since the file was last emptied (the next write's offset).
    public private(set) var size = 0

    /// Makes the file in `directory`.
    public init(directory: String) throws(SystemCallError) {
        var template = Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast())
            + Array("tapkit-held-XXXXXX".utf8CString)
        let descriptor = try SystemCall.retrying("mkstemp", subject: directory) {
            template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        }
        _ = fchmod(descriptor, 0o600)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `bytes`; where they went.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> Extent {
        var written = 0
        while written < bytes.count {
            let count = try SystemCall.retrying("pwrite", subject: "held records file") {
                pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(size + written))
            }
            written += count
        }
        let extent = Extent(offset: size, length: bytes.count)
        size += bytes.count
        return extent
    }

    /// Reads back what `append` put at `extent` into `buffer` (its storage reused).
    public func read(_ extent: Extent, into buffer: inout [UInt8]) throws(SystemCallError) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: extent.length))
        var done = 0
        let result: Result<Void, SystemCallError> = buffer.withUnsafeMutableBytes { out in
            while done < extent.length {
                let count = pread(descriptor, out.baseAddress! + done, extent.length - done, off_t(extent.offset + done))
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return .failure(SystemCallError(call: "pread", errno: errno, subject: "held records file")) }
                if count == 0 { return .failure(SystemCallError(call: "pread", errno: EIO, subject: "held records file")) }
                done += count
            }
            return .success(())
        }
        try result.get()
    }

    /// Nothing written so far is needed: the file is emptied and its disk space given back.
    public func empty() {
        _ = ftruncate(descriptor, 0)
        size = 0
    }
}
