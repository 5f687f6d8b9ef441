import Foundation
import SystemSupport

/// Where the decrypting layer finds secrets: a key log read so far, plus (optionally) the file it came from, which
/// is read again when it grows. Live captures need that: the program writes its secrets while we capture.
public final class TLSKeySource {
    public private(set) var keyLog: TLSKeyLog
    private var path: String?
    private var offset: UInt64 = 0
    private var partialLine: [UInt8] = []
    private var lastCheck: UInt64 = 0
    /// inotify on the followed file (shared by copies): a change is seen without a system call. nil when the file
    /// is not followed or inotify cannot be used; then a look is a `stat`.
    private var watcher: FileChangeWatcher?
    /// The watcher's count when the file was last read.
    private var changesRead = 0
    /// Minimum time between two looks at the file's size (each look is one `stat`).
    public var recheckInterval: Duration = .milliseconds(50)
    /// Warnings from lines read after the first load, handed to the decrypting layer to report.
    var pendingWarnings: [TLSKeyLog.Warning] = []

    /// A fixed key log (tests, pcapng Decryption Secrets Blocks).
    public init(keyLog: TLSKeyLog) {
        self.keyLog = keyLog
        path = nil
    }

    /// Reads `path` now; with `follow`, reads new lines later whenever a session needs a key it does not have.
    /// Bad lines are returned as warnings; a file that cannot be read is an error.
    public init(path: String, follow: Bool, initialWarnings: inout [TLSKeyLog.Warning]) throws {
        keyLog = TLSKeyLog()
        self.path = follow ? path : nil
        if follow { watcher = try? FileChangeWatcher(path: path) }
        changesRead = watcher?.changeCount ?? 0
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw TLSKeyLogError(path: path, reason: "is a directory; expected the key log file itself (what SSLKEYLOGFILE names)")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw TLSKeyLogError(path: path, reason: "cannot be read (does it exist, and is it readable by this user?)")
        }
        initialWarnings += readNewLines(path: path)
        if !follow && !partialLine.isEmpty {
            // A file read once: its last line needs no newline.
            initialWarnings += keyLog.add(text: String(decoding: partialLine, as: UTF8.self))
            partialLine = []
        }
    }

    /// A second source over the same key log and file, for another thread to read and re-read on its own.
    package func copy() -> TLSKeySource {
        let copy = TLSKeySource(keyLog: keyLog)
        copy.path = path
        copy.offset = offset
        copy.partialLine = partialLine
        copy.recheckInterval = recheckInterval
        copy.watcher = watcher
        copy.changesRead = changesRead
        return copy
    }

    /// Adds secrets found elsewhere (a pcapng Decryption Secrets Block).
    public func merge(_ other: TLSKeyLog) { keyLog.merge(other) }

    /// The secrets for a session, re-reading the file first if it is followed, the session is unknown and the file
    /// changed since it was last read (`rereadIfChanged`).
    package func secrets(for random: ClientRandom, need: (TLSKeyLog.Secrets) -> Bool = { _ in true }) -> TLSKeyLog.Secrets? {
        if let found = keyLog.secrets(for: random), need(found) { return found }
        rereadIfChanged()
        return keyLog.secrets(for: random)
    }

    /// Whether the key log has secrets for `random` now, without reading the file.
    package func knows(_ random: ClientRandom) -> Bool { keyLog.secrets(for: random) != nil }

    /// Reads the followed file's new lines when it changed since the last read: with inotify, an atomic load
    /// tells (no system call); without, a `stat` compares the size. Records that wait for a key ask on every
    /// packet, so a key is used as soon as it is written, however fast the records come. A look by time
    /// (`rereadIfDue`) stays beside it, for changes inotify does not see (a network file system).
    package func rereadIfChanged() {
        guard let path else { return }
        if let watcher {
            let changes = watcher.changeCount
            if changes != changesRead {
                changesRead = changes
                rereadNow()
                return
            }
        } else {
            var status = stat()
            if stat(path, &status) == 0, UInt64(status.st_size) != offset {
                rereadNow()
                return
            }
        }
        rereadIfDue()
    }

    /// Counts the times new lines were read: a waiting record is worth retrying only when it changed.
    public private(set) var generation = 0

    /// Reads the followed file's new lines if the last look is `recheckInterval` old (each look is one `stat`).
    package func rereadIfDue() {
        guard path != nil else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let interval = UInt64(recheckInterval.components.seconds) * 1_000_000_000
            + UInt64(recheckInterval.components.attoseconds / 1_000_000_000)
        guard now &- lastCheck >= interval || lastCheck == 0 else { return }
        rereadNow()
    }

    /// Reads the followed file's new lines now (a connection is going quiet, or the capture ends: last chances).
    /// A file read once has nothing to reread (and is then shared by two decoding threads: nothing is written).
    package func rereadNow() {
        guard let path else { return }
        lastCheck = DispatchTime.now().uptimeNanoseconds
        if let watcher { changesRead = watcher.changeCount }
        let linesBefore = keyLog.linesRead
        pendingWarnings += readNewLines(path: path)
        if keyLog.linesRead != linesBefore { generation += 1 }
    }

    /// Whether the file is followed for new lines.
    public var follows: Bool { path != nil }

    private func readNewLines(path: String) -> [TLSKeyLog.Warning] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size != offset else { return [] }
        if size < offset { offset = 0; partialLine = [] }  // truncated and rewritten: start over
        try? handle.seek(toOffset: offset)
        // Bounded read per look: 64 MiB is far more than any key log.
        guard let data = try? handle.read(upToCount: Int(min(size - offset, 64 << 20))) else { return [] }
        offset += UInt64(data.count)
        var bytes = partialLine + data
        if let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) {
            partialLine = Array(bytes[(lastNewline + 1)...])
            bytes.removeSubrange((lastNewline + 1)...)
        } else {
            partialLine = bytes
            return []
        }
        return keyLog.add(text: String(decoding: bytes, as: UTF8.self))
    }
}

public struct TLSKeyLogError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "key log \(path) \(reason)" }
}
