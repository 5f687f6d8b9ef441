#if canImport(Glibc)
import Glibc
#endif

/// What went wrong opening, filtering, reading or writing a capture, phrased for the user.
public enum CaptureError: Error, Sendable, CustomStringConvertible {
    case openFailed(source: String, message: String)
    /// No permission to capture on a live interface.
    case permissionDenied(interface: String, message: String)
    case noSuchDevice(interface: String, message: String)
    case badFilter(expression: String, message: String)
    /// Reading stopped at packet `packetIndex` (1-based) whose record starts at `byteOffset`, when known.
    case readFailed(packetIndex: Int, byteOffset: Int64?, message: String)
    case writeFailed(path: String, message: String)
    case liveFailed(interface: String, message: String)

    public var description: String {
        switch self {
        case .openFailed(let source, let message):
            return "cannot read capture \(source == "-" ? "from standard input" : "'\(source)'"): \(message)"
        case .permissionDenied(let interface, let message):
            let binary = CaptureError.executablePath()
            return """
                no permission to capture on \(interface): \(message)
                Run as root (sudo \(binary) ...), or grant the capture capabilities once:
                  sudo setcap cap_net_raw,cap_net_admin=eip \(binary)
                """
        case .noSuchDevice(let interface, let message):
            return "no such interface '\(interface)': \(message) (list interfaces with: capture -D)"
        case .badFilter(let expression, let message):
            return "bad filter expression '\(expression)': \(message)"
        case .readFailed(let index, let offset, let message):
            let at = offset.map { "byte offset \($0)" } ?? "an unknown byte offset"
            return "capture file broken at packet \(index) (\(at)): \(message)"
        case .writeFailed(let path, let message):
            // libpcap's message repeats the path ("PATH: reason"); say it once.
            let reason = message.hasPrefix(path + ": ") ? String(message.dropFirst(path.count + 2)) : message
            return "cannot write \(path): \(reason)"
        case .liveFailed(let interface, let message):
            return "cannot capture on \(interface): \(message)"
        }
    }

    /// The real path of the running program, for the setcap hint.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first ?? "capture" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
