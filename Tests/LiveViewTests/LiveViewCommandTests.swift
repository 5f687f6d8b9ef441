import Foundation
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// `capture -r FILE --ui`: the real executable, its printed URL, its HAR download against `--har`'s file, and its
/// stop on SIGINT.
@Suite(.serialized) struct LiveViewCommandTests {
    @Test(arguments: ["http-keepalive.pcap", "http-chunked-gzip.pcap", "http-binary-300k.pcap"])
    func harDownloadEqualsHARFile(fixture: String) throws {
        let file = TestEnvironment.fixtures.appendingPathComponent(fixture).path
        let harFile = FileManager.default.temporaryDirectory.appendingPathComponent("w23s-\(UUID()).har").path
        defer { try? FileManager.default.removeItem(atPath: harFile) }
        let written = try run(TestEnvironment.executable("capture").path, ["-r", file, "--http", "--har", harFile])
        #expect(written.status == 0)
        let running = try RunningCapture(["-r", file, "--ui", "127.0.0.1:0"])
        defer { running.kill() }
        let url = try running.url()
        let client = RawHTTP(port: url.port)
        let har = try client.request("/api/har", token: url.token)
        #expect(har.status == 200)
        #expect(har.header("Content-Disposition") == "attachment; filename=\"capture.har\"")
        #expect(har.body == Array(try Data(contentsOf: URL(fileURLWithPath: harFile))))
        // Terminal output as without --ui.
        #expect(try client.request("/api/info", token: url.token).text.contains("\"ended\":true"))
        try running.waitFor("live view: still serving")
        running.interrupt()
        #expect(running.waitForExit(seconds: 5) == 0)
        let plain = try run(TestEnvironment.executable("capture").path, ["-r", file, "--http"])
        #expect(running.stdout == plain.stdout)
    }
}

/// The executable running in the background, its output gathered; stopped with SIGKILL if it outstays a test.
final class RunningCapture: @unchecked Sendable {
    let process = Process()
    private let output = NIOLockedValueBox((out: Data(), err: Data()))

    init(_ arguments: [String]) throws {
        process.executableURL = TestEnvironment.executable("capture")
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.withLockedValue { $0.out += data }
        }
        err.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.withLockedValue { $0.err += data }
        }
        try process.run()
    }

    var stdout: Data { output.withLockedValue { $0.out } }
    var stderr: String { String(decoding: output.withLockedValue { $0.err }, as: UTF8.self) }

    /// The port and token of the printed `live view: http://127.0.0.1:PORT/?token=TOKEN` (waits up to 10 s).
    func url(seconds: Double = 10) throws -> (port: Int, token: String) {
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
    func waitFor(_ text: String, seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !stderr.contains(text) {
            if Date() > deadline { throw RawHTTP.Failure(description: "no \"\(text)\" within \(seconds) s: \(stderr)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func interrupt() { if process.isRunning { Glibc.kill(process.processIdentifier, SIGINT) } }

    /// The exit status, or nil (and SIGKILL) when the process is still running after `seconds`.
    func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill()
            return nil
        }
        Thread.sleep(forTimeInterval: 0.1)  // the last output
        return process.terminationStatus
    }

    func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
