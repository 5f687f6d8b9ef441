import FlowReassembly
import Foundation
import HTTPModel
import Testing
@testable import TLS

/// Live equals offline: whatever moment the key log's lines are read, the layer above hears the same calls in the
/// same order as with the complete key log. Pairing needs it: a server's record whose key came first must not be
/// passed on before the client's request that waits for its own key.
@Suite struct LiveOrderTests {
    /// RFC 8448's connection with the key log complete from the start: the order every live run must give.
    static func offlineEvents() -> ([String], RecordingConsumer) {
        var warnings: [TLSKeyLog.Warning] = []
        let harness = Harness(keyLog: TLSKeyLog(text: RFC8448.keyLog(), warnings: &warnings))
        Self.play(harness, between: [:])
        return (harness.inner.events, harness.inner)
    }

    /// The connection in order, running `between[step]` after each step (steps 0 to 5).
    static func play(_ harness: Harness, between: [Int: () throws -> Void]) {
        let steps: [() -> Void] = [
            { harness.send(.clientToServer, RFC8448.clientHelloRecord) },
            { harness.send(.serverToClient, RFC8448.serverHelloRecord + RFC8448.serverFlightRecord) },
            { harness.send(.clientToServer, RFC8448.clientFinishedRecord + RFC8448.clientDataRecord) },
            { harness.send(.serverToClient, RFC8448.ticketRecord + RFC8448.serverDataRecord + RFC8448.serverAlertRecord) },
            {
                harness.send(.clientToServer, RFC8448.clientAlertRecord)
                harness.end(.clientToServer)
                harness.end(.serverToClient)
            },
            { harness.close() },
        ]
        for (index, step) in steps.enumerated() {
            step()
            try? between[index]?()
        }
    }

    /// A followed key log holding the handshake secrets only; `append` adds a line later.
    final class GrowingKeyLog {
        let path = FileManagerPath.temporary("tkt-live-order")
        let source: TLSKeySource

        init() throws {
            let lines = RFC8448.keyLog().split(separator: "\n").filter { $0.contains("HANDSHAKE") }
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            var warnings: [TLSKeyLog.Warning] = []
            source = try TLSKeySource(path: path, follow: true, initialWarnings: &warnings)
            source.recheckInterval = .zero
        }

        func append(_ label: String) throws {
            let line = RFC8448.keyLog().split(separator: "\n").first { $0.hasPrefix(label + " ") }!
            try FileManagerPath.append(line + "\n", to: path)
        }

        deinit { FileManagerPath.remove(path) }
    }

    @Test("the server's key read first: its response still comes after the client's request")
    func serverKeyFirst() throws {
        let (offline, _) = Self.offlineEvents()
        let keys = try GrowingKeyLog()
        let harness = Harness(keys: keys.source)
        Self.play(harness, between: [
            2: { try keys.append("SERVER_TRAFFIC_SECRET_0") },
            3: { try keys.append("CLIENT_TRAFFIC_SECRET_0") },
        ])
        #expect(harness.inner.events == offline)
        #expect(harness.inner.data[.clientToServer] == RFC8448.applicationData)
        #expect(harness.inner.data[.serverToClient] == RFC8448.applicationData)
    }

    @Test("keys logged after the connection closed: it waits for them, then ends as offline")
    func keysAfterTheClose() throws {
        let (offline, _) = Self.offlineEvents()
        let keys = try GrowingKeyLog()
        let harness = Harness(keys: keys.source)
        Self.play(harness, between: [:])
        #expect(harness.inner.closed == 0, "closed before its records were decrypted: \(harness.inner.events)")
        try keys.append("CLIENT_TRAFFIC_SECRET_0")
        try keys.append("SERVER_TRAFFIC_SECRET_0")
        harness.layer.finishWaiting(at: harness.time)
        #expect(harness.inner.events == offline)
    }

    @Test("keys logged after the last packet are used when the capture is idle, without waiting for its end")
    func keysUsedWhenIdle() throws {
        let (offline, _) = Self.offlineEvents()
        let keys = try GrowingKeyLog()
        let harness = Harness(keys: keys.source)
        Self.play(harness, between: [:])
        harness.layer.idle()
        #expect(harness.inner.closed == 0, "nothing new was logged, yet it stopped waiting: \(harness.inner.events)")
        try keys.append("CLIENT_TRAFFIC_SECRET_0")
        try keys.append("SERVER_TRAFFIC_SECRET_0")
        harness.layer.idle()
        #expect(harness.inner.events == offline)
    }

    @Test("records held by all connections together are bounded: past it, a connection stops waiting, as at its own")
    func heldBytesInAllAreBounded() throws {
        let keys = try GrowingKeyLog()
        var limits = TLSDecryptionLimits()
        limits.maxHeldBytesInMemory = 64
        let harness = Harness(keys: keys.source, limits: limits)
        Self.play(harness, between: [:])
        #expect(harness.inner.warnings.contains { $0.contains("passed 64 bytes held for all connections") },
                "\(harness.inner.warnings)")
        #expect(harness.inner.closed == 1, "still waiting past the bound: \(harness.inner.events)")
        #expect(harness.facts.map(\.decryption) == [.noKeyLogged])
    }

    @Test("a key never logged: decided at the end as offline, and said per direction, never dropped silently")
    func keyNeverLogged() throws {
        // Offline: a complete key log without the client's application secret.
        var warnings: [TLSKeyLog.Warning] = []
        let partial = RFC8448.keyLog().split(separator: "\n").filter { !$0.hasPrefix("CLIENT_TRAFFIC_SECRET_0") }
        let offline = Harness(keyLog: TLSKeyLog(text: partial.joined(separator: "\n"), warnings: &warnings))
        Self.play(offline, between: [:])
        let keys = try GrowingKeyLog()
        let live = Harness(keys: keys.source)
        Self.play(live, between: [2: { try keys.append("SERVER_TRAFFIC_SECRET_0") }])
        live.layer.finishWaiting(at: live.time)
        #expect(live.inner.events == offline.inner.events)
        #expect(live.inner.warnings == offline.inner.warnings)
        #expect(live.inner.warningValues.contains { warning in
            guard case .recordsWithoutKey(.clientToServer, records: 2, _, _) = warning.value as? TLSConnectionWarning else {
                return false
            }
            return true
        }, "\(live.inner.warnings)")
        #expect(live.facts.map(\.decryption) == [.noKeyLogged])
    }
}
