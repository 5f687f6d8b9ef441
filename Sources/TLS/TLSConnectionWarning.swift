import FlowReassembly

/// What the TLS layer tells about a connection's records: those it could not decrypt and why. Worded here only.
public enum TLSConnectionWarning: ConnectionWarning {
    /// Records of one direction not decrypted because the key log has no key for the session.
    case recordsWithoutKey(StreamDirection, records: Int, bytes: Int, clientRandom: String)
    /// Records of one direction not decrypted because the ServerHello (cipher, version) was never seen.
    case recordsWithoutServerHello(StreamDirection, records: Int)
    /// Records of one direction not decrypted because their key was not in the followed key log within the bound
    /// (`TLSDecryptionLimits.keyWait`, seconds) after they began waiting.
    case recordsAfterKeyWait(StreamDirection, records: Int, bytes: Int, clientRandom: String, bound: Double)
    /// The key of a connection that stopped waiting at the bound was in the key log by the end of the capture: it
    /// was logged, only too late for the bound (seconds).
    case keyLoggedTooLate(clientRandom: String, bound: Double)
    /// Records held for a key or the ServerHello passed a limit (`HoldLimit`).
    case holdLimitPassed(HoldLimit, waitingForServerHello: Bool, clientRandom: String)
    /// Bytes of one direction never captured: record boundaries are lost, so the rest is not decrypted.
    case streamLost(StreamDirection, length: Int, offset: Int)
    /// Bytes where a record header should be are not one; the rest of the direction is not decrypted.
    case notARecord(StreamDirection, offset: Int, type: UInt8, version: UInt16, length: Int, maxLength: Int)
    /// A record's authentication tag or MAC did not verify.
    case authenticationFailed(StreamDirection, offset: Int, length: Int)
    /// A record decrypted but its contents were not well formed.
    case malformedRecord(StreamDirection, offset: Int, reason: MalformedRecord)
    /// A key log line that was not understood.
    case keyLog(TLSKeyLog.Warning)

    public enum HoldLimit: Sendable, Hashable {
        case perConnection(bytes: Int)
        case inAll(bytes: Int)
        /// The spill file's bound (`TLSDecryptionLimits.maxSpilledBytes`).
        case onDisk(bytes: Int)
    }

    /// Seconds as a person writes them: "2 s", "0.5 s".
    static func words(seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    public var description: String {
        switch self {
        case .recordsWithoutKey(let direction, let records, let bytes, let random):
            "\(records) TLS \(direction.label) record(s) (\(bytes) bytes) not decrypted: no key logged for client "
                + "random \(random)"
        case .recordsAfterKeyWait(let direction, let records, let bytes, let random, let bound):
            "\(records) TLS \(direction.label) record(s) (\(bytes) bytes) not decrypted: no key for client random "
                + "\(random) was in the key log within \(Self.words(seconds: bound)) of the records that waited for it"
        case .keyLoggedTooLate(let random, let bound):
            "the key for client random \(random) appeared in the key log too late for the bound of "
                + "\(Self.words(seconds: bound)): its records were not decrypted; raise the bound with --keylog-wait SECONDS"
        case .recordsWithoutServerHello(let direction, let records):
            "\(records) TLS \(direction.label) record(s) not decrypted: the server's hello was never seen"
        case .holdLimitPassed(let limit, let waitingForServerHello, let random):
            "TLS records waiting for \(waitingForServerHello ? "the ServerHello" : "their key") passed "
                + "\(limit.description) (client random \(random)); "
                + (waitingForServerHello ? "later records are dropped" : "they and later records are not decrypted")
        case .streamLost(let direction, let length, let offset):
            "TLS \(direction.label) stream lost \(length) bytes at offset \(offset); record boundaries and sequence "
                + "numbers are unknown after it, so the rest of this direction is not decrypted"
        case .notARecord(let direction, let offset, let type, let version, let length, let maxLength):
            "TLS \(direction.label) stream offset \(offset): not a TLS record (type \(type), version "
                + "0x\(String(version, radix: 16)), length \(length), at most \(maxLength) allowed); the rest of this "
                + "direction is not decrypted"
        case .authenticationFailed(let direction, let offset, let length):
            "TLS \(direction.label) record at stream offset \(offset) (\(length) bytes) failed authentication: wrong "
                + "key in the key log, or corrupted bytes; skipped"
        case .malformedRecord(let direction, let offset, let reason):
            "TLS \(direction.label) record at stream offset \(offset): \(reason); skipped"
        case .keyLog(let warning):
            warning.description
        }
    }
}

/// Why a record that was read whole could not be opened, apart from its authentication.
public enum MalformedRecord: Sendable, Hashable, CustomStringConvertible {
    /// Fewer bytes than the cipher's nonce, tag and content type take.
    case tooShort(length: Int, needs: Int, scheme: String)
    /// A TLS 1.3 record that decrypted to zeros only: no content type.
    case allPadding
    /// CBC opening asked of a suite that is not CBC.
    case notCBCSuite
    /// A CBC record that is not an IV plus whole AES blocks (plus a MAC with encrypt-then-MAC).
    case notWholeBlocks(length: Int, withMAC: Bool)

    public var description: String {
        switch self {
        case .tooShort(let length, let needs, let scheme):
            "\(length) bytes is too short for a \(scheme) record (needs at least \(needs))"
        case .allPadding:
            "decrypted TLS 1.3 record has no content type (all padding)"
        case .notCBCSuite:
            "not a CBC suite"
        case .notWholeBlocks(let length, let withMAC):
            "\(length) bytes is not an IV plus whole AES blocks\(withMAC ? " plus a MAC" : "")"
        }
    }
}

extension TLSConnectionWarning.HoldLimit: CustomStringConvertible {
    public var description: String {
        switch self {
        case .perConnection(let bytes): "\(bytes) bytes"
        case .inAll(let bytes): "\(bytes) bytes held for all connections"
        case .onDisk(let bytes): "\(bytes) bytes held on disk for all connections"
        }
    }
}
