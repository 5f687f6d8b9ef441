import Foundation
import SystemSupport

/// Runs a plan's consecutive `tc` commands as one `tc -batch FILE` process: one program start and one netlink
/// socket instead of one of each per command, so a switch changes the kernel within a few milliseconds rather
/// than over several process starts (each tens of milliseconds on a loaded or emulated machine).
///
/// tc stops a batch at its first failing line (no `-force`), so a failure leaves the lines before it applied,
/// exactly as a failure part-way through single commands does; the caller rolls back the same way. The failing
/// line is mapped back to its command, so the error reads as it would without batching.
public enum TCBatch {
    /// One step of a plan as it is run: a single command, or several `tc` commands in one batch.
    public enum Segment: Equatable, Sendable {
        case single([String])
        case batch([[String]])
    }

    /// Groups consecutive `tc` commands into batches; anything else (`ip link add ...`), and a `tc` command
    /// that cannot be written as a batch line, runs on its own. A batch of one is a single command.
    public static func segments(_ plan: [[String]]) -> [Segment] {
        var segments: [Segment] = []
        var pending: [[String]] = []
        func flush() {
            if pending.count == 1 { segments.append(.single(pending[0])) }
            else if !pending.isEmpty { segments.append(.batch(pending)) }
            pending = []
        }
        for command in plan {
            if line(command) != nil {
                pending.append(command)
            } else {
                flush()
                segments.append(.single(command))
            }
        }
        flush()
        return segments
    }

    /// The batch-file line for a `tc` command (its arguments after "tc"), or nil when the command is not a
    /// change tc's batch reader would read back unchanged: not `tc`, a global option (`-j`, `-n`), or an
    /// argument that is empty or holds whitespace, quotes, a backslash or `#` (tc cuts a line at `#`).
    public static func line(_ command: [String]) -> String? {
        guard command.first == "tc", command.count > 1, !command[1].hasPrefix("-") else { return nil }
        let arguments = command.dropFirst()
        let special: Set<Character> = [" ", "\t", "\n", "\r", "\"", "'", "\\", "#"]
        guard arguments.allSatisfy({ !$0.isEmpty && !$0.contains(where: special.contains) }) else { return nil }
        return arguments.joined(separator: " ")
    }

    /// The file's text for a batch.
    public static func text(_ commands: [[String]]) -> String {
        commands.compactMap(line).map { $0 + "\n" }.joined()
    }

    /// The 1-based line a failed `tc -batch` names ("Command failed FILE:N"), if it names one.
    public static func failedLine(stderr: String) -> Int? {
        guard let range = stderr.range(of: "Command failed ", options: .backwards) else { return nil }
        let rest = stderr[range.upperBound...].prefix { $0 != "\n" }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        return Int(rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// Whether every command of `plan` can go in one batch (so one `tc -batch -` started ahead can run it all).
    public static func isOneBatch(_ plan: [[String]]) -> Bool {
        !plan.isEmpty && plan.allSatisfy { line($0) != nil }
    }

    /// Starts `tc -batch -` reading from us, for a plan that is one batch: loaded and waiting, so that at the
    /// moment of the change only tc's netlink conversation remains. nil when the runner cannot start ahead.
    public static func start(runner: any CommandRunner) throws -> (any PendingCommand)? {
        try runner.start(["tc", "-batch", "-"])
    }

    /// Feeds `commands` (one batch) to a `tc -batch -` from `start` and waits for it, throwing as `run` does.
    public static func finish(_ pending: any PendingCommand, commands: [[String]]) throws {
        let result = try pending.finish(input: text(commands))
        try check(result, commands: commands, arguments: pending.arguments)
    }

    /// A failed batch as the failure of the command on the line tc names.
    private static func check(_ result: CommandResult, commands: [[String]], arguments: [String]) throws {
        guard result.status == 0 else {
            let failed = failedLine(stderr: result.stderr).flatMap { $0 >= 1 && $0 <= commands.count ? commands[$0 - 1] : nil }
            let message = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("Command failed ") }.joined(separator: "\n")
            throw CommandFailedError(arguments: failed ?? arguments, status: result.status,
                                     stderr: failed == nil ? result.stderr : message)
        }
    }

    /// Runs `plan` through `runner`, batching consecutive tc commands in `file` (written, run, removed).
    /// Throws `CommandFailedError` naming the command that failed, as running them one by one would.
    public static func run(_ plan: [[String]], runner: any CommandRunner, file: URL) throws {
        for segment in segments(plan) {
            switch segment {
            case .single(let command):
                try runner.check(command)
            case .batch(let commands):
                do {
                    try Data(text(commands).utf8).write(to: file, options: .atomic)
                } catch {
                    // Without a file to batch through, the commands still run, one process each.
                    for command in commands { try runner.check(command) }
                    continue
                }
                defer { try? FileManager.default.removeItem(at: file) }
                let arguments = ["tc", "-batch", file.path]
                try check(try runner.run(arguments), commands: commands, arguments: arguments)
            }
        }
    }
}
