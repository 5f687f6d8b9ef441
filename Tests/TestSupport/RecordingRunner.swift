import Synchronization
import SystemSupport

/// Records every command instead of running it, answering with scripted results.
/// A response applies to the first command that starts with its prefix; anything else succeeds with no output.
public final class RecordingRunner: CommandRunner {
    public struct Response: Sendable {
        public var prefix: [String]
        public var result: CommandResult
        public init(prefix: [String], result: CommandResult) {
            self.prefix = prefix
            self.result = result
        }
    }

    private let state: Mutex<(commands: [[String]], responses: [Response])>
    private let handler: (@Sendable ([String]) -> CommandResult?)?

    /// `handler`, when given, is asked first and may answer any command (a stateful fake); `nil` falls back
    /// to the scripted responses.
    public init(responses: [Response] = [], handler: (@Sendable ([String]) -> CommandResult?)? = nil) {
        state = Mutex((commands: [], responses: responses))
        self.handler = handler
    }

    /// Every command run so far, in order.
    public var commands: [[String]] { state.withLock { $0.commands } }

    /// Commands that change something (everything except `show`, `nft list`, `iptables -C` and `modprobe -n`).
    public var changingCommands: [[String]] { commands.filter { !RecordingRunner.isQuery($0) } }

    public func respond(to prefix: [String], with result: CommandResult) {
        state.withLock { $0.responses.insert(Response(prefix: prefix, result: result), at: 0) }
    }

    public func run(_ arguments: [String]) throws -> CommandResult {
        state.withLock { $0.commands.append(arguments) }
        if let handler, let result = handler(arguments) { return result }
        return state.withLock { state in
            let match = state.responses.first { arguments.starts(with: $0.prefix) }
            return match?.result ?? CommandResult()
        }
    }

    /// Whether a command only reads state.
    public static func isQuery(_ arguments: [String]) -> Bool {
        arguments.contains("show") || (arguments.first == "modprobe" && arguments.contains("-n"))
            || (arguments.first == "nft" && arguments.dropFirst().first == "list")
            || (arguments.first?.hasSuffix("tables-nft") == true && arguments.contains("-C"))
    }
}
