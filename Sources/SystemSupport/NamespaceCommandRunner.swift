/// Runs commands inside a named network namespace (`ip netns add NAME`) without this process entering it:
/// `tc ...` becomes `tc -n NAME ...`, `ip ...` becomes `ip -n NAME ...`, anything else
/// `ip netns exec NAME ...`. Useful for tests and for conditioning a sandbox's namespace from outside.
public struct NamespaceCommandRunner: CommandRunner {
    public let namespace: String
    public let base: any CommandRunner

    public init(namespace: String, base: any CommandRunner = ProcessRunner()) {
        self.namespace = namespace
        self.base = base
    }

    public func translate(_ arguments: [String]) -> [String] {
        guard let program = arguments.first else { return arguments }
        switch program {
        case "tc", "ip": return [program, "-n", namespace] + arguments.dropFirst()
        default: return ["ip", "netns", "exec", namespace] + arguments
        }
    }

    public func run(_ arguments: [String]) throws -> CommandResult {
        try base.run(translate(arguments))
    }

    public func start(_ arguments: [String]) throws -> (any PendingCommand)? {
        try base.start(translate(arguments))
    }
}

/// Runs every command inside the network namespace behind a file (`/proc/PID/ns/net`) with
/// `nsenter --net=FILE`, for namespaces that have no name in `ip netns`.
public struct NamespaceFileCommandRunner: CommandRunner {
    public let namespaceFile: String
    public let base: any CommandRunner

    public init(namespaceFile: String, base: any CommandRunner = ProcessRunner()) {
        self.namespaceFile = namespaceFile
        self.base = base
    }

    public func translate(_ arguments: [String]) -> [String] {
        ["nsenter", "--net=\(namespaceFile)", "--"] + arguments
    }

    public func run(_ arguments: [String]) throws -> CommandResult {
        try base.run(translate(arguments))
    }

    public func start(_ arguments: [String]) throws -> (any PendingCommand)? {
        try base.start(translate(arguments))
    }
}
