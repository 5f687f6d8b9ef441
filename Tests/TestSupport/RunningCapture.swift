import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The executable running in the background, its output gathered; stopped with SIGKILL if it outstays a test.
public final class RunningCapture: @unchecked Sendable {
    public let process = Process()
    private let lock = NSLock()
    private var out = Data(), err = Data()

    /// `environment`: added to this process's own.
    public init(_ arguments: [String], executable: String = "capture", environment: [String: String] = [:]) throws {
        process.executableURL = TestEnvironment.executable(executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            lock.withLock { self.out += data }
        }
        err.fileHandleForReading.readabilityHandler = { [self] handle in
            let data = handle.availableData
            lock.withLock { self.err += data }
        }
        try process.run()
    }

    public var stdout: Data { lock.withLock { out } }
    public var stderr: String { String(decoding: lock.withLock { err }, as: UTF8.self) }

    /// The port and token of the printed `live view: http://127.0.0.1:PORT/?token=TOKEN` (waits up to 10 s).
    public func url(seconds: Double = 10) throws -> (port: Int, token: String) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("live view: http://") }),
               let colon = line.range(of: ":", options: .backwards, range: line.range(of: "//")!.upperBound..<line.endIndex),
               let slash = line[colon.upperBound...].firstIndex(of: "/"),
               let port = Int(line[colon.upperBound..<slash]),
               let token = line.components(separatedBy: "token=").last {
                return (port, token)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw RawHTTP.Failure(description: "no live view URL within \(seconds) s; standard error: \(stderr)")
    }

    /// Waits (up to `seconds`) until standard error holds `text`.
    public func waitFor(_ text: String, seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !stderr.contains(text) {
            if Date() > deadline { throw RawHTTP.Failure(description: "no \"\(text)\" within \(seconds) s: \(stderr)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    public func interrupt() { if process.isRunning { Glibc.kill(process.processIdentifier, SIGINT) } }

    /// The exit status, or nil (and SIGKILL) when the process is still running after `seconds`.
    public func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill()
            return nil
        }
        Thread.sleep(forTimeInterval: 0.1)  // the last output
        return process.terminationStatus
    }

    public func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
