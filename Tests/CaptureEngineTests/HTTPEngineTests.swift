import CaptureEngine
import Foundation
import HTTPDecoding
import HTTPModel
import PacketCapture
import TestSupport
import TLS
import Testing

/// The engine without the executable: HTTP over TLS inside a CONNECT tunnel, decrypted with the key log, read
/// from a capture of curl through a proxy (Scripts/make-fixtures), checked against what the client itself saw.
@Suite struct HTTPEngineTests {
    static let capture = TestEnvironment.fixtures.appendingPathComponent("lenient/connect-accepted-tls.pcap")
    static let keyLog = TestEnvironment.fixtures.appendingPathComponent("lenient/connect-accepted-tls.keys")

    /// Every event of one run, with `pipeline` for two threads.
    static func events(pipeline: StreamPipelinePolicy?) throws -> (events: [CaptureEvent], notes: [CaptureNote]) {
        var warnings: [TLSKeyLog.Warning] = []
        var options = HTTPEngineOptions()
        options.keys = try TLSKeySource(path: keyLog.path, follow: false, initialWarnings: &warnings)
        options.limits.bodyKeepBytes = 1 << 20
        options.pipeline = pipeline
        let engine = try HTTPEngine(handle: try CaptureHandle.openOffline(capture.path), options: options)
        final class Collected: @unchecked Sendable {
            var events: [CaptureEvent] = []
            var notes: [CaptureNote] = []
        }
        let collected = Collected()
        try engine.run(progress: NoProgress?.none, ended: { #expect($0.live == nil) },
                       note: { collected.notes.append($0) }) { collected.events.append($0) }
        return (collected.events, collected.notes)
    }

    @Test func decryptsHTTPInsideAConnectTunnel() throws {
        let (events, notes) = try Self.events(pipeline: nil)
        #expect(notes.isEmpty)
        let exchanges = events.compactMap { event -> HTTPExchange? in
            if case .http(.exchange(let exchange)) = event { return exchange }
            return nil
        }
        let sessions = events.compactMap { event -> TLSSessionFacts? in
            if case .tls(let session) = event { return session }
            return nil
        }
        try #require(exchanges.count == 2)
        #expect(exchanges[0].request?.method == "CONNECT")
        #expect(exchanges[0].upgrade == "tunnel")
        #expect(sessions.map(\.serverName) == ["tls.inner.test"])
        #expect(sessions.first?.decryption == .decrypted)
        // The inner GET, decrypted: its body is what curl printed (the fixture's manifest, written when it was made).
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: TestEnvironment.fixtures.appendingPathComponent("lenient/manifest.json"))) as? [String: Any]
        let captures = try #require(manifest?["captures"] as? [String: Any])
        let clientSaw = try #require((captures["connect-accepted-tls.pcap"] as? [String: Any])?["client_saw"] as? [String])
        let inner = exchanges[1]
        #expect(inner.request?.method == "GET")
        let body = String(decoding: inner.response?.body.kept ?? [], as: UTF8.self)
        for line in clientSaw.filter({ !$0.isEmpty }).prefix(8) { #expect(body.contains(line)) }
    }

    /// Two threads, with a hand-over after every packet and every other connection decoded by the reading
    /// thread, emit exactly the events one thread does, in the same order.
    @Test func twoThreadsEmitWhatOneDoes() throws {
        var policy = StreamPipelinePolicy()
        policy.everyPacket = true
        policy.share = .everyOther
        let one = try Self.events(pipeline: nil)
        let two = try Self.events(pipeline: policy)
        #expect(one.events.count == 4)
        #expect(one.events == two.events)
        #expect(one.notes == two.notes)
    }
}
