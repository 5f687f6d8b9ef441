import Foundation

/// What /proc/meminfo says about memory the kernel can still hand out.
public enum MemoryInfo {
    /// `MemAvailable` in bytes from the text of /proc/meminfo (`MemAvailable:   23456789 kB`), nil when absent.
    public static func availableBytes(meminfo: String) -> Int? {
        for line in meminfo.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            let words = line.split(separator: " ")
            guard words.count >= 2, let value = Int(words[1]) else { return nil }
            return words.count >= 3 && words[2] == "kB" ? value * 1024 : value
        }
        return nil
    }

    /// This machine's `MemAvailable`, nil when /proc/meminfo cannot be read.
    public static func availableBytes() -> Int? {
        (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)).flatMap { availableBytes(meminfo: $0) }
    }
}
