import Foundation

/// Python's `http.server` on 127.0.0.1 at a free port, serving the given files from a fresh temporary folder
/// (sandboxes reach it at their host end's address). Stop it with `stop()`.
public final class LoopbackWebServer: @unchecked Sendable {  // immutable after init; `stop()` only signals
    public let port: Int
    public let directory: URL
    private let process = Process()

    public init(files: [String: Data]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tk-www-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, bytes) in files { try bytes.write(to: directory.appendingPathComponent(name)) }
        let script = """
            import http.server, sys, functools
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, directory.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0a) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw WebServerFailure(description: "the python web server did not start (is python3 installed?)")
        }
        self.port = port
    }

    /// Text files, UTF-8.
    public convenience init(files: [String: String]) throws {
        try self.init(files: files.mapValues { Data($0.utf8) })
    }

    /// Random bytes of the given sizes, for throughput tests.
    public convenience init(randomFiles sizes: [String: Int]) throws {
        var generator = SystemRandomNumberGenerator()
        try self.init(files: sizes.mapValues { size in
            Data((0..<(size + 7) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64, Array.init) }.prefix(size))
        })
    }

    public func stop() {
        // SIGKILL: the test runner starts children with SIGTERM blocked, so python would not see it.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

public struct WebServerFailure: Error, CustomStringConvertible {
    public var description: String
}
