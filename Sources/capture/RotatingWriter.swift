import Foundation
import PacketCapture
import TLS

/// `-w FILE` with tcpdump's `-C`/`-G`/`-W` rotation and naming (tcpdump.c's MakeFilename):
/// - `-C N`: a new file once the current one holds more than N million bytes; FILE, FILE1, FILE2, ...
/// - `-W N` with `-C`: at most N files, numbered with zero-padded digits (FILE0 ... FILE9 for -W 10), reused in turn.
/// - `-G S`: a new file every S seconds (wall clock); FILE is a strftime(3) pattern, formatted when each file opens.
/// - `-W N` with `-G`: stop after N files.
/// `-U` flushes after every packet. A pattern ending in `.pcapng` makes every file pcapng, each holding the key log
/// lines known when it opened and those that become known while it is written (Decryption Secrets Blocks).
final class RotatingWriter {
    struct Limits {
        var megabytes: Int?
        var seconds: Int?
        var fileCount: Int?
        var packetBuffered = false
    }

    private let handle: CaptureHandle
    private let pattern: String
    private let limits: Limits
    private var writer: any PacketFileWriter
    private var secrets: SecretsToEmbed?
    private var counter = 0
    private var filesOpened = 1
    private var openedAt: time_t
    /// Set when `-G` with `-W` has made its last file: the capture stops.
    private(set) var finished = false

    init(handle: CaptureHandle, pattern: String, limits: Limits, secrets: SecretsToEmbed?) throws {
        self.handle = handle
        self.pattern = pattern
        self.limits = limits
        self.secrets = secrets
        openedAt = time(nil)
        writer = try Self.open(handle, Self.fileName(pattern: pattern, time: openedAt, counter: 0, limits: limits),
                               pcapng: pattern.hasSuffix(".pcapng"), secrets: &self.secrets)
    }

    private static func open(_ handle: CaptureHandle, _ path: String, pcapng: Bool,
                             secrets: inout SecretsToEmbed?) throws -> any PacketFileWriter {
        let writer = try handle.makeWriter(path: path, pcapng: pcapng)
        if secrets != nil { writer.writeSecrets(secrets!.allLines()) }
        return writer
    }

    /// tcpdump's MakeFilename: the strftime'd pattern (with -G), then the counter (with -C), zero-padded to the
    /// digits of `-W` - 1.
    static func fileName(pattern: String, time: time_t, counter: Int, limits: Limits) -> String {
        var name = pattern
        if limits.seconds != nil {
            var seconds = time
            var parts = tm()
            localtime_r(&seconds, &parts)
            var buffer = [CChar](repeating: 0, count: 4096)
            if strftime(&buffer, buffer.count, pattern, &parts) > 0 {
                name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        guard limits.megabytes != nil else { return name }
        var width = 0
        if let count = limits.fileCount {
            var rest = count - 1
            while rest > 0 { width += 1; rest /= 10 }
        }
        if counter == 0 && width == 0 { return name }
        let digits = String(counter)
        return name + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    func write(_ packet: CapturedPacket) throws {
        if let seconds = limits.seconds {
            let now = time(nil)
            if now - openedAt >= seconds {
                if let count = limits.fileCount, filesOpened >= count {
                    finished = true
                    handle.stop()
                    return
                }
                openedAt = now
                counter = 0
                try reopen()
            }
        }
        if let megabytes = limits.megabytes, writer.bytesWritten > Int64(megabytes) * 1_000_000 {
            counter += 1
            if let count = limits.fileCount, counter >= count { counter = 0 }
            try reopen()
        }
        if secrets != nil, let lines = secrets!.newLines() { writer.writeSecrets(lines) }
        writer.write(packet)
        if limits.packetBuffered { try writer.flush() }
    }

    private func reopen() throws {
        try writer.flush()
        writer = try Self.open(handle, Self.fileName(pattern: pattern, time: openedAt, counter: counter, limits: limits),
                               pcapng: pattern.hasSuffix(".pcapng"), secrets: &secrets)
        filesOpened += 1
    }

    func flush() throws { try writer.flush() }
}
