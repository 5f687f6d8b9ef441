import ArgumentParser
import Foundation
import LinkConditioner

struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the exact tc and ip commands apply would run, and those off would run; nothing is run.")

    @OptionGroup var profiles: ProfileOptions
    @Argument(help: "Profile name.") var name: String
    @OptionGroup var interface: InterfaceOption
    @Flag(help: "Show the commands that replace a foreign root and ingress qdisc, as apply --force would.")
    var force = false

    func run() throws {
        let (profile, device) = try report { (try profiles.catalog().profile(named: name), try interface.name) }
        print("# apply \"\(profile.name)\" to \(device)")
        for command in PlanBuilder.applyPlan(profile: profile, interface: device, replaceRoot: force, replaceIngress: force) {
            print(shellQuoted(command))
        }
        print("# off")
        for command in PlanBuilder.teardownPlan(profile: profile, interface: device) {
            print(shellQuoted(command))
        }
        if profile.needsNetem {
            print("# needs netem (for \(Conditioner.netemNeeds(profile))): `condition doctor` says whether this kernel has it")
        }
    }
}
