import Foundation
import Testing
import TestSupport

/// `--threads 2` moves everything after TCP reassembly to a second thread; what it writes must be byte for byte
/// what one thread writes: standard output, standard error and the HAR file, on every capture the project has.
/// Each capture also runs with a hand-over after every packet, so batch boundaries fall everywhere, and with every
/// other connection decoded on the reading thread, so the two decoders' outputs interleave.
@Suite("--http output is the same on one thread and two",
       .enabled(if: FileManager.default.isExecutableFile(atPath: captureBinary), "capture is not built (swift build)"))
struct ThreadsConformanceTests {
    /// Everything an `--http` run wrote.
    struct Written: Equatable {
        var status: Int32
        var stdout: Data
        var stderr: String
        var har: Data?
    }

    /// The fixture's key log beside it (`name.keys`), for the TLS captures.
    static func keyLog(for path: String) -> String? {
        let keys = (path as NSString).deletingPathExtension + ".keys"
        return FileManager.default.fileExists(atPath: keys) ? keys : nil
    }

    /// `everyPacket`: hand over after every packet; `everyOther`: the reading thread decodes every other
    /// connection itself (rather than only when the worker falls behind, which small captures never make it).
    static func run(_ path: String, _ view: [String], threads: Int, everyPacket: Bool = false,
                    everyOther: Bool = false) throws -> Written {
        let har = view.contains("--json") ? nil : temporaryPath(".har")
        defer { if let har { try? FileManager.default.removeItem(atPath: har) } }
        var arguments = ["-r", path, "--http", "--threads", String(threads)] + view
        if let har { arguments += ["--har", har] }
        if let keys = keyLog(for: path) { arguments += ["--keylog", keys] }
        var environment = ["TZ": "UTC", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        if everyPacket { environment["TAPKIT_PIPELINE_EVERY_PACKET"] = "1" }
        if everyOther { environment["TAPKIT_PIPELINE_SHARE"] = "every-other" }
        let result = try TestSupport.run(captureBinary, arguments, environment: environment)
        return Written(status: result.status, stdout: result.stdout, stderr: result.stderrText,
                       har: try har.map { try Data(contentsOf: URL(fileURLWithPath: $0)) })
    }

    @Test("text view with bodies (-v) and HAR", arguments: conformanceFixturePaths)
    func textAndHAR(path: String) throws {
        try compare(path, ["-v"])
    }

    @Test("NDJSON (--json)", arguments: conformanceFixturePaths)
    func json(path: String) throws {
        try compare(path, ["--json"])
    }

    private func compare(_ path: String, _ view: [String]) throws {
        let one = try Self.run(path, view, threads: 1)
        let two = try Self.run(path, view, threads: 2)
        let twoEveryPacket = try Self.run(path, view, threads: 2, everyPacket: true)
        let twoShared = try Self.run(path, view, threads: 2, everyPacket: true, everyOther: true)
        #expect(two == one, "\(path) \(view): --threads 2 differs from --threads 1")
        #expect(twoEveryPacket == one, "\(path) \(view): --threads 2 handing over every packet differs from --threads 1")
        #expect(twoShared == one,
                "\(path) \(view): --threads 2 decoding every other connection on the reading thread differs from --threads 1")
    }

    @Test("--threads takes 1 or 2, and only with --http")
    func threadsValidation() throws {
        let sample = TestEnvironment.fixtures.appendingPathComponent("http-sample.pcap").path
        let three = try capture(["-r", sample, "--http", "--threads", "3"])
        #expect(three.status == 64)
        #expect(three.stderrText.contains("--threads 3: give 1"))
        let withoutHTTP = try capture(["-r", sample, "--threads", "2"])
        #expect(withoutHTTP.status == 64)
        #expect(withoutHTTP.stderrText.contains("--threads only applies to the HTTP view"))
    }
}
