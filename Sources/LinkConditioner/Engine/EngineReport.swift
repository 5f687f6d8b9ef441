import Foundation

/// What the user-space engine says about itself, once a second, in `<netns>-<iface>.engine` beside the record:
/// `status` shows it (and whether its process still runs).
public struct EngineReport: Codable, Sendable, Equatable {
    /// The supervising `condition __engine` process.
    public var pid: Int32
    /// Packets held for a delay, let through at once (reordering), and dropped (correlated loss) so far.
    public var delayed: UInt64 = 0
    public var passed: UInt64 = 0
    public var dropped: UInt64 = 0
    public var error: String? = nil

    public init(pid: Int32, delayed: UInt64 = 0, passed: UInt64 = 0, dropped: UInt64 = 0, error: String? = nil) {
        self.pid = pid
        self.delayed = delayed
        self.passed = passed
        self.dropped = dropped
        self.error = error
    }
}
