import Foundation
import LinkConditioner
import NIOConcurrencyHelpers
import Reports
#if canImport(Glibc)
import Glibc
#endif

/// Where the panel's switch acts: the `-- COMMAND` sandbox or the `-i` interface, through the conditioner library's
/// own code (the executable builds it, so the locks, restore and auto-revert are those of `condition`).
public protocol ConditionerTarget: Sendable {
    /// `sandbox` or `interface`.
    var kind: String { get }
    /// The interface's switch changes the whole machine's link: the page must send `"confirm": true` to apply a profile.
    var needsConfirmation: Bool { get }
    /// The profile in force when the view started (nil: none).
    var initialProfile: String? { get }
    /// Applies `profile`, or removes conditioning for nil, as `condition` would; throws what went wrong.
    func apply(_ profile: Profile?) throws
    /// Puts back what was in force when the view started, once the view stops (after a switch from the page).
    func restore() throws
}

extension ConditionerTarget {
    /// A sandbox goes with its command: nothing to put back.
    public func restore() throws {}
}

/// The conditioner's panel: the profile list, the active profile, every switch with its time (the timeline's marks),
/// and the switch itself, refused without root, without confirmation on an interface, and where there is nothing to
/// condition (a file) with the reason.
public final class ConditionerPanel: Sendable {
    public struct Switch: Sendable, Equatable {
        public var time: Date
        public var profile: String?
    }

    private struct State {
        var active: String?
        var switches: [Switch] = []
        /// The target is gone (the command ended): the reason.
        var closed: String?
    }

    private let target: (any ConditionerTarget)?
    private let unavailableReason: String?
    private let catalog: ProfileCatalog
    private let builtInDirectory: String?
    private let state: NIOLockedValueBox<State>
    /// Switches are applied one at a time, in the order they arrived.
    private let switching = NIOLock()
    private let isRoot: @Sendable () -> Bool

    /// Past this many switches the oldest are forgotten (the timeline is bounded like everything else).
    static let switchLimit = 10_000

    public init(target: any ConditionerTarget, catalog: ProfileCatalog, builtInDirectory: URL?,
                isRoot: @escaping @Sendable () -> Bool = { geteuid() == 0 }) {
        self.target = target
        unavailableReason = nil
        self.catalog = catalog
        self.builtInDirectory = builtInDirectory?.standardizedFileURL.path
        self.isRoot = isRoot
        var initial = State(active: target.initialProfile)
        initial.switches.append(Switch(time: Date(), profile: target.initialProfile))
        state = NIOLockedValueBox(initial)
    }

    /// A panel that only says why it cannot act (`-r FILE`: there is no link to condition).
    public init(unavailable reason: String, catalog: ProfileCatalog = ProfileCatalog(), builtInDirectory: URL? = nil) {
        target = nil
        unavailableReason = reason
        self.catalog = catalog
        self.builtInDirectory = builtInDirectory?.standardizedFileURL.path
        isRoot = { geteuid() == 0 }
        state = NIOLockedValueBox(State())
    }

    /// The target went away (the command ended and its sandbox was removed): later switches are refused with `reason`.
    public func close(reason: String) {
        state.withLockedValue { $0.closed = reason }
    }

    public var switches: [Switch] { state.withLockedValue { $0.switches } }

    /// The view stops: when the page switched anything, the target gets back what it had at the start. Returns the
    /// error in words when that failed (the executable says it), nil otherwise.
    public func finish() -> String? {
        guard let target else { return nil }
        return switching.withLock {
            let switched = state.withLockedValue { state in
                defer { state.closed = "the live view stopped" }
                return state.switches.count > 1
            }
            guard switched else { return nil }
            do {
                try target.restore()
                return nil
            } catch {
                return "could not restore \(target.kind) conditioning (\(target.initialProfile ?? "none")): \(error)"
            }
        }
    }

    public var isClosed: Bool { state.withLockedValue { $0.closed != nil } }

    public func stateDocument() -> [UInt8] {
        let state = state.withLockedValue { $0 }
        let reason = unavailableReason ?? state.closed
        var json = TextOutput.memory()
        json.append("{"); json.key("available"); json.bool(reason == nil)
        json.append(","); json.key("reason"); optional(reason, &json)
        json.append(","); json.key("target"); optional(target?.kind, &json)
        json.append(","); json.key("needsConfirmation"); json.bool(target?.needsConfirmation ?? false)
        json.append(","); json.key("root"); json.bool(isRoot())
        json.append(","); json.key("active"); optional(state.active, &json)
        json.append(","); json.key("profiles"); json.append("[")
        // Schedules are left out: the switch applies one set of conditions.
        for (index, profile) in catalog.profiles.filter({ $0.schedule == nil }).enumerated() {
            if index > 0 { json.append(",") }
            json.append("{"); json.key("name"); json.string(profile.name)
            json.append(","); json.key("source"); json.string(source(of: profile))
            json.append(","); json.key("summary"); json.string(profile.summary)
            json.append("}")
        }
        json.append("],"); json.key("switches"); json.append("[")
        for (index, change) in state.switches.enumerated() {
            if index > 0 { json.append(",") }
            json.append("{"); json.key("t"); json.seconds(change.time.timeIntervalSince1970)
            json.append(","); json.key("profile"); optional(change.profile, &json)
            json.append("}")
        }
        json.append("]}")
        return json.bytes
    }

    private func source(of profile: Profile) -> String {
        guard let file = profile.source else { return "built-in" }
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
        return directory == builtInDirectory ? "built-in" : file
    }

    private func optional(_ value: String?, _ json: inout TextOutput) {
        if let value { json.string(value) } else { json.null() }
    }

    /// `POST /api/conditioner` with `{"profile": NAME or null, "confirm": Bool}`.
    public func respond(toSwitch body: [UInt8]) -> LiveResponse {
        guard let target else { return .error(409, unavailableReason ?? "no conditioner here") }
        if let closed = state.withLockedValue({ $0.closed }) { return .error(409, closed) }
        guard isRoot() else {
            return .error(403, "switching profiles changes the network: run capture as root (sudo) to use the panel")
        }
        let request: SwitchRequest
        switch SwitchRequest.parse(body) {
        case .success(let parsed): request = parsed
        case .failure(let problem): return .error(400, problem.message)
        }
        // Confirmation guards a change the user has not seen yet; off only puts back what was there before (as
        // `condition off` asks nothing), and the page's off switch has no dialog.
        if target.needsConfirmation && request.profile != nil && !request.confirm {
            return .error(409, "switching \(target.kind) conditioning affects everything on it: send \"confirm\": true")
        }
        let profile: Profile?
        do {
            profile = try request.profile.map { try catalog.profileWithSettings(named: $0, for: "the live view") }
        } catch {
            return .error(400, "\(error)")
        }
        do {
            try switching.withLock {
                try target.apply(profile)
                state.withLockedValue { state in
                    state.active = profile?.name
                    state.switches.append(Switch(time: Date(), profile: profile?.name))
                    if state.switches.count > Self.switchLimit { state.switches.removeFirst() }
                }
            }
        } catch {
            return .error(500, "could not switch to \(profile?.name ?? "off"): \(error)")
        }
        return .json(stateDocument())
    }
}
