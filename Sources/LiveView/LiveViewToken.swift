/// The secret in the URL the executable prints: 128 bits from the system's random generator (getrandom), as 32 hex
/// digits, new for every run. Anyone who can reach the port but was not shown the URL cannot guess it.
public struct LiveViewToken: Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init() {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        description = Self.hex(high) + Self.hex(low)
    }

    /// A fixed token, for tests.
    package init(fixed: String) { description = fixed }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Compares in time that does not depend on where the first difference is, so the answer's timing tells an
    /// attacker nothing about a guess's prefix.
    public func matches<Bytes: Collection<UInt8>>(_ candidate: Bytes) -> Bool {
        let expected = Array(description.utf8)
        guard candidate.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (index, byte) in candidate.enumerated() { difference |= byte ^ expected[index] }
        return difference == 0
    }

    public func matches(_ candidate: String) -> Bool { matches(Array(candidate.utf8)) }
}
