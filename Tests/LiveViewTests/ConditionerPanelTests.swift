import Foundation
import LinkConditioner
@testable import LiveView
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// The panel's rules, against a target that records what it was asked to apply (the real targets are the
/// conditioner library's own code, exercised by LiveViewNamespaceTests).
@Suite struct ConditionerPanelTests {
    final class RecordingTarget: ConditionerTarget {
        let kind: String
        let needsConfirmation: Bool
        let initialProfile: String? = nil
        let applied = NIOLockedValueBox<[String?]>([])
        let restored = NIOLockedValueBox(0)
        init(kind: String = "sandbox", needsConfirmation: Bool = false) {
            self.kind = kind
            self.needsConfirmation = needsConfirmation
        }
        func apply(_ profile: Profile?) throws { applied.withLockedValue { $0.append(profile?.name) } }
        func restore() throws { restored.withLockedValue { $0 += 1 } }
    }

    static let catalog = ProfileCatalog(profiles: [Profile(name: "Slow Net", summary: "slow"), Profile(name: "Edge")])

    func post(_ panel: ConditionerPanel, _ body: String) -> LiveResponse { panel.respond(toSwitch: Array(body.utf8)) }

    @Test func switchesAreAppliedAndRecordedWithTheirTime() throws {
        let target = RecordingTarget()
        let panel = ConditionerPanel(target: target, catalog: Self.catalog, builtInDirectory: nil, isRoot: { true })
        let before = Date()
        #expect(post(panel, #"{"profile": "slow-net"}"#).status == 200)
        #expect(post(panel, #"{"profile": null}"#).status == 200)
        #expect(target.applied.withLockedValue { $0 } == ["Slow Net", nil])
        #expect(panel.switches.map(\.profile) == [nil, "Slow Net", nil])
        #expect(panel.switches.dropFirst().allSatisfy { $0.time >= before && $0.time <= Date() })
        let state = try #require(try JSONSerialization.jsonObject(with: Data(panel.stateDocument())) as? [String: Any])
        #expect((state["profiles"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Slow Net", "Edge"])
        #expect((state["profiles"] as? [[String: Any]])?.first?["source"] as? String == "built-in")
        // Stopping the view puts back what was there.
        #expect(panel.finish() == nil)
        #expect(target.restored.withLockedValue { $0 } == 1)
        #expect(post(panel, #"{"profile": "Edge"}"#).status == 409)
    }

    @Test func switchesAreRefusedWithoutRootConfirmationOrAValidRequest() {
        let target = RecordingTarget(kind: "interface", needsConfirmation: true)
        let notRoot = ConditionerPanel(target: target, catalog: Self.catalog, builtInDirectory: nil, isRoot: { false })
        #expect(post(notRoot, #"{"profile": "Edge", "confirm": true}"#).status == 403)
        let panel = ConditionerPanel(target: target, catalog: Self.catalog, builtInDirectory: nil, isRoot: { true })
        #expect(post(panel, #"{"profile": "Edge"}"#).status == 409)
        #expect(post(panel, #"{"profile": "Edge", "confirm": false}"#).status == 409)
        for bad in ["", "[]", "{}", #"{"profile": 3}"#, #"{"profile": "Edge", "confirm": "yes"}"#, "{\"profile\": \"Ed"] {
            #expect(post(panel, bad).status == 400, "\(bad)")
        }
        #expect(post(panel, #"{"profile": "No Such Profile", "confirm": true}"#).status == 400)
        #expect(target.applied.withLockedValue { $0 }.isEmpty)
        #expect(post(panel, #"{"profile": "Edge", "confirm": true}"#).status == 200)
        #expect(target.applied.withLockedValue { $0 } == ["Edge"])
        // Off only puts back what was there (as `condition off`, which asks nothing): no confirmation needed.
        #expect(post(panel, #"{"profile": null}"#).status == 200)
        #expect(target.applied.withLockedValue { $0 } == ["Edge", nil])
        #expect(post(notRoot, #"{"profile": null}"#).status == 403)
        let offline = ConditionerPanel(unavailable: "reading a file")
        #expect(post(offline, #"{"profile": "Edge"}"#).status == 409)
        #expect(String(decoding: offline.stateDocument(), as: UTF8.self).contains(#""available":false,"reason":"reading a file""#))
    }
}
