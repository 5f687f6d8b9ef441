import Foundation

/// Where things are when tests run, and what this machine allows.
public enum TestEnvironment {
    /// The package root, found from this file's location.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The project's own committed fixtures.
    public static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures")

    /// `../shared/fixtures/public` beside the checkout, when it exists.
    public static let publicFixtures: URL? = {
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/public")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// Built executables: `$TAPKIT_BIN_DIR` (set by Scripts/test) or the debug build folder.
    public static let binDirectory: URL = {
        if let dir = ProcessInfo.processInfo.environment["TAPKIT_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        return packageRoot.appendingPathComponent(".build/debug")
    }()

    public static func executable(_ name: String) -> URL { binDirectory.appendingPathComponent(name) }

    public static let isRoot: Bool = geteuid() == 0

    /// Whether a program is on PATH.
    public static func hasProgram(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}

/// The result of running a program to completion.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: Data
    public var stderr: Data
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs `executable` with `arguments` (never through a shell), feeding `input` on standard input.
@discardableResult
public func run(_ executable: String, _ arguments: [String], input: Data? = nil,
                environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable.hasPrefix("/") ? URL(fileURLWithPath: executable)
        : URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe(), inPipe = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
    try process.run()
    if let input {
        DispatchQueue.global().async {
            try? inPipe.fileHandleForWriting.write(contentsOf: input)
            try? inPipe.fileHandleForWriting.close()
        }
    }
    // Read both pipes concurrently so neither fills up and blocks the child.
    nonisolated(unsafe) var errData = Data()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, stdout: outData, stderr: errData)
}
