import ArgumentParser
import Foundation
import LinkConditioner

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the profiles, built-in and your own.")

    @OptionGroup var profiles: ProfileOptions

    func run() throws {
        let catalog = try report { try profiles.catalog() }
        let fit = KernelFit.probe()
        func here(_ profile: Profile) -> String { fit.verdict(profile).text }
        let rows = catalog.profiles.map { profile in
            if let schedule = profile.schedule {
                // A schedule can run here when every step it names exists and can.
                let steps = try? catalog.stepProfiles(of: schedule, file: profile.source ?? profile.name)
                let here = steps.map { steps in steps.allSatisfy { here($0.profile).hasPrefix("yes") } ? "yes" : "no: needs netem" }
                    ?? "no: a step names no profile (`condition show`)"
                return [profile.name, ProfileDescription.steps(schedule), "(schedule)", "-", here]
            }
            return [profile.name + (profile.isApproximate ? " *" : ""),
             ProfileDescription.short(profile.downlink),
             ProfileDescription.short(profile.uplink),
             profile.dnsDelayMicroseconds > 0 ? "+" + TCUnits.humanTime(microseconds: profile.dnsDelayMicroseconds) : "-",
             here(profile)]
        }
        let header = ["NAME", "DOWNLINK", "UPLINK", "DNS", "HERE"]
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            let line = row.enumerated().map { column, text in
                column == header.count - 1 ? text : text.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
            }.joined()
            print(line)
        }
        if catalog.profiles.contains(where: \.isApproximate) {
            print("\n* approximate: commonly quoted values, not published ones")
        }
        if rows.contains(where: { $0.last != "yes" }) {
            print("HERE: whether this kernel can apply it (`condition doctor` says how to get netem)")
        }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Say what a profile does, in words and numbers.")

    @OptionGroup var profiles: ProfileOptions
    @Argument(help: "Profile name; case, spaces and punctuation are ignored (\"slow-net\" finds \"Slow Net\").")
    var name: String

    func run() throws {
        let catalog = try report { try profiles.catalog(for: name) }
        let profile = try report { try catalog.profile(named: name) }
        print(ProfileDescription.show(profile, here: profile.schedule == nil ? KernelFit.probe().verdict(profile) : nil))
        if let schedule = profile.schedule {
            do { _ = try catalog.stepProfiles(of: schedule, file: profile.source ?? profile.name) } catch {
                print("  Problem:  \(error)")
            }
        }
    }
}
