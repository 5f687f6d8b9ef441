import Foundation
import LinkConditioner
import TestSupport
import Synchronization

/// A small stand-in for the kernel's view of links and qdiscs, driven by the same `tc`/`ip` argument arrays the
/// conditioner runs, so apply, switch, off and rollback can be checked without root. Commands are recorded by
/// the `RecordingRunner` it backs; `failOn` makes one changing command fail, as the kernel would.
final class FakeNetwork: Sendable {
    struct Qdisc: Equatable {
        var kind: String
        var handle: String
        var parent: String?  // nil = root
        var options: String = "{}"
    }

    struct State {
        var links: Set<String>
        var qdiscs: [String: [Qdisc]] = [:]
        var redirects: [String: String] = [:]  // interface -> ifb
        var changes = 0
        var failOn: Int?
        var failWhen: (@Sendable ([String]) -> Bool)?
        /// How many `tc -batch` runs there were.
        var batches = 0
    }

    let state: Mutex<State>
    let netemAvailable: Bool

    init(links: [String] = ["eth0"], netem: Bool = true) {
        state = Mutex(State(links: Set(links)))
        netemAvailable = netem
    }

    func setRoot(_ device: String, _ qdisc: Qdisc) {
        state.withLock { $0.qdiscs[device, default: []].removeAll { $0.parent == nil }; $0.qdiscs[device, default: []].append(qdisc) }
    }

    /// Makes the n-th changing command (1-based, counting from now) fail.
    func failOnChange(_ n: Int) { state.withLock { $0.failOn = $0.changes + n } }
    func failWhen(_ predicate: @escaping @Sendable ([String]) -> Bool) { state.withLock { $0.failWhen = predicate } }

    var snapshot: State { state.withLock { $0 } }

    func qdiscsJSON(_ device: String) -> String {
        state.withLock { state in
            var entries: [String] = []
            let list = state.qdiscs[device] ?? []
            if !list.contains(where: { $0.parent == nil }) {
                entries.append(#"{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{}}"#)
            }
            for q in list {
                if q.parent == nil {
                    entries.append(#"{"kind":"\#(q.kind)","handle":"\#(q.handle)","root":true,"refcnt":2,"options":\#(q.options)}"#)
                } else {
                    entries.append(#"{"kind":"\#(q.kind)","handle":"\#(q.handle)","parent":"\#(q.parent!)","options":\#(q.options)}"#)
                }
            }
            return "[" + entries.joined(separator: ",") + "]"
        }
    }

    func runner() -> RecordingRunner {
        RecordingRunner(handler: { [self] arguments in self.handle(arguments) })
    }

    private func fail(_ message: String) -> CommandResult { CommandResult(status: 2, stderr: message) }

    func handle(_ a: [String]) -> CommandResult? {
        // `tc -batch FILE`: each line is a tc command, run in order until the first that fails, as tc does.
        if a.count == 3, a[0] == "tc", a[1] == "-batch" {
            state.withLock { $0.batches += 1 }
            guard let text = try? String(contentsOfFile: a[2], encoding: .utf8) else { return fail("Cannot open file \"\(a[2])\"") }
            for (number, line) in text.split(separator: "\n").enumerated() {
                let result = handle(["tc"] + line.split(separator: " ").map(String.init)) ?? CommandResult()
                if result.status != 0 {
                    return CommandResult(status: 1, stderr: result.stderr + "\nCommand failed \(a[2]):\(number + 1)\n")
                }
            }
            return CommandResult()
        }
        // Queries
        if a.starts(with: ["ip", "link", "show", "dev"]) {
            return state.withLock { $0.links.contains(a[4]) } ? CommandResult(stdout: "1: \(a[4])") : fail("Device \"\(a[4])\" does not exist.")
        }
        if a.starts(with: ["tc", "-j", "qdisc", "show", "dev"]) || a.starts(with: ["tc", "-s", "-j", "qdisc", "show", "dev"]) {
            let device = a[a.count - 1]
            guard state.withLock({ $0.links.contains(device) }) else { return fail("Cannot find device \"\(device)\"") }
            return CommandResult(stdout: qdiscsJSON(device))
        }
        if a.starts(with: ["tc", "-j", "filter", "show", "dev"]) {
            let to = state.withLock { $0.redirects[a[5]] }
            return CommandResult(stdout: to.map { #"[{"options":{"actions":[{"kind":"mirred","to_dev":"\#($0)"}]}}]"# } ?? "[]")
        }
        if a.starts(with: ["tc", "class", "show"]) { return CommandResult() }
        if a.first == "unshare" { return netemAvailable ? CommandResult() : fail("Error: Specified qdisc kind is unknown.") }
        // No user-space engine here: its table and queue rules are never there.
        if a.starts(with: ["nft", "list", "table"]) { return fail("Error: No such file or directory") }
        if a.first?.hasSuffix("tables-nft") == true && a.contains("-C") { return fail("iptables: No chain/target/match by that name.") }

        // Changes
        return state.withLock { state -> CommandResult in
            state.changes += 1
            if state.failOn == state.changes || state.failWhen?(a) == true {
                return CommandResult(status: 2, stderr: "RTNETLINK answers: injected failure")
            }
            // The user-space engine's table, queue rules and process: accepted, not modelled.
            if a.first == "nft" || a.first?.hasSuffix("tables-nft") == true || a.contains("__engine") { return CommandResult() }
            if a.starts(with: ["ip", "link", "add"]) {
                guard !state.links.contains(a[3]) else { return CommandResult(status: 2, stderr: "RTNETLINK answers: File exists") }
                state.links.insert(a[3])
                return CommandResult()
            }
            if a.starts(with: ["ip", "link", "del", "dev"]) {
                guard state.links.remove(a[4]) != nil else { return CommandResult(status: 1, stderr: "Cannot find device") }
                state.qdiscs[a[4]] = nil
                return CommandResult()
            }
            if a.starts(with: ["ip", "link", "set"]) { return CommandResult() }
            guard a.count > 4, a[0] == "tc", a[3] == "dev" else { return CommandResult(status: 1, stderr: "unknown command") }
            let device = a[4]
            guard state.links.contains(device) else { return CommandResult(status: 1, stderr: "Cannot find device \"\(device)\"") }
            var list = state.qdiscs[device] ?? []
            defer { state.qdiscs[device] = list }
            switch (a[1], a[2]) {
            case ("qdisc", "add"), ("qdisc", "replace"):
                if a[5] == "root" {
                    if a[2] == "add", list.contains(where: { $0.parent == nil }) {
                        return CommandResult(status: 2, stderr: "Error: Exclusivity flag on, cannot modify.")
                    }
                    list.removeAll { $0.parent == nil || ($0.parent != nil && $0.kind != "ingress") }
                    list.append(Qdisc(kind: a[8], handle: a[7], parent: nil))
                } else if a.last == "ingress" {
                    if list.contains(where: { $0.kind == "ingress" }) { return CommandResult(status: 2, stderr: "Error: Exclusivity flag on") }
                    list.append(Qdisc(kind: "ingress", handle: "ffff:", parent: "ffff:fff1"))
                } else if a[5] == "parent" {
                    if a[9] == "netem" && !netemAvailable { return CommandResult(status: 2, stderr: "Error: Specified qdisc kind is unknown.") }
                    list.removeAll { $0.parent == a[6] }
                    list.append(Qdisc(kind: a[9], handle: a[8], parent: a[6]))
                }
            case ("qdisc", "change"):
                guard list.contains(where: { $0.handle == a[8] }) else { return CommandResult(status: 2, stderr: "Error: no such qdisc") }
            case ("qdisc", "del"):
                if a[5] == "root" {
                    guard list.contains(where: { $0.parent == nil }) else { return CommandResult(status: 2, stderr: "Error: Cannot delete qdisc with handle of zero.") }
                    list.removeAll { $0.kind != "ingress" }
                } else if a[5] == "ingress" {
                    guard list.contains(where: { $0.kind == "ingress" }) else { return CommandResult(status: 2, stderr: "Error: Invalid handle.") }
                    list.removeAll { $0.kind == "ingress" }
                    state.redirects[device] = nil
                } else {
                    list.removeAll { $0.parent == a[6] }
                }
            case ("filter", "add"):
                if let index = a.firstIndex(of: "redirect") { state.redirects[device] = a[index + 2] }
            default:
                break
            }
            return CommandResult()
        }
    }
}
