import Foundation

/// What a finished program left behind.
public struct CommandResult: Sendable, Equatable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32 = 0, stdout: String = "", stderr: String = "") {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// A program exited with a non-zero status (or could not be started).
public struct CommandFailedError: Error, CustomStringConvertible, Equatable {
    public var arguments: [String]
    public var status: Int32
    public var stderr: String

    public init(arguments: [String], status: Int32, stderr: String) {
        self.arguments = arguments
        self.status = status
        self.stderr = stderr
    }

    public var description: String {
        let message = stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        return "`\(arguments.joined(separator: " "))` failed (exit \(status))" + (message.isEmpty ? "" : ": \(message)")
    }
}

/// A program started ahead of its input (`tc -batch -`): loaded and waiting, so that when the input is ready
/// only the work itself remains, not a process start.
public protocol PendingCommand: Sendable {
    /// The program and arguments as run.
    var arguments: [String] { get }
    /// Writes `input` to the program, closes its standard input and waits for it to end. Call once; an empty
    /// input lets a program that reads commands end having done nothing.
    func finish(input: String) throws -> CommandResult
}

/// Runs an external program given as an argument array (`["tc", "qdisc", "show"]`), never through a shell.
/// Tests record the exact commands without root through their own runner (TestSupport's `RecordingRunner`).
public protocol CommandRunner: Sendable {
    /// Runs the program and returns how it ended; throws only when it cannot be started.
    func run(_ arguments: [String]) throws -> CommandResult
    /// Starts the program with its standard input from a pipe, for `PendingCommand.finish`; nil when this
    /// runner cannot start programs ahead (the default: recording fakes), and the caller then uses `run`.
    func start(_ arguments: [String]) throws -> (any PendingCommand)?
}

extension CommandRunner {
    public func start(_ arguments: [String]) throws -> (any PendingCommand)? { nil }

    /// Runs the program and throws `CommandFailedError` unless it exits with status 0.
    @discardableResult
    public func check(_ arguments: [String]) throws -> CommandResult {
        let result = try run(arguments)
        guard result.status == 0 else {
            throw CommandFailedError(arguments: arguments, status: result.status, stderr: result.stderr)
        }
        return result
    }
}

/// Runs programs for real, looking the first argument up in PATH and the sbin directories.
public struct ProcessRunner: CommandRunner {
    public init() {}

    public func run(_ arguments: [String]) throws -> CommandResult {
        guard let program = arguments.first else {
            throw CommandFailedError(arguments: arguments, status: -1, stderr: "empty command")
        }
        guard let path = ProcessRunner.locate(program) else {
            throw CommandFailedError(arguments: arguments, status: 127,
                                     stderr: "\(program): not found in PATH, /usr/sbin or /sbin (install iproute2)")
        }
        do {
            let result = try ProcessSpawner.run([path] + arguments.dropFirst())
            return CommandResult(status: result.status.shellCode,
                                 stdout: String(decoding: result.stdout, as: UTF8.self),
                                 stderr: String(decoding: result.stderr, as: UTF8.self))
        } catch {
            throw CommandFailedError(arguments: arguments, status: -1, stderr: "\(error)")
        }
    }

    public func start(_ arguments: [String]) throws -> (any PendingCommand)? {
        guard let program = arguments.first, let path = ProcessRunner.locate(program) else { return nil }
        do {
            let child = try ProcessSpawner.spawn([path] + arguments.dropFirst(),
                                                 options: SpawnOptions(stdin: .pipe, stdout: .pipe, stderr: .pipe))
            return StartedProcess(arguments: arguments, child: child)
        } catch {
            throw CommandFailedError(arguments: arguments, status: -1, stderr: "\(error)")
        }
    }

    /// The absolute path of `program`, searching PATH and then /usr/sbin, /sbin, /usr/bin, /bin.
    public static func locate(_ program: String) -> String? {
        if program.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: program) ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + program
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A child of `ProcessRunner.start`. Finished at most once; if never finished, its input is closed when this goes
/// away, so the program (reading commands) ends having done nothing rather than waiting for ever.
final class StartedProcess: PendingCommand, @unchecked Sendable {
    let arguments: [String]
    private let child: SpawnedProcess
    private let lock = NSLock()
    private var finished = false

    init(arguments: [String], child: SpawnedProcess) {
        self.arguments = arguments
        self.child = child
    }

    func finish(input: String) throws -> CommandResult {
        let first = lock.withLock { () -> Bool in defer { finished = true }; return !finished }
        guard first else { throw CommandFailedError(arguments: arguments, status: -1, stderr: "already finished") }
        do {
            let result = try ProcessSpawner.finish(child, input: Array(input.utf8))
            return CommandResult(status: result.status.shellCode, stdout: String(decoding: result.stdout, as: UTF8.self),
                                 stderr: String(decoding: result.stderr, as: UTF8.self))
        } catch {
            throw CommandFailedError(arguments: arguments, status: -1, stderr: "\(error)")
        }
    }

    deinit {
        if !finished { _ = try? ProcessSpawner.finish(child, input: []) }
    }
}
