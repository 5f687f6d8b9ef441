import Foundation

/// pcapng Decryption Secrets Blocks (block type 0x0000000A) holding TLS key logs (secrets type 0x544c534b, "TLSK"):
/// what `editcap --inject-secrets tls,KEYS` writes and Wireshark reads. libpcap skips these blocks, so we scan the
/// file's blocks ourselves. https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html section 4.7
public enum PcapngSecrets {
    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let decryptionSecrets: UInt32 = 0x0000_000A
    static let tlsKeyLog: UInt32 = 0x544C_534B
    /// Blocks looked at, at most: a bound on the work for huge files (DSBs come before the packets that need them,
    /// and writers put them near the start).
    public static let maxBlocksScanned = 4_000_000
    /// Largest secrets block read (a key log of a few thousand sessions is well under this).
    public static let maxSecretsLength = 64 << 20

    /// Something that stopped part of the scan; never fatal. `offset`: where the block starts in the file.
    public enum Warning: Sendable, Hashable {
        /// A block length that cannot be right: the scan stops there.
        case badBlockLength(offset: UInt64, length: UInt64)
        /// A secrets block too long to read, or longer than its block: skipped.
        case secretsTooLong(offset: UInt64, secretsLength: Int, blockLength: UInt64)
        /// A key log line in a secrets block that was not understood.
        case keyLogLine(offset: UInt64, TLSKeyLog.Warning)
        /// `maxBlocksScanned` blocks were looked at; the scan stopped at `offset`.
        case stoppedScanning(offset: UInt64)
    }

    /// The TLS key logs embedded in a pcapng file, merged; nil when the file is not pcapng or holds none.
    /// Problems (a truncated block, a limit hit) come back as warnings, never as errors: the packets still read.
    public static func read(path: String, warnings: inout [Warning]) -> TLSKeyLog? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var offset: UInt64 = 0
        var bigEndian = false
        var found: TLSKeyLog?
        var blocks = 0
        while true {
            try? handle.seek(toOffset: offset)
            guard let header = try? handle.read(upToCount: 12), header.count >= 8 else { break }
            let bytes = [UInt8](header)
            let rawType = word(bytes, 0, bigEndian: false)
            if blocks == 0 && rawType != sectionHeader { return nil }  // not pcapng
            if rawType == sectionHeader {
                guard bytes.count >= 12 else { break }
                bigEndian = word(bytes, 8, bigEndian: false) != 0x1A2B_3C4D
            }
            let type = word(bytes, 0, bigEndian: bigEndian)
            let length = UInt64(word(bytes, 4, bigEndian: bigEndian))
            guard length >= 12, length % 4 == 0 else {
                warnings.append(.badBlockLength(offset: offset, length: length))
                break
            }
            if type == decryptionSecrets {
                try? handle.seek(toOffset: offset + 8)
                guard let body = try? handle.read(upToCount: 8), body.count == 8 else { break }
                let fields = [UInt8](body)
                let secretsType = word(fields, 0, bigEndian: bigEndian)
                let secretsLength = Int(word(fields, 4, bigEndian: bigEndian))
                if secretsType == tlsKeyLog {
                    guard secretsLength <= maxSecretsLength, UInt64(secretsLength) + 20 <= length else {
                        warnings.append(.secretsTooLong(offset: offset, secretsLength: secretsLength, blockLength: length))
                        offset += length
                        continue
                    }
                    if let text = try? handle.read(upToCount: secretsLength), text.count == secretsLength {
                        var log = found ?? TLSKeyLog()
                        let lineWarnings = log.add(text: String(decoding: text, as: UTF8.self))
                        warnings += lineWarnings.map { .keyLogLine(offset: offset, $0) }
                        found = log
                    }
                }
            }
            offset += length
            blocks += 1
            if blocks >= maxBlocksScanned {
                warnings.append(.stoppedScanning(offset: offset))
                break
            }
        }
        return found
    }

    private static func word(_ bytes: [UInt8], _ at: Int, bigEndian: Bool) -> UInt32 {
        let value = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        return bigEndian ? value.byteSwapped : value
    }

    /// Rewrites a pcapng file that `-w` streamed (Decryption Secrets Blocks written as keys became known, maybe after
    /// some packets that needed them) so that one block holding all of `keyLog` comes first, right after the
    /// Section Header Block, and the others are left out: every packet then has its keys before it, for readers
    /// that decrypt in one pass (tshark). Written beside the file and renamed over it, so a failure leaves it as it
    /// was.
    public static func gatherAtFront(path: String, keyLog: String) throws {
        guard let input = FileHandle(forReadingAtPath: path) else {
            throw TLSKeyLogError(path: path, reason: "cannot be read back to gather the key log at its start")
        }
        defer { try? input.close() }
        func readBlock() throws -> [UInt8]? {
            guard let header = try input.read(upToCount: 8), header.count == 8 else { return nil }
            let length = Int(word([UInt8](header), 4, bigEndian: false))
            guard length >= 12, length % 4 == 0, length <= 1 << 26,
                  let rest = try input.read(upToCount: length - 8), rest.count == length - 8 else {
                throw TLSKeyLogError(path: path, reason: "is not a complete pcapng file as written by -w (a block is cut short)")
            }
            return [UInt8](header) + [UInt8](rest)
        }
        guard let section = try readBlock(), word(section, 0, bigEndian: false) == sectionHeader,
              word(section, 8, bigEndian: false) == 0x1A2B_3C4D else {
            throw TLSKeyLogError(path: path, reason: "is not a little-endian pcapng file as written by -w")
        }
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
              let output = FileHandle(forWritingAtPath: temporary) else {
            throw TLSKeyLogError(path: temporary, reason: "cannot be created")
        }
        var out = section
        func flushIfBig(_ force: Bool = false) throws {
            if force || out.count >= 1 << 20 { try output.write(contentsOf: out); out.removeAll(keepingCapacity: true) }
        }
        do {
            let secrets = [UInt8](keyLog.utf8)
            if !secrets.isEmpty { block(decryptionSecrets, into: &out) { body in
                append32(tlsKeyLog, &body); append32(UInt32(secrets.count), &body)
                body += secrets
                body += [UInt8](repeating: 0, count: (4 - secrets.count % 4) % 4)
            } }
            while let next = try readBlock() {
                if word(next, 0, bigEndian: false) != decryptionSecrets { out += next }
                try flushIfBig()
            }
            try flushIfBig(true)
            try output.close()
            guard rename(temporary, path) == 0 else {
                throw TLSKeyLogError(path: path, reason: "could not be replaced (rename: errno \(errno))")
            }
        } catch {
            try? output.close()
            unlink(temporary)
            throw error
        }
    }

    private static func block(_ type: UInt32, into out: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
        var content: [UInt8] = []
        body(&content)
        let total = UInt32(12 + content.count)
        append32(type, &out); append32(total, &out)
        out += content
        append32(total, &out)
    }

    private static func append32(_ value: UInt32, _ out: inout [UInt8]) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }
}

/// The one place a scan warning becomes words (the capture executable prints them).
extension PcapngSecrets.Warning: CustomStringConvertible {
    public var description: String {
        switch self {
        case .badBlockLength(let offset, let length):
            return "pcapng block at offset \(offset) has length \(length) (needs a multiple of 4, at least 12); "
                + "stopped looking for decryption secrets"
        case .secretsTooLong(let offset, let secretsLength, let blockLength):
            return "pcapng decryption secrets block at offset \(offset): \(secretsLength) bytes of secrets (at most "
                + "\(PcapngSecrets.maxSecretsLength) read, block is \(blockLength) bytes); skipped"
        case .keyLogLine(let offset, let warning):
            return "pcapng decryption secrets block at offset \(offset): \(warning)"
        case .stoppedScanning(let offset):
            return "stopped looking for pcapng decryption secrets after \(PcapngSecrets.maxBlocksScanned) blocks "
                + "(offset \(offset))"
        }
    }
}
