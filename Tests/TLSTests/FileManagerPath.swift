import Foundation

enum FileManagerPath {
    static func temporary(_ prefix: String) -> String {
        NSTemporaryDirectory() + "\(prefix)-\(UInt32.random(in: 0...UInt32.max))"
    }
    static func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
    static func append(_ text: String, to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
