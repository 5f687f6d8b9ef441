import Foundation
import Sandbox
import TestSupport

/// Runs `capture -- COMMAND` in the background, collecting its output with the time each stdout line arrived.
final class BackgroundCommandCapture: @unchecked Sendable {
    let process = Process()
    private let out = Pipe(), err = Pipe()
    private let lock = NSLock()
    private var lines: [(time: Date, text: String)] = []
    private var errData = Data()
    private let group = DispatchGroup()
    let started = Date()

    init(_ arguments: [String], environment: [String: String]? = nil, executable: String = "capture") throws {
        process.executableURL = TestEnvironment.executable(executable)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        if let environment { process.environment = environment }
        try process.run()
        group.enter()
        DispatchQueue.global().async { [self] in
            var pending = Data()
            while true {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0a) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    lock.withLock { lines.append((Date(), line)) }
                }
            }
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async { [self] in
            // In pieces, so a test can wait for a line on standard error while the capture runs.
            while true {
                let chunk = err.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                lock.withLock { errData.append(chunk) }
            }
            group.leave()
        }
    }

    var pid: Int32 { process.processIdentifier }
    var stdoutLines: [(time: Date, text: String)] { lock.withLock { lines } }

    /// The first stdout line containing `text`, waiting up to `timeout` seconds.
    func waitForLine(containing text: String, timeout: Double) -> (time: Date, text: String)? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let line = stdoutLines.first(where: { $0.text.contains(text) }) { return line }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    /// Waits for exit (at most `timeout` seconds, then SIGKILL) and returns status and output.
    func finish(timeout: Double = 60) -> (status: Int32, stdout: String, stderr: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        group.wait()
        return (process.terminationStatus, stdoutLines.map(\.text).joined(separator: "\n"),
                lock.withLock { String(decoding: errData, as: UTF8.self) })
    }

    var stderrSoFar: String { lock.withLock { String(decoding: errData, as: UTF8.self) } }
}

enum CommandCaptureHarness {
    static var capture: String { TestEnvironment.executable("capture").path }

    /// The sandbox id capture printed ("... in sandbox 1a2b3c (interface ...").
    static func sandboxID(fromStderr text: String) -> String? {
        guard let range = text.range(of: #"in sandbox [0-9a-f]{6} "#, options: .regularExpression) else { return nil }
        return String(text[range].dropFirst("in sandbox ".count).dropLast())
    }

    /// The sandbox of a running capture, from the registry.
    static func record(ownedBy pid: Int32, timeout: Double = 10) -> SandboxRecord? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let record = SandboxRegistry().records().first(where: { $0.ownerPID == pid && $0.childPID != nil }) {
                return record
            }
            usleep(50_000)
        } while Date() < deadline
        return nil
    }

    /// Everything of sandbox `id` still on the host: namespace, links, nft table, files, record.
    static func leftovers(of id: String) throws -> [String] {
        var found: [String] = []
        let identity = try SandboxIdentity(id: id, slot: 0)
        if try run("ip", ["netns", "list"]).stdoutText.contains(identity.namespace) { found.append("namespace \(identity.namespace)") }
        if try run("ip", ["link", "show", "dev", identity.hostInterface]).status == 0 { found.append("link \(identity.hostInterface)") }
        if try run("nft", ["list", "tables"]).stdoutText.contains(identity.nftTable) { found.append("nft table \(identity.nftTable)") }
        if FileManager.default.fileExists(atPath: identity.etcDirectory) { found.append(identity.etcDirectory) }
        let registry = SandboxRegistry()
        if registry.record(id: id) != nil { found.append("registry record \(id)") }
        let files = registry.directory.appendingPathComponent("\(id).files").path
        if FileManager.default.fileExists(atPath: files) { found.append(files) }
        return found
    }

    static func waitUntilGone(_ id: String, timeout: Double) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var left = try leftovers(of: id)
        while !left.isEmpty && Date() < deadline {
            usleep(100_000)
            left = try leftovers(of: id)
        }
        return left
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
}
