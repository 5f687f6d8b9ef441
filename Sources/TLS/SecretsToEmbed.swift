/// The key log lines a pcapng file being written does not hold yet: `-w FILE.pcapng` writes them in a Decryption
/// Secrets Block as they become known, before the packets that follow. Its own key source (not the decrypting
/// layer's, which may run on another thread) rereads a followed key log at most every `recheckInterval`.
public struct SecretsToEmbed {
    private let keys: TLSKeySource
    private var written: Set<String> = []
    private var generationSeen = -1

    public init(keys: TLSKeySource) { self.keys = keys }

    /// Lines known now and not yet handed out, as one block's text; nil when there are none.
    public mutating func newLines() -> [UInt8]? {
        keys.rereadIfDue()
        guard keys.generation != generationSeen else { return nil }
        generationSeen = keys.generation
        let text = keys.keyLog.nssText
        var fresh: [UInt8] = []
        for line in text.split(separator: "\n") where written.insert(String(line)).inserted {
            fresh += line.utf8
            fresh.append(0x0A)
        }
        return fresh.isEmpty ? nil : fresh
    }

    /// Every line known now (for a new file: a rotated file holds its own keys), reading the key log first.
    public mutating func allLines() -> [UInt8] {
        keys.rereadNow()
        _ = newLines()
        return Array(keys.keyLog.nssText.utf8)
    }

    /// Every line known at the end, after one last read of a followed key log.
    public func finalText() -> String {
        keys.rereadNow()
        return keys.keyLog.nssText
    }
}
