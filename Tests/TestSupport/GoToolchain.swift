import Foundation

/// Debian's Go (`/usr/bin/go`, golang-go 1.19, installed by `Scripts/setup --test`) building small programs at test
/// time: the Go key source's tests need real Go binaries, plain and stripped, that no one checked in.
public enum GoToolchain {
    public static let path = "/usr/bin/go"
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: path) }
    public static let skipReason = "needs Debian's Go at /usr/bin/go (golang-go; Scripts/setup --test)"

    /// How to link: as `go build` does by default, or without symbols and DWARF (`-ldflags="-s -w"`).
    public enum Linking: String, Sendable, CaseIterable {
        case plain
        case stripped
    }

    /// Builds `source` (one `main` package file) into `directory/name`; returns the binary's path. The module cache
    /// and proxy are off: these programs use the standard library only.
    public static func build(source: String, name: String, linking: Linking, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("\(name).go")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent(name).path
        var arguments = ["build", "-o", output]
        if linking == .stripped { arguments += ["-ldflags=-s -w"] }
        arguments.append(file.path)
        var environment = ProcessInfo.processInfo.environment
        environment["GOPROXY"] = "off"
        environment["GOFLAGS"] = ""
        environment["CGO_ENABLED"] = "0"
        if environment["HOME"] == nil { environment["HOME"] = NSTemporaryDirectory() }
        let result = try run(path, arguments, environment: environment)
        guard result.status == 0 else { throw GoBuildFailed(output: result.stderrText) }
        return output
    }

    /// A symbol's address as `go tool nm` prints it: the oracle the ELF reader is checked against.
    public static func nmAddress(of symbol: String, in binary: String) throws -> UInt64? {
        let result = try run(path, ["tool", "nm", binary])
        for line in result.stdoutText.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2).map(String.init)
            if fields.count == 3, fields[2] == symbol { return UInt64(fields[0], radix: 16) }
        }
        return nil
    }

    public struct GoBuildFailed: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "go build failed: \(output)" }
    }
}
