import Foundation
import LinkConditioner
import Sandbox
import TestSupport

/// Runs `condition` and local servers for the sandbox tests, and checks what a sandbox leaves behind.
enum SandboxHarness {
    static var condition: String { TestEnvironment.executable("condition").path }
    static var capture: String { TestEnvironment.executable("capture").path }

    /// Whether the `capture` built next to `condition` can write pcaps (it is another engineer's part).
    static let captureWrites: Bool = {
        guard FileManager.default.isExecutableFile(atPath: capture),
              let help = try? run(capture, ["--help"]) else { return false }
        return help.status == 0 && help.stdoutText.contains("-w")
    }()

    /// A directory with one profile file per (name, downlink kbit, uplink kbit).
    static func profileDirectory(_ profiles: [(String, Int, Int)]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sbx-profiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, down, up) in profiles {
            let json = #"{"name": "\#(name)", "downlink": {"bandwidthKbit": \#(down)}, "uplink": {"bandwidthKbit": \#(up)}}"#
            try Data(json.utf8).write(to: directory.appendingPathComponent("\(Profile.lookupKey(name)).json"))
        }
        return directory
    }

    /// `condition run` started in the background, its output collected.
    final class RunningCondition: @unchecked Sendable {
        let process = Process()
        private let out = Pipe(), err = Pipe()
        private var outData = Data(), errData = Data()
        private let group = DispatchGroup()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: SandboxHarness.condition)
            process.arguments = arguments
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            group.enter()
            DispatchQueue.global().async { [self] in
                outData = out.fileHandleForReading.readDataToEndOfFile()
                group.leave()
            }
            group.enter()
            DispatchQueue.global().async { [self] in
                errData = err.fileHandleForReading.readDataToEndOfFile()
                group.leave()
            }
        }

        var pid: Int32 { process.processIdentifier }

        /// Waits for exit (at most `timeout` seconds, then kills it) and returns status and output.
        func finish(timeout: Double = 60) -> (status: Int32, stdout: String, stderr: String) {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
            group.wait()
            return (process.terminationStatus, String(decoding: outData, as: UTF8.self),
                    String(decoding: errData, as: UTF8.self))
        }

        /// The registry record of this run's sandbox, once it has one with the command started.
        func waitForRecord(timeout: Double = 15) -> SandboxRecord? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let record = SandboxRegistry().records().first(where: { $0.ownerPID == pid && $0.childPID != nil }) {
                    return record
                }
                usleep(50_000)
            }
            return nil
        }
    }

    /// The sandbox id a finished run printed ("sandbox 1a2b3c: interface tk-1a2b3c ...").
    static func sandboxID(fromStderr text: String) -> String? {
        guard let range = text.range(of: #"sandbox [0-9a-f]{6}:"#, options: .regularExpression) else { return nil }
        return String(text[range].dropFirst("sandbox ".count).dropLast())
    }

    /// Everything of sandbox `id` still present on the host; empty when it was removed completely.
    static func leftovers(of id: String) throws -> [String] {
        var found: [String] = []
        let identity = try SandboxIdentity(id: id, slot: 0)
        if try run("ip", ["netns", "list"]).stdoutText.contains(identity.namespace) { found.append("namespace \(identity.namespace)") }
        if try run("ip", ["link", "show", "dev", identity.hostInterface]).status == 0 { found.append("link \(identity.hostInterface)") }
        if try run("tc", ["qdisc", "show", "dev", identity.hostInterface]).stdoutText.contains("htb") {
            found.append("qdisc on \(identity.hostInterface)")
        }
        if try run("nft", ["list", "tables"]).stdoutText.contains(identity.nftTable) { found.append("nft table \(identity.nftTable)") }
        if FileManager.default.fileExists(atPath: identity.etcDirectory) { found.append(identity.etcDirectory) }
        if SandboxRegistry().record(id: id) != nil { found.append("registry record \(id)") }
        if FileManager.default.fileExists(atPath: SandboxRegistry().engineReportFile(id: id).path) { found.append("engine report \(id)") }
        if !processes(withCommandLine: [SandboxEngine.commandName, "--sandbox", id]).isEmpty { found.append("engine process of \(id)") }
        let addresses = try run("ip", ["-o", "addr", "show"]).stdoutText
        if addresses.contains(identity.hostInterface) { found.append("address on \(identity.hostInterface)") }
        return found
    }

    /// Waits until `leftovers(of:)` is empty, or `timeout` passes; returns what is left.
    static func waitUntilGone(_ id: String, timeout: Double) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var left = try leftovers(of: id)
        while !left.isEmpty && Date() < deadline {
            usleep(100_000)
            left = try leftovers(of: id)
        }
        return left
    }

    /// Pids whose argument list contains `words` in order, adjacent.
    static func processes(withCommandLine words: [String]) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.indices.contains { arguments[$0...].starts(with: words) }
        }
    }

    static func processExists(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
    }
}
