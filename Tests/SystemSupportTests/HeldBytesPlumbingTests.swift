import Foundation
import Testing
import SystemSupport

/// The OS plumbing behind holding TLS records for their key (issue 37): a file watched by inotify, and a spill file
/// that has no name.
@Suite struct HeldBytesPlumbingTests {
    static func temporaryDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "tks-held-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(2)
        while !condition() && Date() < deadline { usleep(5_000) }
        return condition()
    }

    @Test("a watched file's writes, creation and replacement are counted; other files in its directory are not")
    func watcherCountsChanges() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/keys.log"
        let watcher = try FileChangeWatcher(path: path)
        #expect(watcher.changeCount == 0)
        try Data("a\n".utf8).write(to: URL(fileURLWithPath: path))  // created
        #expect(Self.waitFor { watcher.changeCount > 0 })
        usleep(100_000)  // creating and writing are several events, perhaps counted apart
        let afterCreate = watcher.changeCount
        try Data("other\n".utf8).write(to: URL(fileURLWithPath: directory + "/other.log"))
        usleep(100_000)
        #expect(watcher.changeCount == afterCreate, "another file's write was counted")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("b\n".utf8))
        try handle.close()
        #expect(Self.waitFor { watcher.changeCount > afterCreate })
    }

    @Test("spilled bytes read back as written; the file has no name and is emptied on request")
    func spillFileRoundTrip() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let spill = try SpillFile(directory: directory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [])
        let first: [UInt8] = Array(0..<200).map { UInt8($0) }
        let second: [UInt8] = Array(repeating: 7, count: 70_000)
        let a = try first.withUnsafeBytes { try spill.append($0) }
        let b = try second.withUnsafeBytes { try spill.append($0) }
        #expect(a == SpillFile.Extent(offset: 0, length: 200))
        #expect(b == SpillFile.Extent(offset: 200, length: 70_000))
        var buffer: [UInt8] = []
        try spill.read(b, into: &buffer)
        #expect(buffer == second)
        try spill.read(a, into: &buffer)
        #expect(buffer == first)
        spill.empty()
        #expect(spill.size == 0)
        let c = try first.withUnsafeBytes { try spill.append($0) }
        #expect(c.offset == 0)
    }
}
