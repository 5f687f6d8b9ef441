import FlowReassembly
import Foundation
import HTTPModel
import Testing
@testable import TLS

/// Issue 37: records waiting for a key a followed key log does not have yet wait by time, not by a byte count a
/// fast link fills in a millisecond; past the in-memory bound they wait on disk; a key that is logged is read at
/// once; one logged too late for the bound is named so, not blamed on the program.
@Suite struct KeyWaitTests {
    typealias GrowingKeyLog = LiveOrderTests.GrowingKeyLog

    @Test("records past the in-memory bound wait in an unlinked file and decrypt exactly as offline")
    func heldRecordsSpillToDisk() throws {
        let (offline, _) = LiveOrderTests.offlineEvents()
        let directory = FileManagerPath.temporary("tkt-spill")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { FileManagerPath.remove(directory) }
        let keys = try GrowingKeyLog()
        var limits = TLSDecryptionLimits()
        limits.maxHeldBytesInMemoryPerConnection = 0
        limits.spillDirectory = directory
        let harness = Harness(keys: keys.source, limits: limits)
        LiveOrderTests.play(harness, between: [3: {
            // The file has no name while it is used: nothing to find, nothing to leave behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [])
            try keys.append("CLIENT_TRAFFIC_SECRET_0")
            try keys.append("SERVER_TRAFFIC_SECRET_0")
        }])
        harness.layer.finishWaiting(at: harness.time)
        #expect(harness.layer.recordsSpilled > 0)
        #expect(harness.inner.events == offline)
        #expect(harness.facts.map(\.decryption) == [.decrypted])
    }

    @Test("without a spill directory, the in-memory bound stops the wait as before, with its warning")
    func noSpillDirectory() throws {
        let keys = try GrowingKeyLog()
        var limits = TLSDecryptionLimits()
        limits.maxHeldBytesInMemoryPerConnection = 64
        let harness = Harness(keys: keys.source, limits: limits)
        LiveOrderTests.play(harness, between: [:])
        #expect(harness.inner.warningValues.contains { warning in
            guard case .holdLimitPassed(.perConnection(bytes: 64), false, _) = warning.value as? TLSConnectionWarning else { return false }
            return true
        }, "\(harness.inner.warnings)")
    }

    @Test("a key appended while records wait is read at once, not at the next timed look")
    func keyReadWhenTheFileChanges() throws {
        let (offline, _) = LiveOrderTests.offlineEvents()
        let keys = try GrowingKeyLog()
        keys.source.recheckInterval = .seconds(3600)
        let harness = Harness(keys: keys.source)
        LiveOrderTests.play(harness, between: [3: {
            try keys.append("CLIENT_TRAFFIC_SECRET_0")
            try keys.append("SERVER_TRAFFIC_SECRET_0")
        }])
        // inotify's thread counts the change within microseconds; a quiet capture asks every 100 ms.
        let deadline = Date().addingTimeInterval(2)
        while harness.inner.events != offline && Date() < deadline {
            usleep(10_000)
            harness.layer.idle()
        }
        #expect(harness.inner.events == offline)
    }

    @Test("past the bound in time: no key logged within it, and a key logged later is named too late, not missing")
    func keyLoggedTooLate() throws {
        let keys = try GrowingKeyLog()
        var limits = TLSDecryptionLimits()
        limits.keyWait = .seconds(2)
        let harness = Harness(keys: keys.source, limits: limits)
        harness.send(.clientToServer, RFC8448.clientHelloRecord)
        harness.send(.serverToClient, RFC8448.serverHelloRecord + RFC8448.serverFlightRecord)
        harness.send(.clientToServer, RFC8448.clientFinishedRecord + RFC8448.clientDataRecord)
        #expect(harness.facts.isEmpty, "decided before the bound: \(harness.facts)")
        harness.time.seconds += 3
        harness.send(.serverToClient, RFC8448.ticketRecord + RFC8448.serverDataRecord + RFC8448.serverAlertRecord)
        #expect(harness.facts.map(\.decryption) == [.noKeyWithin(seconds: 2)])
        harness.end(.clientToServer)
        harness.end(.serverToClient)
        harness.close()
        try keys.append("CLIENT_TRAFFIC_SECRET_0")
        try keys.append("SERVER_TRAFFIC_SECRET_0")
        harness.layer.finishWaiting(at: harness.time)
        let values = harness.inner.warningValues.compactMap { $0.value as? TLSConnectionWarning }
        #expect(values.contains { if case .recordsAfterKeyWait(.clientToServer, _, _, _, bound: 2) = $0 { true } else { false } }, "\(values)")
        #expect(values.contains { if case .keyLoggedTooLate(_, bound: 2) = $0 { true } else { false } }, "\(values)")
        #expect(!values.contains { if case .recordsWithoutKey = $0 { true } else { false } }, "\(values)")
    }

    @Test("a key never logged within the bound nor later: no late warning")
    func keyNeverLoggedAfterTheBound() throws {
        let keys = try GrowingKeyLog()
        let harness = Harness(keys: keys.source)
        LiveOrderTests.play(harness, between: [2: { harness.time.seconds += 3 }])
        harness.layer.finishWaiting(at: harness.time)
        let values = harness.inner.warningValues.compactMap { $0.value as? TLSConnectionWarning }
        #expect(harness.facts.map(\.decryption) == [.noKeyWithin(seconds: 2)])
        #expect(!values.contains { if case .keyLoggedTooLate = $0 { true } else { false } }, "\(values)")
    }

    @Test("offline nothing waits: a key log read once has no bound to wait for")
    func offlineDoesNotWait() throws {
        var warnings: [TLSKeyLog.Warning] = []
        let source = TLSKeySource(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        #expect(TLSDecryptionLimits(for: source).keyWait == .zero)
    }
}
