import ArgumentParser
import Foundation
import LinkConditioner

struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the exact tc and ip commands apply would run, and those off would run; nothing is run.")

    @OptionGroup var profiles: ProfileOptions
    @Argument(help: "Profile name; may be left out with fault flags.") var name: String?
    @OptionGroup var interface: InterfaceOption
    @Flag(help: "Show the commands that replace a foreign root and ingress qdisc, as apply --force would.")
    var force = false
    @OptionGroup var targets: TargetOptions
    @OptionGroup var engine: EngineOption
    @OptionGroup(title: "Connection faults") var faults: FaultOptions

    func validate() throws {
        if name == nil && !faults.given {
            throw ValidationError("name a profile (see `condition list`), or give a fault flag such as --refuse reset")
        }
    }

    func run() throws {
        let (profile, device) = try report {
            (try faults.profile(name, catalog: { try profiles.catalog(for: name) }, use: "plan"), try interface.name)
        }
        // A plan is for a fresh interface and needs no root, but a typo in the name should not go unnoticed.
        let runner = ProcessRunner()
        if let shown = try? runner.run(["ip", "link", "show", "dev", device.rawValue]), shown.status != 0 {
            FileHandle.standardError.write(Data(("condition: warning: no interface \"\(device)\" in this network namespace "
                + "(list them with `ip link`); the plan is printed anyway\n").utf8))
        }
        let machineInterface = NetworkNamespace.isInitialNamespace(runner: runner) && device.rawValue != "lo"
        let selection = try report {
            try targets.selection(sshConnection: machineInterface ? ConditionEnvironment.variables["SSH_CONNECTION"] : nil)
        }
        // The record apply would write, and the plans apply and off build from it: the same functions they run.
        var state = ConditionState(interface: device, profile: profile, replacedIngress: force)
        state.selection = selection
        state.mtu = Conditioner.mtu(device, runner: runner)
        // Judged without root from the module lists, as `list` does; apply tries netem for real. apply's choice,
        // except that where neither engine can run, `auto` prints netem's plan with a note instead of apply's refusal.
        let netem = geteuid() == 0 ? LiveKernelSupport().netemAvailable() : LinkConditioner.Doctor().moduleAvailable("sch_netem")
        // The user-space engine's probe (two throwaway namespaces as root) only when the choice depends on it.
        let userspace = { geteuid() == 0 ? LiveKernelSupport().userspaceEngineAvailable() : ProcessRunner.locate("iptables-nft") != nil }
        do {
            state.engine = try engine.engine.engine(for: profile, active: nil, remedy: "", netemAvailable: { netem },
                                                    userspaceAvailable: userspace) ?? .netem
        } catch where engine.engine == .auto {
            state.engine = .netem
        } catch {
            try report { throw error }
        }
        state.engineID = state.engine == .userspace ? "ENGINE-ID" : nil
        state.restampsReceive = state.engine == .userspace && LiveKernelSupport().receiveRestampAvailable() ? true : nil
        print("# apply \"\(profile.name)\" to \(device)" + (profile.source.map { " (profile from \($0))" } ?? ""))
        print("# engine: " + (profile.needsNetem ? state.activeEngine.summary : "htb only (no delay or loss)"))
        if let faults = ProfileDescription.faults(profile.faults) { print("# faults: " + faults) }
        let store = StateStore(directory: ConditionEnvironment.stateDirectory, namespaceID: NetworkNamespace.currentID())
        for command in PlanBuilder.applyPlan(state: state, executable: RevertScheduler.currentExecutable(), store: store,
                                             replaceRoot: force) {
            print(shellQuoted(command))
        }
        print("# off")
        for command in PlanBuilder.offPlan(interface: device, state: state, observed: .afterApplying(state)) {
            print(shellQuoted(command))
        }
        if profile.needsNetem && state.activeEngine == .netem && !netem {
            print("# needs netem (for \(Conditioner.netemNeeds(profile))): `condition doctor` says whether this kernel has it")
        }
    }
}
